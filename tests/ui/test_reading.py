"""Reading a result on the review screen (issue 33): after a check the verdict and the answer's start are on screen,
a concept's question stays with the learner's answer shown once, the bar's hint follows the focused field, toasts
do not outlive or cover what they speak of, counts agree with their nouns, and a repeat says why it is back.

What is on screen is read from the screen's drawn lines (`screen_lines`), as the learner sees it, toasts included.
Keys go through `pilot.press`, which pauses as a terminal's keys arrive: a scroll made before the answer was laid
out stopped short of the verdict only with such pauses.
"""

import datetime as dt
import textwrap

import pytest
from textual.widgets import Static

from drill.start import AppOptions
from drill.ui import app as ui_app
from drill.ui.app import DrillApp
from tests.conftest import FixedClock, settle, type_keys

NOW = dt.datetime(2026, 5, 10, 12, 0)
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((100, 30), id="100x30")]
EVIDENCE = "\n".join(f"      step {i:02d}   cudaLaunchKernel   5,765.5 ns   211,200 calls" for i in range(24))
DECK = f"""\
deck: Reading deck
cards:
  - id: long-diag
    kind: diagnosis
    topic: profiling
    evidence: |
{EVIDENCE}
    prompt: What bounds the step?
    choices: [memory-bound, launch-bound, compute-bound]
    correct: launch-bound
    answer: "Zanzibar: the launches cost more CPU time than the kernels take on the GPU."
    rubric: [capture the step in a CUDA graph and re-measure the step time]
    sources: [FACTS.md]
  - id: concept-a
    kind: concept
    topic: gpu-arch
    prompt: "Quokka question: how does an SM hide the latency of a global load?"
    answer: "By switching among resident warps."
    sources: [FACTS.md]
"""
LONG_ANSWER = "the schedulers switch to another resident warp whose operands are ready, so many warps in flight hide the wombat latency"


def screen_lines(app) -> list[str]:
    """The screen as drawn, line by line (toasts over the page included)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def on_screen(app, words: str) -> bool:
    return any(words in line for line in screen_lines(app))


def bar(app) -> str:
    return str(app.screen.query_one("#gradebar", Static).render())


def top(app) -> str:
    return str(app.screen.query_one("#top", Static).render())


def make_app(tmp_path, card_id: str | None = None, deck_text: str = DECK) -> DrillApp:
    deck = tmp_path / "decks" / "deck.yaml"
    deck.parent.mkdir(exist_ok=True)
    deck.write_text(textwrap.dedent(deck_text), encoding="utf-8")
    return ui_app.make_app(
        AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=1, new_order="deck", card_id=card_id)
    )


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause(0.05)


@pytest.mark.parametrize("size", SIZES)
async def test_a_checked_diagnosis_shows_its_verdict_and_the_start_of_the_answer(tmp_path, size):
    app = make_app(tmp_path, "long-diag")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "tab", "enter", "enter")  # the first reading, no experiment: checked
        await pilot.pause(0.3)
        assert app.screen.revealed
        assert on_screen(app, "you chose")  # the verdict's first line
        assert on_screen(app, "Zanzibar")  # and the answer's


@pytest.mark.parametrize("size", SIZES)
async def test_a_concept_keeps_its_question_and_shows_the_answer_typed_once(tmp_path, size):
    app = make_app(tmp_path, "concept-a")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await type_keys(pilot, *LONG_ANSWER)
        await press(pilot, "enter")
        await pilot.pause(0.3)
        assert app.screen.revealed
        lines = screen_lines(app)
        assert any("Quokka question" in line for line in lines)  # the question stays in view
        assert sum(line.count("wombat") for line in lines) == 1  # what was typed, once
        assert any("By switching among resident warps" in line for line in lines)


async def test_the_bar_says_what_the_keys_do_in_the_focused_field(tmp_path):
    app = make_app(tmp_path, "long-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        on_the_page = bar(app)
        assert "tab" in on_the_page and "to answer" in on_the_page
        await type_keys(pilot, "tab")
        on_the_choices = bar(app)
        assert "↑↓" in on_the_choices and "chooses" in on_the_choices
        await type_keys(pilot, "enter")  # a reading chosen: on to the experiment, the last field
        on_the_last = bar(app)
        assert "checks" in on_the_last and "shift+tab" in on_the_last
        assert len({on_the_page, on_the_choices, on_the_last}) == 3
        await type_keys(pilot, "escape")
        assert bar(app) == on_the_page


def warnings(app) -> list[str]:
    """The cards the quit warnings standing now speak of."""
    return [n.message.split()[3] for n in app._notifications if "typed but not graded" in n.message]


async def test_the_quit_warning_goes_with_the_card_it_was_about(tmp_path, concept_deck):
    app = ui_app.make_app(AppOptions(tmp_path / "data", [concept_deck(3)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"warps", "ctrl+q")
        await settle(pilot)
        assert app.is_running and warnings(app) == ["c00"]
        await type_keys(pilot, "enter", "4")  # graded: nothing typed is at stake now
        await settle(pilot)
        assert app.screen.card.id == "c01"
        assert warnings(app) == []
        await type_keys(pilot, *"half", "ctrl+q")  # a new answer at stake: ctrl+q warns again, it does not quit
        await settle(pilot)
        assert app.is_running and warnings(app) == ["c01"]


async def test_an_undone_grade_puts_the_answer_back_in_view_with_no_toast_over_it(tmp_path):
    app = make_app(tmp_path, "long-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        chosen = app.screen.form.lettered(1)  # the second reading in this review's drawn order (down once)
        await press(pilot, "tab", "down", "enter", *"graph capture", "enter")
        await pilot.pause(0.3)
        await press(pilot, "5", "ctrl+z")
        await pilot.pause(0.3)
        assert app.screen.card.id == "long-diag" and not app.screen.revealed
        assert not [n for n in app._notifications if "undid" in n.message]
        lines = screen_lines(app)
        assert any(f"Your reading of the evidence: {chosen}" in line for line in lines)
        assert any(line.strip() == "graph capture" for line in lines)
        assert any("undid the grade of long-diag" in line for line in lines)


async def test_counts_agree_with_their_nouns_and_say_what_they_count(tmp_path, concept_deck):
    app = ui_app.make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "3")  # below 4: back today
        await settle(pilot)
        assert "1 grade saved" in top(app)
        await type_keys(pilot, "enter", "5")
        await settle(pilot)
        assert app.screen.card is None
        assert "done 1 · left 0 · 2 grades saved" in top(app)
        done = app.screen.query_one("#prompt").source
        assert "You reviewed 1 card this session; 2 grades saved" in done
        assert "card(s)" not in done


async def test_a_card_back_for_a_repeat_says_the_grade_that_brought_it_back(tmp_path, concept_deck):
    app = ui_app.make_app(AppOptions(tmp_path / "data", [concept_deck(4)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "3")
        await settle(pilot)
        for card_id in ("c01", "c02", "c03"):
            assert app.screen.card.id == card_id and "again" not in top(app)
            await type_keys(pilot, "enter", "5")
            await settle(pilot)
        assert app.screen.card.id == "c00"
        assert "again: you gave it 3" in top(app)
        assert on_screen(app, "again: you gave it 3")  # not cut off at 80 columns
        await type_keys(pilot, "enter", "2")  # and again, lower
        await settle(pilot)
        assert app.screen.card.id == "c00" and "again: you gave it 2" in top(app)
        await type_keys(pilot, "ctrl+z")  # the undone grade is no longer the one that brought it back
        await settle(pilot)
        assert app.screen.card.id == "c00" and "again: you gave it 3" in top(app)


async def test_a_kernel_card_is_named_by_its_topic_not_the_deck_that_holds_every_kernel(tmp_path):
    from drill import paths

    app = make_app(tmp_path, "reduce", (paths.cards_dir() / "kernels.yaml").read_text(encoding="utf-8"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "kernel · reduce · cuda-reduction" in top(app)
        assert "Kernel exercises" not in top(app)


async def test_an_undone_grade_of_an_answer_said_out_loud_puts_nothing_back(tmp_path, concept_deck):
    app = ui_app.make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "5", "ctrl+z")
        await settle(pilot)
        said = str(app.screen.query_one("#verdict", Static).render())
        assert app.screen.card.id == "c00" and said == "undid the grade of c00"
