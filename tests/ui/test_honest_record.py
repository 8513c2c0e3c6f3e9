"""Nothing is recorded that the learner did not do: no check of a reading never chosen, no grade not typed, and a
key typed where it cannot go is refused where the learner can see it."""

import random

import pytest
from textual.widgets import Input, Label, OptionList, Static

from drill.ui.answer_fields import NOT_ON_THE_CHOICES, NOT_ON_THE_PAGE
from drill.ui.answering import CHOOSE_FIRST
from tests.conftest import settle, type_keys, until
from tests.ui.test_keys import burst, db, make_app

# Long evidence, so that at 80x24 the choices start below the fold: a focus that did not scroll would leave
# them off-screen.
LONG_DIAG = """\
  - id: t-long-diag
    kind: diagnosis
    topic: profiling
    evidence: |
{lines}
    prompt: What bounds this kernel?
    choices: [compute-bound, memory-bound, latency-bound]
    correct: memory-bound
    answer: DRAM is near peak.
    sources: [FACTS.md]
"""


def notices(app, words):
    return [n for n in app._notifications if words in n.message]


def recorded(data):
    return db(data, "SELECT card_id, grade, answer FROM review_log") or []


def on_screen(app, widget) -> bool:
    """Whether some of `widget` is inside the screen's visible region (not scrolled away)."""
    region = widget.region
    return region.height > 0 and bool(app.screen.region.intersection(region))


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_space_tab_enter_and_a_digit_on_a_diagnosis_record_nothing(tmp_path, write_deck, size):
    app, data = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await type_keys(pilot, "space", "tab", "enter")
        await settle(pilot)
        screen = app.screen
        assert not screen.revealed and screen.suggested is None  # not checked
        assert CHOOSE_FIRST in str(screen.query_one("#verdict", Static).render())
        assert "none chosen yet" in str(screen.query_one("#choice-label", Label).render())
        choices = screen.query_one(OptionList)
        assert screen.focused is choices  # back to the choices, scrolled into view
        await until(pilot, lambda: on_screen(app, choices), "the choices in view")
        await type_keys(pilot, "1")  # the grade the learner would have typed: a key on the choices, refused
        await settle(pilot)
        assert recorded(data) == [] and not screen.revealed
        assert notices(app, NOT_ON_THE_CHOICES)
        # choosing a reading, then enter on the last field, checks; only the digit typed after it grades
        await type_keys(pilot, "down", "enter", *"fuse", "enter")
        await settle(pilot)
        assert screen.revealed and recorded(data) == []
        await type_keys(pilot, "2")
        await settle(pilot)
        [(card_id, grade, answer)] = recorded(data)
        assert card_id == "t-diag" and grade == 2 and '"choice": ""' not in answer


async def test_the_palette_check_needs_a_reading_too(tmp_path, write_deck):
    app, data = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.screen.reveal_or_check()  # "Reveal / check" in ctrl+p
        await settle(pilot)
        assert not app.screen.revealed and app.screen.focused is app.screen.query_one(OptionList)
        await type_keys(pilot, "3", "enter", "5")  # enter chooses the highlighted reading; no check, no grade
        await settle(pilot)
        assert app.screen.form.chosen is not None and not app.screen.revealed and recorded(data) == []


async def test_space_into_choices_below_the_fold_scrolls_them_into_view(tmp_path, write_deck):
    evidence = "\n".join(f"      line {i:02d}: dram 92 % sm 11 %" for i in range(30))
    deck = write_deck(LONG_DIAG.format(lines=evidence).replace("  - id", "cards:\n  - id", 1))
    from drill.start import AppOptions
    from drill.ui.app import make_app
    from tests.conftest import FixedClock
    from tests.ui.test_keys import NOW

    app = make_app(AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=5, new_order="deck"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        choices = app.screen.query_one(OptionList)
        assert not on_screen(app, choices)  # the evidence fills the screen as the card opens
        await type_keys(pilot, "space")
        assert app.screen.focused is choices
        await until(pilot, lambda: on_screen(app, choices), "the choices scrolled into view")  # an animated scroll


async def test_letters_typed_while_the_evidence_shows_are_refused_in_a_notice(tmp_path, write_deck):
    app, data = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        page = app.screen.query_one("#body")
        await burst(pilot, list("raise max"[:5]))  # "raise": the space after it would go into the form
        assert app.screen.focused is page and app.screen.form.chosen is None
        assert len(notices(app, NOT_ON_THE_PAGE)) == 1  # one notice for the burst, not one a key
        await type_keys(pilot, "space", *"max")
        assert app.screen.focused is app.screen.query_one(OptionList) and app.screen.form.chosen is None
        assert notices(app, NOT_ON_THE_CHOICES)
        assert app.screen.query_one("#experiment", Input).value == ""
        assert recorded(data) == [] and not app.screen.revealed


@pytest.mark.parametrize("card", ["k-concept", "t-shape", "t-ledger", "t-diag"])
async def test_no_key_but_a_digit_after_the_check_records_a_grade(tmp_path, write_deck, card):
    """Random keys that move, type and leave (no enter after a check, no digit): nothing is recorded, and a
    diagnosis, whose reading can only be chosen with the arrows, is never checked without them."""
    app, data = make_app(tmp_path, write_deck, card)
    keys = ["space", "tab", "shift+tab", "escape", "x", " "]
    if card == "t-diag":
        keys += ["enter", "1", "5"]  # no arrows, and no enter on the list: nothing chooses a reading
    rng = random.Random(card)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in [rng.choice(keys) for _ in range(60)]:
            if card == "t-diag" and key == "enter" and isinstance(app.screen.focused, OptionList):
                continue  # enter on the list is a choice the learner made
            await type_keys(pilot, key)
        await settle(pilot)
        assert recorded(data) == []
        if card == "t-diag":
            assert not app.screen.revealed and app.screen.form.chosen is None
