"""Pilot tests of mock rounds as a learner drives them: the setup offers rounds, one serving-design round and one
debugging round from the first stage to the report per dimension."""

import datetime as dt
import json

from textual.widgets import OptionList

from drill import paths
from drill.mock.render import render_markdown
from drill.start import AppOptions
from drill.ui.app import make_app
from drill.ui.mock_report_screen import MockReportScreen
from drill.ui.mock_screen import END_KEY, MockScreen
from drill.ui.mock_setup import MockSetupScreen
from tests.cards.test_scenario import SCENARIO
from tests.conftest import FixedClock, refresh, rows, stretched, type_keys
from tests.conftest import settle as settle_app

NOW = dt.datetime(2026, 5, 10, 12, 0)
SERVING = paths.cards_dir() / "scenarios-serving.yaml"


async def settle(pilot):
    await settle_app(pilot, pauses=2)


async def open_round(pilot, app, kind):
    """From the review screen: the mock's setup, the round `kind` highlighted, enter starts it."""
    await type_keys(pilot, "ctrl+o")
    await settle(pilot)
    setup = app.screen
    assert isinstance(setup, MockSetupScreen)
    labels = [label for label, _ in setup.mixes]
    assert labels[0].startswith("round · ") and any(label.startswith("round · serving") for label in labels)
    mix = setup.query_one("#mix", OptionList)
    mix.highlighted = next(i for i, label in enumerate(labels) if label.startswith(f"round · {kind}"))
    mix.focus()
    await refresh(pilot)
    shown = str(setup.query_one("#splan").render())
    assert "-minute round" in shown and "minutes kept for follow-ups" in shown
    await type_keys(pilot, "enter")
    await settle(pilot)
    assert isinstance(app.screen, MockScreen)
    return app.screen


async def answer(pilot, screen, words):
    """Answer the stage on screen as a learner would: `words` for free text (the first rubric point ticked where
    the answer names it), the right figures with working for a numeric stage."""
    card = screen.card
    if card.kind == "memory_ledger":
        boxes = screen.form.inputs()
        shown = screen.form.rendered
        boxes[0].value = " then ".join(f"{t.value:.6g}" for t in shown.ledger)
        for box, expected in zip(boxes[1:], shown.answers):
            box.value = f"{expected.value:.6g}"
        boxes[-1].focus()
        await type_keys(pilot, "enter")
    else:
        await type_keys(pilot, *words, "enter")
        await settle(pilot)
        if screen.stage.value == "ticking":
            await type_keys(pilot, "space", "enter")
    await settle(pilot)


def stage_words(card):
    """An answer of the learner's for a free-text stage: its first point in full, with words around it."""
    if card.fields.get("stage") == "clarify":
        return "what batch size and context length, and the latency target per token?"
    if not card.rubric:  # a numeric stage: answered with figures
        return ""
    return f"first I would say this: {card.rubric[0]}, and then measure it again"


async def sit_round(pilot, app, screen, limit=12):
    seen = []
    while isinstance(app.screen, MockScreen) and len(seen) < limit:
        card = screen.card
        assert not screen.query_one("#manswer").has_class("shown")  # held until the round ends
        top = str(screen.query_one("#mtop").render())
        seen.append((card.id, card.fields.get("stage"), screen.follow is not None, top))
        await answer(pilot, screen, stage_words(card))
    assert isinstance(app.screen, MockReportScreen), (seen, str(screen.query_one("#mverdict").render()))
    return seen


async def test_a_serving_design_round_from_the_setup_to_the_report(tmp_path, write_deck):
    deck = write_deck(SCENARIO)
    data = tmp_path / "d"
    app = make_app(AppOptions(data, [SERVING, deck], clock=FixedClock(NOW), seed=4))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_round(pilot, app, "serving")
        source = screen.run.slots[0].card_id.partition("#")[0]
        assert source.startswith("scenario-serve-")
        first = screen.card
        assert first.fields["stage"] == "clarify" and "clarify stage" in str(screen.query_one("#mtop").render())
        seen = await sit_round(pilot, app, screen)
        report = app.screen.report
    stages = [s for s in seen if not s[2]]
    follow_ups = [s for s in seen if s[2]]
    assert [s[1] for s in stages][:3] == ["clarify", "estimate", stages[2][1]] and len(stages) >= 4
    # strong answers earned the scenario's twists as follow-ups, asked on the same problem
    assert any(s[1] == "twist" for s in follow_ups) and all(s[0].startswith(source + "#") for s in follow_ups)
    assert all("follow-up" in s[3] for s in follow_ups)
    assert [q["kind"] for q in report.questions][:2] == ["clarify stage", "estimate stage"]
    round_report = report.round
    assert round_report.source_id == source and round_report.reached == round_report.stages_total
    dims = {d.dimension: d for d in round_report.dimensions}
    assert dims["estimation"].verdict == "pass"  # the figures and the working were right
    assert dims["clarifying"].evidence is not None and dims["design"].evidence is not None
    assert round_report.verdict in ("pass", "lean", "fail") and round_report.reason
    assert "twist" in {s.type for s in round_report.stages}
    assert f"## Round: {round_report.title} (serving)" in render_markdown(report)
    # the answers are logged against the scenario (the deck card), each with its stage
    logged = rows(data, "SELECT card_id, answer FROM review_log")
    assert {card_id for card_id, _ in logged} == {source}
    assert {json.loads(a)["stage"] for _, a in logged} >= {f"{source}#1", f"{source}#2"}
    ((stored,),) = rows(data, "SELECT report FROM mock")
    assert json.loads(stored)["round"]["verdict"] == round_report.verdict


async def test_a_debugging_round_from_the_setup_to_the_report(tmp_path, write_deck):
    deck = write_deck(SCENARIO)
    data = tmp_path / "d"
    app = make_app(AppOptions(data, [SERVING, deck], clock=FixedClock(NOW), seed=4))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_round(pilot, app, "debug")
        assert [s.card_id for s in screen.run.slots] == ["sc-decode#1", "sc-decode#2", "sc-decode#3"]
        # the clarifying stage: graded by the asks it names, with no ticks to give
        await type_keys(pilot, *"what batch size, and how long is the context?", "enter")
        await settle(pilot)
        assert screen.card.id == "sc-decode#2"  # on to the estimate: nothing to tick after a clarifying stage
        await answer(pilot, screen, "")
        assert screen.follow is not None and screen.card.id == "sc-decode#4"  # the twist: batch 64
        assert "batch 64" in screen.form.rendered.prompt
        await answer(pilot, screen, "")
        assert screen.card.id == "sc-decode#3"
        await type_keys(pilot, *"cost", "enter")  # one word: no rubric point can be ticked for it
        await settle(pilot)
        await type_keys(pilot, "space")
        await settle(pilot)
        assert not screen.query_one("#mrubric").selected
        await type_keys(pilot, "enter")
        await settle(pilot)
        while isinstance(app.screen, MockScreen):  # the narrower question a weak answer earns: declined
            await type_keys(pilot, "ctrl+n")
            await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
        report = app.screen.report.round
    dims = {d.dimension: d for d in report.dimensions}
    assert dims["clarifying"].evidence == 2 / 3
    assert dims["estimation"].verdict == "pass"
    assert dims["debugging"].verdict == "fail" and dims["debugging"].evidence == 0.0
    assert report.verdict == "lean" and "weakest: debugging 0%" in report.reason
    assert report.next_asked == "every stage and twist was put: the debrief, then the candidate's questions"


async def test_a_kernel_round_on_the_cpu_takes_the_kernel_without_showing_its_reference(tmp_path):
    """A kernel round with no GPU: the learner edits and runs the kernel; the reference solution is held (F9 does
    not show it, no grade is asked for), F2 submits the file run with the grade its verdict suggests, and the
    report shows the reference."""
    import sys

    from drill.kernel.client import JudgeClient
    from drill.ui.kernel_screen import HELD_WORDS, KernelScreen
    from tests.conftest import until

    kernels = tmp_path / "decks" / "kernels.yaml"
    kernels.parent.mkdir()
    kernels.write_text((paths.cards_dir() / "kernels.yaml").read_text())
    judges = []

    def cpu_judge(_data_dir):
        judges.append(JudgeClient([sys.executable, "-m", "drill.judge.fake"], start_timeout=stretched(30)))
        return judges[-1]

    data = tmp_path / "d"
    app = make_app(AppOptions(data, [SERVING, kernels], clock=FixedClock(NOW), seed=4), judge_factory=cpu_judge)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = await open_round(pilot, app, "kernel")
        assert screen.run.slots[0].kind == "kernel" and not screen.practice
        await type_keys(pilot, "space")  # open the editor
        await settle(pilot)
        editor_screen = app.screen
        assert isinstance(editor_screen, KernelScreen) and editor_screen.held
        await type_keys(pilot, *"// tried a wider block", "enter")
        await type_keys(pilot, "f2")  # nothing run yet: nothing to submit
        await settle(pilot)
        assert app.screen is editor_screen
        await type_keys(pilot, "f9")  # the reference is held
        await settle(pilot)
        assert not editor_screen.revealed and not editor_screen.has_class("answer-shown")
        assert HELD_WORDS in str(editor_screen.query_one("#kbar").render())
        await type_keys(pilot, "f5")
        await until(pilot, lambda: editor_screen.verdict is not None, "the judge's verdict")
        await settle(pilot)
        shown = str(editor_screen.query_one("#kverdict").render())
        assert "correct" in shown and "grade is held until the mock ends" in shown
        assert "suggested grade" not in shown and editor_screen.suggested == 3  # correct, not timed on a CPU
        assert "// tried a wider block" in editor_screen.editor.text
        await type_keys(pilot, "f2")  # submit the file run
        await settle(pilot)
        assert app.screen is screen and not editor_screen.revealed
        first = screen.run.slots[0]
        assert first.status == "answered" and first.grade is not None
        assert first.grade.parts == (f"kernel graded {editor_screen.suggested}/5",)
        assert "reference" in first.answer and first.answer["judged"]
        assert screen.card.fields.get("stage") != "kernel"  # on to what would be optimised next
        await type_keys(pilot, END_KEY, END_KEY)
        await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
        report = app.screen.report
    kernel = report.questions[0]
    assert "Reference solution" in kernel["expected"] and kernel["answer"].startswith("kernel graded")
    assert "Reference solution" in render_markdown(report)
    assert all(j.pid is None for j in judges)


DEBUG = paths.cards_dir() / "scenarios-debug.yaml"


def shown_region(screen, widget):
    """Where `widget` is on screen; an empty region when it is not laid out there (scrolled out of view)."""
    from textual.errors import NoWidget
    from textual.geometry import Region

    try:
        return screen.find_widget(widget).region
    except NoWidget:
        return Region()


async def test_at_80_by_24_the_focused_answer_field_of_every_stage_is_in_view_with_its_question(tmp_path):
    app = make_app(AppOptions(tmp_path / "d", [SERVING, DEBUG], clock=FixedClock(NOW), seed=4))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await open_round(pilot, app, "debug")
        checked = []
        while isinstance(app.screen, MockScreen) and len(checked) < 6:
            card = screen.card
            bar = screen.query_one("#mbar")
            if app.focused is screen.query_one("#mbody"):  # long evidence read first: tab into the answer
                assert "tab[/b] to answer" in str(bar.render()) or "tab to answer" in str(bar.render())
                await type_keys(pilot, "tab")
                await settle(pilot)
            focused = app.focused
            assert screen.form in focused.ancestors, card.id
            page = screen.query_one("#mbody").content_region
            field = shown_region(screen, focused)
            where = (card.id, card.fields.get("stage"), field, page)
            assert field.height > 0 and page.contains_region(field), where
            # the question, the prompt's last line, is on screen above the field
            prompt = shown_region(screen, screen.query_one("#mprompt"))
            assert prompt.height > 0 and page.y <= prompt.bottom - 1 < field.y, where
            assert "enter on the last field submits" in str(bar.render()), where
            assert "to answer" not in str(bar.render()), where
            checked.append(card.fields.get("stage"))
            await answer(pilot, screen, stage_words(card))
        assert {"diagnose", "estimate"} <= set(checked), checked
