"""Pilot tests of the mock interview: setup, answering each kind, skip, time running out, quitting, the report."""

import datetime as dt
import json

import pytest
from textual.widgets import Input, OptionList

from drill.start import AppOptions
from drill.ui.app import DrillApp, make_app
from drill.ui.mock_report_screen import MockReportScreen
from drill.ui.mock_screen import END_KEY as END_KEY_PRESS
from drill.ui.mock_screen import MockScreen
from drill.ui.mock_setup import MockSetupScreen
from tests.conftest import FixedClock, refresh, rows, type_keys
from tests.conftest import settle as settle_app
from tests.ui.test_checked import DECK

NOW = dt.datetime(2026, 5, 10, 12, 0)

MORE = """\
  - id: t-concept
    kind: concept
    topic: serving
    prompt: Why does decode bind on memory bandwidth?
    answer: Each token reads every weight once.
    rubric: [weights read per token, batch raises reuse]
    follow_ups: [t-ledger]
    sources: [FACTS.md]
"""


def mock_app(data, deck):
    """The app on `deck` with its data in `data`, at NOW, with the mock's draws seeded."""
    return make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=4))


async def settle(pilot):
    await settle_app(pilot, pauses=2)


async def open_mock(pilot, app, minutes="30", questions=""):
    await type_keys(pilot, "ctrl+o")
    await settle(pilot)
    assert isinstance(app.screen, MockSetupScreen)
    box = app.screen.query_one("#minutes", Input)
    box.value = minutes
    app.screen.query_one("#questions", Input).value = questions
    await refresh(pilot)
    app.screen.query_one("#mix", OptionList).focus()
    await type_keys(pilot, "enter")
    await settle(pilot)
    assert isinstance(app.screen, MockScreen)
    return app.screen


CONCEPT_ANSWER = "the weights are read once per token, so memory bandwidth bounds decode"


async def answer_current(pilot, screen):
    """Answer the question on screen (a follow-up too), submit it and go on to the next: in a mock the verdict
    and the expected answer are held until it ends, so a checked answer goes straight on."""
    card = screen.card
    if card.kind == "concept":
        await type_keys(pilot, *CONCEPT_ANSWER, "enter")
        await type_keys(pilot, "space", "enter")  # tick the first rubric point (if the answer names it), go on
    elif card.kind == "shape_trace":
        for box in screen.form.inputs():
            box.value = "(B, S, D)"
        screen.form.inputs()[-1].focus()
        await type_keys(pilot, "enter")
    elif card.kind == "memory_ledger":
        await type_keys(pilot, "enter", *"1.5625 GiB", "enter")  # no working: on to the answer
    elif card.kind == "diagnosis":
        await type_keys(pilot, "tab", *"memory-bound: DRAM near peak while SMs idle", "enter")
        await type_keys(pilot, *"fuse the neighbouring elementwise op and re-measure DRAM bytes", "enter")
        await type_keys(pilot, "space", "enter")
    await settle(pilot)


async def test_a_mock_from_setup_to_report(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = mock_app(data, deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        kinds = [s.kind for s in screen.run.slots]
        assert {"memory_ledger", "diagnosis", "shape_trace"} <= set(kinds)
        answered = 0
        follow_ups = 0
        while isinstance(app.screen, MockScreen) and answered < 10:
            assert not screen.query_one("#manswer").has_class("shown")  # held until the mock ends
            follow_ups += screen.follow is not None
            await answer_current(pilot, screen)
            answered += 1
        assert isinstance(app.screen, MockReportScreen)
        report = app.screen.report
        planned = answered - follow_ups
        assert report.status == "finished" and report.answered == report.total == planned == 4
        by_kind = {q["kind"]: q for q in report.questions}
        assert by_kind["memory_ledger"]["score"] == 1.0 and by_kind["diagnosis"]["score"] == 1.0
        assert by_kind["shape_trace"]["score"] == 1 / 3 and by_kind["shape_trace"]["missed"]
        assert by_kind["concept"]["score"] == 0.5 and by_kind["concept"]["missed"] == ["batch raises reuse"]
        assert by_kind["concept"]["answer"] == CONCEPT_ANSWER
        # the two weak answers each got a hint and a narrower question, answered no better: their scores stand
        assert follow_ups == 2
        assert by_kind["concept"]["follow_up"]["kind"] == "narrower"
        assert by_kind["shape_trace"]["follow_up"]["hint"] == "the step before it is `(B, S, D)`"
        await type_keys(pilot, "ctrl+w")
        await refresh(pilot)
        assert (data / "reports" / f"mock-{report.id}.html").exists()
    ((status, stored),) = rows(data, "SELECT status, report FROM mock")
    assert status == "finished" and json.loads(stored)["total"] == planned
    logged = rows(data, "SELECT card_id, mode FROM review_log")
    assert len(logged) == planned and {m for _, m in logged} == {"mock"}  # a narrower question: the same card
    # the shape trace (1/3) and the concept (1 of 2 points) failed: due tomorrow; the passes stay new
    due = dict(rows(data, "SELECT card_id, due FROM card_state WHERE due IS NOT NULL"))
    assert due == {"t-shape": "2026-05-11", "t-concept": "2026-05-11"}


async def run_out_of_time(pilot, screen, minutes=20):
    """Move the mock's clock past its deadline and let the screen's next tick see it."""
    screen.run.started -= minutes * 60 + 1
    await screen.tick()
    await settle(pilot)


async def test_skip_then_quit_keeps_what_was_typed_unscored(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = mock_app(data, deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        first = screen.slot.card_id
        screen.query(Input).first().value = "half an answer"  # every kind of question has a field
        await type_keys(pilot, "ctrl+n")
        await settle(pilot)
        assert screen.slot.card_id != first
        while screen.slot.card_id != first:  # skip round until the first question comes back
            await type_keys(pilot, "ctrl+n")
            await settle(pilot)
        assert screen.query(Input).first().value == "half an answer"  # what was typed is still there
        await type_keys(pilot, "ctrl+q", "ctrl+q")  # the first one warns
        await settle(pilot)
    ((status,),) = rows(data, "SELECT status FROM mock")
    assert status == "abandoned"  # nothing was submitted
    statuses = dict(rows(data, "SELECT card_id, status FROM mock_answer"))
    # the answer on screen at the quit was never submitted: kept with its question, which stays unanswered
    assert set(statuses.values()) == {"unanswered"}
    ((answer,),) = rows(data, "SELECT answer FROM mock_answer WHERE card_id = ?", (first,))
    assert "half an answer" in answer and '"submitted": false' in answer


async def test_an_answer_typed_when_time_runs_out_is_kept_not_scored(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = mock_app(data, deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        await answer_current(pilot, screen)
        if screen.follow is not None:  # a follow-up earned: declined (ctrl+n), the question keeps its score
            await type_keys(pilot, "ctrl+n")
            await settle(pilot)
        assert screen.follow is None
        second = screen.slot.card_id
        screen.query(Input).first().value = "typed, never submitted"
        await run_out_of_time(pilot, screen)
        report = app.screen.report
        assert report.status == "time_up" and report.answered == 1
        assert report.unanswered == report.total - 1
        [asked] = [q for q in report.questions if q["card_id"] == second]
        assert asked["status"] == "unanswered" and "typed, never submitted" in asked["answer"]
        assert "never submitted: not scored" in asked["answer"]
    statuses = dict(rows(data, "SELECT card_id, status FROM mock_answer"))
    assert statuses[second] == "unanswered"
    ((answer,),) = rows(data, "SELECT answer FROM mock_answer WHERE card_id = ?", (second,))
    assert "typed, never submitted" in answer
    assert rows(data, "SELECT count(*) FROM review_log") == [(1,)]  # the submitted answer only


async def test_time_running_out_ends_the_mock(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = mock_app(data, deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        await answer_current(pilot, screen)
        await run_out_of_time(pilot, screen)
        assert isinstance(app.screen, MockReportScreen)
        assert app.screen.report.status == "time_up"
        assert app.screen.report.unanswered == app.screen.report.total - 1
        await type_keys(pilot, "q")
        await settle(pilot)
        assert not isinstance(app.screen, (MockReportScreen, MockScreen))


async def test_setup_shows_the_plan_and_refuses_a_bad_length(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    app = mock_app(tmp_path / "d", deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+o")
        await settle(pilot)
        screen = app.screen
        await type_keys(pilot, "backspace", "backspace", "0")
        await refresh(pilot)
        assert screen.plan is None and "1 to 600" in str(screen.query_one("#splan").render())
        await type_keys(pilot, "backspace", "1", "5")
        await refresh(pilot)
        assert screen.plan is not None and screen.plan.planned_minutes <= 15
        await type_keys(pilot, "escape")
        await settle(pilot)
        assert not isinstance(app.screen, MockSetupScreen)


async def test_a_rubric_point_not_ticked_shows_an_empty_box():
    from textual.app import App

    from drill.ui.rubric_ticks import Checklist

    class One(App[None]):
        def compose(self):
            yield Checklist(("names the roofline", 0), ("measures it", 1), id="list")

    app = One()
    async with app.run_test(size=(60, 6)) as pilot:
        checklist = app.query_one(Checklist)
        checklist.select(1)
        await refresh(pilot)
        lines = [checklist.render_line(y).text for y in range(2)]
        assert lines[0].startswith("▐ ▌") and "names the roofline" in lines[0]
        assert lines[1].startswith("▐X▌") and "measures it" in lines[1]


async def test_a_concept_answer_typed_but_never_assessed_is_kept_not_scored_zero(tmp_path, write_deck):
    concepts = "cards:\n" + "".join(
        f'  - {{id: q{i}, kind: concept, topic: gpu-arch, prompt: "Q{i}?", answer: "A{i}.", rubric: [one, two],'
        f" sources: [s]}}\n"
        for i in range(4)
    )
    data = tmp_path / "d"
    app = mock_app(data, write_deck(concepts))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        first = screen.slot.card_id
        screen.query(Input).first().value = "an answer whose rubric was never shown"
        await type_keys(pilot, "ctrl+q", "ctrl+q")
        await settle(pilot)
    statuses = dict(rows(data, "SELECT card_id, status FROM mock_answer"))
    assert set(statuses.values()) == {"unanswered"}  # not "answered" with 0 % for points never offered to tick
    ((answer,),) = rows(data, "SELECT answer FROM mock_answer WHERE card_id = ?", (first,))
    assert "an answer whose rubric was never shown" in answer and '"submitted": false' in answer
    assert rows(data, "SELECT count(*) FROM review_log WHERE mode = 'mock'") == [(0,)]  # the schedule is untouched


async def test_a_burst_of_space_and_down_ticks_each_rubric_point_it_passes():
    from textual import events
    from textual.app import App

    from drill.ui.rubric_ticks import Checklist

    class One(App[None]):
        def compose(self):
            yield Checklist(("one", 0), ("two", 1), ("three", 2), id="list")

    app = One()
    async with app.run_test(size=(60, 6)) as pilot:
        checklist = app.query_one(Checklist)
        checklist.focus()
        await refresh(pilot)
        for key in ["space", "down", "space", "down", "space"]:  # all queued before any is handled
            app.post_message(events.Key(key, " " if key == "space" else None))
        await refresh(pilot)
        await refresh(pilot)
        assert sorted(checklist.selected) == [0, 1, 2]


async def test_a_burst_from_the_evidence_into_a_mock_diagnosis_loses_nothing(tmp_path, write_deck):
    from textual import events

    diag = DECK[DECK.index("  - id: t-diag") :]
    deck = "cards:\n" + "".join(diag.replace("id: t-diag", f"id: t-diag{i}") for i in range(3))
    app = mock_app(tmp_path / "d", write_deck(deck))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        assert screen.slot.kind == "diagnosis" and screen.focused is screen.query_one("#mbody")
        for key in ["tab", *"memory-bound", "enter", *"fuse it"]:  # all queued at once
            app.post_message(events.Key({" ": "space"}.get(key, key), key if len(key) == 1 else None))
        await settle(pilot)
        assert screen.query_one("#reading", Input).value == "memory-bound"
        assert screen.query_one("#experiment", Input).value == "fuse it"


def warnings_with(app, words):
    return [n.message for n in app._notifications if words in n.message]


async def test_ctrl_q_mid_mock_asks_first_and_a_second_ctrl_q_quits(tmp_path, write_deck):
    data = tmp_path / "d"
    app = mock_app(data, write_deck(DECK + MORE))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        await type_keys(pilot, "ctrl+q")
        await settle(pilot)
        assert app.is_running and app.screen is screen  # one ctrl+q only warns
        [warning] = warnings_with(app, "ctrl+q again")
        assert "mock" in warning
        assert rows(data, "SELECT status FROM mock") == [("running",)]
        await type_keys(pilot, "ctrl+q")
        await settle(pilot)
        assert not app.is_running


async def test_a_mock_quit_with_no_answer_is_abandoned_and_leaves_every_weakness_as_it_was(
    tmp_path, write_deck, capsys
):
    from drill.cli import main
    from drill.workspace import read_weakness

    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = mock_app(data, deck)
    before = {t.topic: t.weakness for t in read_weakness(app.session.cards, data, NOW.date())}
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        screen.query(Input).first().value = "typed, never submitted"
        await type_keys(pilot, "ctrl+q", "ctrl+q")
        await settle(pilot)
        assert not app.is_running
    assert rows(data, "SELECT status, score FROM mock") == [("abandoned", None)]
    assert {s for (s,) in rows(data, "SELECT status FROM mock_answer")} == {"unanswered"}
    after = {t.topic: t.weakness for t in read_weakness(app.session.cards, data, NOW.date())}
    assert after == before
    assert main(["--data-dir", str(data), "--decks", str(deck), "mock", "--list"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert "abandoned" in row and row.rstrip().endswith("-")  # not scored, not 0 %


def test_the_end_key_means_nothing_anywhere_else():
    from textual.widgets import TextArea

    from drill.ui.browser import BrowserScreen
    from drill.ui.kernel_screen import KernelScreen
    from drill.ui.mock_screen import END_KEY
    from drill.ui.review import ReviewScreen
    from drill.ui.stats_screen import StatsScreen

    elsewhere = [DrillApp, ReviewScreen, StatsScreen, BrowserScreen, KernelScreen, MockSetupScreen, MockReportScreen]
    fields = [Input, TextArea, OptionList]  # a key a focused field takes never reaches the screen
    keys = {k.strip() for cls in elsewhere + fields for b in cls.BINDINGS for k in b.key.split(",")}
    assert END_KEY not in keys


async def test_the_end_key_asks_before_it_ends_the_mock(tmp_path, write_deck):
    from drill.ui.mock_screen import END_KEY

    app = mock_app(tmp_path / "d", write_deck(DECK + MORE))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        await type_keys(pilot, END_KEY)
        await settle(pilot)
        assert app.screen is screen and screen.run.status == "running"
        assert warnings_with(app, f"{END_KEY} again")
        await type_keys(pilot, END_KEY)
        await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
        assert app.screen.report.status == "abandoned" and app.screen.report.score is None


async def test_a_half_typed_answer_not_submitted_is_kept_but_not_scored(tmp_path, write_deck):
    from drill.ui.mock_screen import END_KEY

    shapes = DECK[: DECK.index("  - id: t-ledger")]
    deck = shapes + shapes[len("cards:\n") :].replace("id: t-shape", "id: t-shape2")
    data = tmp_path / "d"
    app = mock_app(data, write_deck(deck))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        first = screen.slot.card_id
        await type_keys(pilot, *"(B, S, D)", "enter", *"(B, H")  # one step and a half, never submitted
        await type_keys(pilot, END_KEY, END_KEY)
        await settle(pilot)
        report = app.screen.report
        assert report.answered == 0 and report.status == "abandoned"
    assert rows(data, "SELECT status, score FROM mock_answer WHERE card_id = ?", (first,)) == [("unanswered", None)]
    ((answer,),) = rows(data, "SELECT answer FROM mock_answer WHERE card_id = ?", (first,))
    assert "(B, H" in answer  # what was typed is kept with the question
    assert rows(data, "SELECT count(*) FROM review_log") == [(0,)]  # nothing graded, the schedule untouched


async def test_a_concept_question_stays_in_view_while_its_points_are_ticked(tmp_path, write_deck):
    answer = " ".join(f"Sentence {i} of a long expected answer." for i in range(60))
    concepts = "cards:\n" + "".join(
        f'  - {{id: q{i}, kind: concept, topic: gpu-arch, prompt: "Why does question {i} matter?",'
        f' answer: "{answer}", rubric: [one, two, three], sources: [s]}}\n'
        for i in range(4)
    )
    app = mock_app(tmp_path / "d", write_deck(concepts))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        screen.query(Input).first().focus()
        await type_keys(pilot, *"because it bounds the step", "enter")
        await settle(pilot)
        body = screen.query_one("#mbody")
        prompt = screen.query_one("#mprompt")
        rubric = screen.query_one("#mrubric")
        assert rubric.has_focus
        # the question is still on screen above the points to tick (it once scrolled away under the verdict)
        assert body.region.y <= prompt.region.y < rubric.region.y < body.region.bottom


COST_DECK = """\
cards:
  - id: cost
    kind: concept
    topic: capacity-cost
    prompt: What sets the cost of serving a model, and how would you lower it?
    answer: Realised tokens per GPU-hour set it; utilisation is the lever.
    rubric:
      - Realised tokens per GPU-hour, not benchmark peak, sets cost
      - Utilisation / autoscaling as the dominant lever
      - Batch at SLO, bytes per token (quantisation), prefix caching
      - TP degree and its all-reduce cost
    sources: [FACTS.md]
"""


COST_POINTS = [
    "Realised tokens per GPU-hour, not benchmark peak, sets cost",
    "Utilisation / autoscaling as the dominant lever",
    "Batch at SLO, bytes per token (quantisation), prefix caching",
    "TP degree and its all-reduce cost",
]


def cost_deck(write_deck, copies=3):
    body = COST_DECK[len("cards:\n") :]
    return write_deck("cards:\n" + "".join(body.replace("id: cost", f"id: cost{i}") for i in range(copies)))


async def tick_every_point(pilot, screen):
    points = screen.query_one("#mrubric").option_count
    for i in range(points):
        await type_keys(pilot, "space", *(["down"] if i < points - 1 else []))
    await refresh(pilot)


async def test_the_one_word_answer_cost_ticks_no_point_and_scores_none(tmp_path, write_deck):
    data = tmp_path / "d"
    app = mock_app(data, cost_deck(write_deck))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        first = screen.slot.card_id
        await type_keys(pilot, *"cost", "enter")
        await settle(pilot)
        rubric = screen.query_one("#mrubric")
        assert rubric.has_focus and not screen.query_one("#manswer").has_class("shown")  # titles only
        await tick_every_point(pilot, screen)
        assert list(rubric.selected) == []  # not one point takes a tick
        assert warnings_with(app, "your answer has 1 of the 8 words a point needs")
        await type_keys(pilot, "o")  # nor by override: no reason stands in for an answer that says too little
        await settle(pilot)
        assert not screen.query_one("#mreason").has_class("shown") and list(rubric.selected) == []
        await type_keys(pilot, "enter")
        await settle(pilot)
        await type_keys(pilot, END_KEY_PRESS, END_KEY_PRESS)
        await settle(pilot)
        report = app.screen.report
    [asked] = [q for q in report.questions if q["card_id"] == first]
    assert asked["status"] == "answered" and asked["score"] == 0.0 and len(asked["missed"]) == 4


async def test_a_point_is_ticked_for_the_terms_it_names_or_by_an_override_with_a_reason(tmp_path, write_deck):
    data = tmp_path / "d"
    app = mock_app(data, cost_deck(write_deck))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        first = screen.slot.card_id
        await type_keys(pilot, *"keep the fleet busy with autoscaling on traffic, and batch what you can", "enter")
        await settle(pilot)
        rubric = screen.query_one("#mrubric")
        await tick_every_point(pilot, screen)
        assert sorted(rubric.selected) == [1, 2]  # autoscaling, batch: the points the answer names
        await type_keys(pilot, "up", "up", "up")  # to the first point, which it does not name
        await type_keys(pilot, "o", *"busy GPUs are realised tokens", "enter")
        await settle(pilot)
        assert sorted(rubric.selected) == [0, 1, 2] and rubric.has_focus
        await type_keys(pilot, "enter")
        await settle(pilot)
        await type_keys(pilot, END_KEY_PRESS, END_KEY_PRESS)
        await settle(pilot)
        report = app.screen.report
    [asked] = [q for q in report.questions if q["card_id"] == first]
    assert asked["score"] == 0.75 and asked["evidence"] == 0.5
    assert asked["overrides"] == [
        {"point": COST_POINTS[0], "basis": "overridden", "reason": "busy GPUs are realised tokens"}
    ]
    # the weakness figures read the graded evidence: the overridden point is not in it
    ((score, answer),) = rows(data, "SELECT score, answer FROM mock_answer WHERE card_id = ?", (first,))
    assert score == 0.5 and json.loads(answer)["score"] == 0.75


async def test_practice_mode_shows_the_answer_after_the_ticks_and_then_they_are_final(tmp_path, write_deck):
    app = mock_app(tmp_path / "d", cost_deck(write_deck))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+o")
        await settle(pilot)
        await type_keys(pilot, "ctrl+t")  # practice mode
        await refresh(pilot)
        assert "practice mode" in str(app.screen.query_one("#stop").render())
        app.screen.query_one("#mix", OptionList).focus()
        await type_keys(pilot, "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MockScreen) and screen.practice
        await type_keys(pilot, *"keep the fleet busy with autoscaling on traffic, and batch what you can", "enter")
        await settle(pilot)
        await type_keys(pilot, "down", "space")
        rubric = screen.query_one("#mrubric")
        assert sorted(rubric.selected) == [1] and not screen.query_one("#manswer").has_class("shown")
        await type_keys(pilot, "enter")  # the verdict and the expected answer
        await settle(pilot)
        assert screen.query_one("#manswer").has_class("shown")
        assert "25%" in str(screen.query_one("#mverdict").render())
        rubric.focus()
        await type_keys(pilot, "down", "space", "o")
        await settle(pilot)
        assert sorted(rubric.selected) == [1]  # the answer is shown: the ticks cannot change
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert screen.stage.value == "answering" and not screen.query_one("#manswer").has_class("shown")


DIAG_DECK = """\
cards:
  - id: d0
    kind: diagnosis
    topic: profiling
    evidence: |
      dram__throughput.avg.pct_of_peak_sustained_elapsed   92.1 %
      sm__throughput.avg.pct_of_peak_sustained_elapsed     11.4 %
    prompt: What bounds this kernel?
    choices: [compute-bound, memory-bound, communication-bound]
    correct: memory-bound
    answer: DRAM is near peak while the SMs idle.
    rubric: [fuse the neighbouring elementwise op and re-measure DRAM bytes]
    sources: [FACTS.md]
"""


async def test_a_mock_diagnosis_is_read_in_words_first_and_the_listed_readings_cost(tmp_path, write_deck):
    body = DIAG_DECK[len("cards:\n") :]
    deck = write_deck("cards:\n" + body + body.replace("id: d0", "id: d1"))
    app = mock_app(tmp_path / "d", deck)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        assert not screen.query_one("#choices").display  # no list to recognise a reading from
        await type_keys(pilot, "tab", *"the GPU is slow", "enter", *"profile it again", "enter")
        await settle(pilot)
        assert "names none of the bottlenecks" in str(screen.query_one("#mverdict").render())
        assert screen.stage.value == "answering"  # sent back, nothing graded
        await type_keys(pilot, "ctrl+o")
        await settle(pilot)
        assert screen.query_one("#choices").display and warnings_with(app, "costs 20% of this question")
        order = screen.form.choices
        await type_keys(pilot, *["down"] * order.index("memory-bound"), "enter")
        screen.query_one("#experiment", Input).focus()
        await type_keys(pilot, "enter")
        await settle(pilot)
        await type_keys(pilot, "enter")  # no point ticked
        await settle(pilot)
        first = screen.run.slots[0]
        assert first.grade.hints == ("the listed readings were shown",)
        assert first.score == pytest.approx(0.5 - 0.2)  # the reading right, from the list; no point ticked
        if screen.follow is not None:  # a narrower question on the missed point: declined
            await type_keys(pilot, "ctrl+n")
            await settle(pilot)
        assert screen.slot is screen.run.slots[1]
        await type_keys(pilot, "tab", *"memory-bound: DRAM at 92 % while the SMs idle", "enter", "enter")
        await settle(pilot)
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert screen.run.slots[1].score == 0.5 and screen.run.slots[1].grade.hints == ()


async def test_a_strong_answer_earns_a_deeper_follow_up_that_only_adds(tmp_path, write_deck):
    data = tmp_path / "d"
    app = mock_app(data, cost_deck(write_deck, copies=2))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20", questions="1")
        asked = screen.slot
        strong = "realised tokens per GPU hour set it; utilisation with autoscaling; batch at the SLO; TP degree"
        await type_keys(pilot, *strong, "enter")
        await settle(pilot)
        await tick_every_point(pilot, screen)
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert asked.score == 1.0
        follow = screen.follow
        assert screen.slot is asked and follow is not None and follow.kind.value == "deeper"
        assert follow.card.id != asked.card_id and "follow-up" in str(screen.query_one("#mtop").render())
        await type_keys(pilot, *"cost", "enter")  # a weak answer to the deeper question
        await settle(pilot)
        await type_keys(pilot, "enter")
        await settle(pilot)
        report = app.screen.report
    assert report.score == 1.0  # earning the follow-up took nothing away
    assert report.questions[0]["follow_up"]["status"] == "answered"
    assert rows(data, "SELECT count(*) FROM review_log WHERE card_id = ?", (follow.card.id,)) == [(1,)]


async def test_at_80_by_24_a_diagnosis_read_first_then_tabbed_into_shows_its_field_and_how_to_answer(
    tmp_path, write_deck
):
    evidence = "".join(f"      metric_{i:02d}                                  {i}.0 %\n" for i in range(30))
    deck = write_deck(DIAG_DECK.replace("    evidence: |\n", "    evidence: |\n" + evidence))
    app = mock_app(tmp_path / "d", deck)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        bar = screen.query_one("#mbar")
        page = screen.query_one("#mbody")
        assert app.focused is page and "to answer" in str(bar.render())  # the evidence is read first
        await type_keys(pilot, "tab", *"memory")
        await settle(pilot)
        field = app.focused
        assert screen.form in field.ancestors and field.value == "memory"
        shown = screen.find_widget(field).region
        assert page.content_region.contains_region(shown)  # what is typed is on screen
        assert "enter on the last field submits" in str(bar.render()) and "to answer" not in str(bar.render())


async def test_declining_the_last_follow_up_asks_first_and_the_key_bar_says_decline(tmp_path, write_deck):
    app = mock_app(tmp_path / "d", cost_deck(write_deck, copies=2))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20", questions="1")
        assert "skip" in str(screen.query_one("#mbar").render())
        strong = "realised tokens per GPU hour set it; utilisation with autoscaling; batch at the SLO; TP degree"
        await type_keys(pilot, *strong, "enter")
        await settle(pilot)
        await tick_every_point(pilot, screen)
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert screen.follow is not None and screen.run.next_slot() is None  # the follow-up is the last question
        assert "decline" in str(screen.query_one("#mbar").render())
        await type_keys(pilot, "ctrl+n")
        await settle(pilot)
        assert app.screen is screen and screen.follow is not None  # not ended: it warned
        assert warnings_with(app, "declining it ends the mock")
        await type_keys(pilot, "ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
        assert app.screen.report.questions[0]["follow_up"]["status"] == "unanswered"


async def test_the_key_bar_says_the_report_is_being_built_before_the_report_comes(tmp_path, write_deck):
    data = tmp_path / "d"
    app = mock_app(data, cost_deck(write_deck, copies=2))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20", questions="1")
        await screen.end()
        # the notice is shown first; the report (seconds of work) is built once it is on screen
        assert "building your report" in str(screen.query_one("#mbar").render())
        assert app.screen is screen and rows(data, "SELECT status FROM mock") == [("running",)]
        await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
    assert rows(data, "SELECT count(*) FROM mock WHERE ended_at IS NOT NULL") == [(1,)]
