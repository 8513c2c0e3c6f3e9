"""Pilot tests of the mock interview: setup, answering each kind, skip, time running out, quitting, the report."""

import datetime as dt
import json

from textual.widgets import Input, OptionList

from drill.ui.app import DrillApp
from drill.ui.mock_screen import MockScreen
from drill.ui.mock_setup import MockReportScreen, MockSetupScreen
from tests.conftest import FixedClock, refresh, rows, type_keys
from tests.conftest import settle as settle_app
from tests.test_ui_checked import DECK

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


async def settle(pilot):
    await settle_app(pilot, pauses=2)


async def open_mock(pilot, app, minutes="30"):
    await type_keys(pilot, "ctrl+o")
    await settle(pilot)
    assert isinstance(app.screen, MockSetupScreen)
    box = app.screen.query_one("#minutes", Input)
    box.value = minutes
    await refresh(pilot)
    app.screen.query_one("#mix", OptionList).focus()
    await type_keys(pilot, "enter")
    await settle(pilot)
    assert isinstance(app.screen, MockScreen)
    return app.screen


async def answer_current(pilot, screen):
    """Answer the question on screen, submit it and go on to the next."""
    slot = screen.slot
    if slot.kind == "concept":
        await type_keys(pilot, *"weights are read once per token", "enter")
        await type_keys(pilot, "space", "enter")  # tick the first rubric point, go on
    elif slot.kind == "shape_trace":
        for box in screen.query(Input):
            box.value = "(B, S, D)"
        screen.query(Input).last().focus()
        await type_keys(pilot, "enter")
        await type_keys(pilot, "enter")
    elif slot.kind == "memory_ledger":
        await type_keys(pilot, *"1.5625 GiB", "enter", "enter")
    elif slot.kind == "diagnosis":
        await type_keys(pilot, "tab", *["down"] * screen.form.choices.index("memory-bound"), "enter")
        await type_keys(pilot, *"fuse it", "enter")
        await type_keys(pilot, "space", "enter")
    await settle(pilot)


async def test_a_mock_from_setup_to_report(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    data = tmp_path / "d"
    app = DrillApp(data, [deck], clock=FixedClock(NOW), seed=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app)
        kinds = [s.kind for s in screen.run.slots]
        assert {"memory_ledger", "diagnosis", "shape_trace"} <= set(kinds)
        answered = 0
        while isinstance(app.screen, MockScreen) and answered < 10:
            await answer_current(pilot, screen)
            answered += 1
        assert isinstance(app.screen, MockReportScreen)
        report = app.screen.report
        assert report["status"] == "finished" and report["answered"] == report["total"] == answered
        by_kind = {q["kind"]: q for q in report["questions"]}
        assert by_kind["memory_ledger"]["score"] == 1.0 and by_kind["diagnosis"]["score"] == 1.0
        assert by_kind["shape_trace"]["score"] == 1 / 3 and by_kind["shape_trace"]["missed"]
        assert by_kind["concept"]["score"] == 0.5 and by_kind["concept"]["missed"] == ["batch raises reuse"]
        assert by_kind["concept"]["answer"] == "weights are read once per token"
        await type_keys(pilot, "ctrl+w")
        await refresh(pilot)
        assert (data / "reports" / f"mock-{report['id']}.html").exists()
    ((status, stored),) = rows(data, "SELECT status, report FROM mock")
    assert status == "finished" and json.loads(stored)["total"] == answered
    logged = rows(data, "SELECT card_id, mode FROM review_log")
    assert len(logged) == answered and {m for _, m in logged} == {"mock"}
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
    app = DrillApp(data, [deck], clock=FixedClock(NOW), seed=4)
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
    app = DrillApp(data, [deck], clock=FixedClock(NOW), seed=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        await answer_current(pilot, screen)
        second = screen.slot.card_id
        screen.query(Input).first().value = "typed, never submitted"
        await run_out_of_time(pilot, screen)
        report = app.screen.report
        assert report["status"] == "time_up" and report["answered"] == 1
        assert report["unanswered"] == report["total"] - 1
        [asked] = [q for q in report["questions"] if q["card_id"] == second]
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
    app = DrillApp(data, [deck], clock=FixedClock(NOW), seed=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        await answer_current(pilot, screen)
        await run_out_of_time(pilot, screen)
        assert isinstance(app.screen, MockReportScreen)
        assert app.screen.report["status"] == "time_up"
        assert app.screen.report["unanswered"] == app.screen.report["total"] - 1
        await type_keys(pilot, "q")
        await settle(pilot)
        assert not isinstance(app.screen, (MockReportScreen, MockScreen))


async def test_setup_shows_the_plan_and_refuses_a_bad_length(tmp_path, write_deck):
    deck = write_deck(DECK + MORE)
    app = DrillApp(tmp_path / "d", [deck], clock=FixedClock(NOW), seed=4)
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

    from drill.ui.mock_screen import Checklist

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
    app = DrillApp(data, [write_deck(concepts)], clock=FixedClock(NOW), seed=4)
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

    from drill.ui.mock_screen import Checklist

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
    app = DrillApp(tmp_path / "d", [write_deck(deck)], clock=FixedClock(NOW), seed=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        assert screen.slot.kind == "diagnosis" and screen.focused is screen.query_one("#mbody")
        down = ["down"] * screen.form.choices.index("memory-bound")
        for key in ["tab", *down, "enter", *"fuse it"]:  # all queued at once
            app.post_message(events.Key({" ": "space"}.get(key, key), key if len(key) == 1 else None))
        await settle(pilot)
        assert screen.form.choices[screen.form.chosen] == "memory-bound"
        assert screen.query_one("#experiment", Input).value == "fuse it"


def warnings_with(app, words):
    return [n.message for n in app._notifications if words in n.message]


async def test_ctrl_q_mid_mock_asks_first_and_a_second_ctrl_q_quits(tmp_path, write_deck):
    data = tmp_path / "d"
    app = DrillApp(data, [write_deck(DECK + MORE)], clock=FixedClock(NOW), seed=4)
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
    app = DrillApp(data, [deck], clock=FixedClock(NOW), seed=4)
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

    app = DrillApp(tmp_path / "d", [write_deck(DECK + MORE)], clock=FixedClock(NOW), seed=4)
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
        assert app.screen.report["status"] == "abandoned" and app.screen.report["score"] is None


async def test_a_half_typed_answer_not_submitted_is_kept_but_not_scored(tmp_path, write_deck):
    from drill.ui.mock_screen import END_KEY

    shapes = DECK[: DECK.index("  - id: t-ledger")]
    deck = shapes + shapes[len("cards:\n") :].replace("id: t-shape", "id: t-shape2")
    data = tmp_path / "d"
    app = DrillApp(data, [write_deck(deck)], clock=FixedClock(NOW), seed=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        first = screen.slot.card_id
        await type_keys(pilot, *"(B, S, D)", "enter", *"(B, H")  # one step and a half, never submitted
        await type_keys(pilot, END_KEY, END_KEY)
        await settle(pilot)
        report = app.screen.report
        assert report["answered"] == 0 and report["status"] == "abandoned"
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
    app = DrillApp(tmp_path / "d", [write_deck(concepts)], clock=FixedClock(NOW), seed=4)
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
