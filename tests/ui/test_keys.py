"""Keys that cannot destroy: what a learner types into an answer changes nothing but the answer.

Keys are sent the way a terminal delivers them: one at a time (as a person
types) and as a burst in a single read (fast typing, a paste without
bracketed-paste support), where every key is queued before any is handled.
"""

import asyncio
import datetime as dt
import json
import sqlite3

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input, OptionList, Static

from drill.start import AppOptions
from drill.store.reader import DB_NAME
from drill.ui import app as ui_app
from drill.ui.answering import form_for
from tests.conftest import FixedClock, handled, refresh, settle, type_keys
from tests.ui.test_checked import DECK

NOW = dt.datetime(2026, 5, 10, 12, 0)
SENTENCE = "bucket gradients so backward overlaps the all-reduce; 25 MB buckets, quit stalls 0 1 2 3 4 5 uqsb"
SHORT = "quit 25 MB 0 1 2 3 4 5 uqsb, back"  # every key the screen binds elsewhere, for the second field on

CONCEPTS = """\
  - id: k-concept
    kind: concept
    topic: gpu-arch
    prompt: "Why is the warp the unit of scheduling?"
    answer: "Because 32 threads share one instruction stream."
    sources: [FACTS.md]
  - id: k-spare
    kind: concept
    topic: gpu-arch
    prompt: "Spare question?"
    answer: "Spare answer."
    sources: [FACTS.md]
"""


def key_event(key: str) -> events.Key:
    """A Key event as the terminal driver makes it: a typed character, or a key name such as `enter`."""
    if len(key) == 1:
        return events.Key(key if key.isalnum() else _character_to_key(key), key)
    return events.Key(key, CONTROL_CHARACTERS.get(key))


CONTROL_CHARACTERS = {"enter": "\r", "tab": "\t", "escape": "\x1b", "backspace": "\x7f", "ctrl+u": "\x15"}


async def burst(pilot, keys) -> None:
    """Queue every key before any is handled, as one read from a fast terminal does."""
    driver = pilot.app._driver
    for key in keys:
        event = key_event(key)
        event.set_sender(pilot.app)
        driver.send_message(event)
    for _ in range(3):  # the driver hands each key to the loop: they reach the app's queue in a few turns
        await asyncio.sleep(0)
    await handled(pilot)
    await pilot.app.workers.wait_for_complete()
    await refresh(pilot)


def db(data, sql):
    path = data / DB_NAME
    if not path.exists():
        return None
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return None
    finally:
        conn.close()


def schedule_snapshot(data):
    return (
        db(data, "SELECT * FROM review_log"),
        db(data, "SELECT card_id, suspended, buried_until, due, repetitions FROM card_state"),
    )


def make_app(tmp_path, write_deck, first, order="deck"):
    deck = write_deck(DECK.rstrip("\n") + "\n" + CONCEPTS)
    data = tmp_path / "data"
    app = ui_app.make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=5, new_order=order, new_per_day=10))
    queue = app.session.queue
    queue.remove(first)
    queue.insert(0, first)
    return app, data


@pytest.mark.parametrize("as_burst", [False, True], ids=["typed", "burst"])
@pytest.mark.parametrize("card", ["k-concept", "t-shape", "t-ledger", "t-diag"])
async def test_a_sentence_typed_into_any_field_changes_only_the_field(tmp_path, write_deck, card, as_burst):
    app, data = make_app(tmp_path, write_deck, card)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        before = schedule_snapshot(data)
        form = app.screen.form
        fields = [f for f in form.query(Input)]
        typed = [SENTENCE] + [SHORT] * (len(fields) - 1)  # one key at a time is slow to drive: the whole
        for field, text in zip(fields, typed):  # sentence once per card, the bound keys in every field
            app.screen.set_focus(field)
            if as_burst:
                await burst(pilot, list(text))
            else:
                await type_keys(pilot, *text)
            assert field.value == text
        # with no field focused (after esc, the page has the focus), letters and digits go nowhere
        await type_keys(pilot, "escape", *"sbuq012345")
        await burst(pilot, list("sbuq012345"))
        await settle(pilot)
        assert app.is_running and app.screen.card.id == card
        assert not app.screen.revealed
        assert [f.value for f in fields] == typed
        assert schedule_snapshot(data) == before
        # space goes back into the form, and what follows it in the same burst lands there, in order
        await burst(pilot, list(" 42"))
        await settle(pilot)
        assert not app.screen.revealed and schedule_snapshot(data) == before
        assert any(f.value.endswith("42") for f in fields) or card == "t-diag"  # a diagnosis goes back to its choices


async def test_letters_on_the_choice_list_go_nowhere_and_enter_moves_on(tmp_path, write_deck):
    app, data = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        choices = app.screen.query_one(OptionList)
        app.screen.set_focus(choices)
        await burst(pilot, [*"sbuq 12", "enter", *"bucket gradients", "ctrl+u", *"fuse the add"])
        experiment = app.screen.query_one("#experiment", Input)
        assert app.screen.focused is experiment
        assert experiment.value == "fuse the add"
        assert app.screen.form.chosen == 0
        assert not app.screen.revealed and app.is_running
        assert db(data, "SELECT count(*) FROM review_log") in (None, [(0,)])


async def test_a_burst_reaches_the_checker_exactly_as_typed(tmp_path, write_deck):
    """ctrl+u, `1.5625 GiB`, enter in one read: the edit key acts where it was typed, then the check."""
    app, data = make_app(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await burst(pilot, [*"junk", "ctrl+u", *"1.5625 GiB", "enter"])
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "1/1 right" in verdict, verdict
        assert app.screen.answer_record["given"] == ["1.5625 GiB"]
        await burst(pilot, ["enter"])  # accept the suggested grade
        (given,) = db(data, "SELECT answer FROM review_log")[0]
        assert json.loads(given)["given"] == ["1.5625 GiB"]


async def test_a_burst_across_fields_lands_in_each_field(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-shape")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        keys = [
            *"(B, S, D)",
            "enter",
            *"(B, H, S, Dh)",
            "backspace",
            "backspace",
            *"h)",
            "enter",
            *"(B, H, S, S)",
            "enter",
        ]
        keys += list("sbu")  # typed after the check: they must not act as commands
        await burst(pilot, keys)
        assert app.screen.answer_record["steps"] == ["(B, S, D)", "(B, H, S, Dh)", "(B, H, S, S)"]
        assert app.screen.answer_record["right"] == 3
        assert app.screen.revealed and app.is_running
        assert app.session.states.get("t-shape") is None or not app.session.states["t-shape"].suspended


async def test_a_paste_fills_the_fields_in_order(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-shape")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.focused.post_message(events.Paste("(B, S, D)\n(B, H, S, Dh)"))
        await refresh(pilot)
        assert [i.value for i in app.screen.query(Input)] == ["(B, S, D)", "(B, H, S, Dh)", ""]
        assert app.screen.focused is app.screen.query_one("#step2", Input)


@pytest.mark.parametrize(
    "card, pasted, values",
    [
        (
            "k-concept",
            "Coalesced loads touch few sectors.\nUnit stride: 4 sectors.\n",
            ["Coalesced loads touch few sectors. Unit stride: 4 sectors."],
        ),
        (
            "t-shape",
            "(B, S, D)\n(B, H, S, Dh)\n(B, H, S, S)\nthen softmax",
            ["(B, S, D)", "(B, H, S, Dh)", "(B, H, S, S) then softmax"],
        ),
    ],
    ids=["one field", "more lines than fields"],
)
async def test_a_paste_with_more_lines_than_fields_loses_none_of_them(tmp_path, write_deck, card, pasted, values):
    app, _ = make_app(tmp_path, write_deck, card)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.focused.post_message(events.Paste(pasted))
        await refresh(pilot)
        assert [i.value for i in app.screen.form.inputs()] == values


async def test_space_and_enter_outside_a_field_never_check_a_form(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.screen.query_one("#ans1", Input)
        for key in ("space", "enter"):
            await type_keys(pilot, "escape")
            assert app.screen.focused is app.screen.query_one("#body")  # the page: arrows scroll it
            await type_keys(pilot, key)  # outside a field: back into the form, not a check
            assert not app.screen.revealed and app.screen.focused is field


async def test_suspend_and_bury_show_a_notice_and_undo_takes_them_back(tmp_path, write_deck):
    app, data = make_app(tmp_path, write_deck, "k-concept")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+s")
        await settle(pilot)
        assert db(data, "SELECT suspended FROM card_state WHERE card_id='k-concept'") == [(1,)]
        assert any("suspended k-concept" in n.message and "ctrl+z" in n.message for n in app._notifications)
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert db(data, "SELECT suspended FROM card_state WHERE card_id='k-concept'") == [(0,)]
        assert app.screen.card.id == "k-concept"
        await type_keys(pilot, "ctrl+t")
        await settle(pilot)
        assert db(data, "SELECT buried_until FROM card_state WHERE card_id='k-concept'") == [("2026-05-11",)]
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert db(data, "SELECT buried_until FROM card_state WHERE card_id='k-concept'") == [(None,)]
        assert app.screen.card.id == "k-concept"


@pytest.mark.parametrize("set_aside", ["ctrl+s", "ctrl+t"], ids=["suspend", "bury"])
async def test_undoing_a_suspend_or_a_burial_brings_back_what_was_typed(tmp_path, write_deck, set_aside):
    app, _ = make_app(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await burst(pilot, [*"1.5 GiB"])
        await type_keys(pilot, set_aside)
        await settle(pilot)
        assert app.screen.card.id != "t-ledger"
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert app.screen.card.id == "t-ledger"
        assert [box.value for box in app.screen.form.inputs()] == ["1.5 GiB"]


async def test_undoing_a_diagnosis_grade_brings_back_the_choice_and_the_experiment(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        form = app.screen.form
        pick = next(i for i, c in enumerate(form.choices) if c != form.card.fields["correct"])  # not the first
        app.screen.set_focus(app.screen.query_one(OptionList))
        await type_keys(pilot, *["down"] * pick, "enter", *"fuse the add", "enter")
        assert app.screen.revealed and form.chosen == pick
        await type_keys(pilot, "2")
        await settle(pilot)
        assert app.screen.card.id != "t-diag"
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        form = app.screen.form
        assert app.screen.card.id == "t-diag" and not app.screen.revealed
        assert form.chosen == pick and app.screen.query_one(OptionList).highlighted == pick
        assert app.screen.query_one("#experiment", Input).value == "fuse the add"
        assert form.choices[pick] in str(app.screen.query_one("#choice-label", Static).render())


async def test_concept_answer_is_typed_then_enter_reveals_and_only_digits_grade(tmp_path, write_deck):
    app, data = make_app(tmp_path, write_deck, "k-concept")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"sbuq warps share 1 instruction stream")
        assert not app.screen.revealed
        await type_keys(pilot, "enter")
        assert app.screen.revealed
        assert "sbuq warps share 1 instruction stream" in str(app.screen.query_one("#typed-whole", Static).render())
        await type_keys(pilot, *"sbuq")  # after the reveal letters still do nothing
        await settle(pilot)
        assert app.is_running and app.screen.card.id == "k-concept"
        assert db(data, "SELECT count(*) FROM review_log") in (None, [(0,)])
        await type_keys(pilot, "4")
        await settle(pilot)
        (row,) = db(data, "SELECT card_id, grade, answer FROM review_log")
        assert row[:2] == ("k-concept", 4)
        assert json.loads(row[2]) == {"typed": "sbuq warps share 1 instruction stream"}
        assert "1 grade saved" in str(app.screen.query_one("#top", Static).render())


async def test_choices_are_shuffled_per_review_and_stable_across_undo_and_restart(tmp_path, write_deck):
    deck = write_deck(DECK)
    data = tmp_path / "data"
    orders = set()
    for day in range(12):  # the form each day's review screen makes (the screen itself is driven below)
        app = ui_app.make_app(AppOptions(tmp_path / f"d{day}", [deck], clock=FixedClock(NOW + dt.timedelta(days=day))))
        card = app.session.cards["t-diag"]
        orders.add(tuple(form_for(card, app.session.seed_for(card.id, app.seed)).choices))
    assert len(orders) >= 4  # 3! = 6 orders; twelve reviews show most of them
    assert {order.index("memory-bound") for order in orders} == {0, 1, 2}  # the right one can be anywhere
    # same review, same order: after an undo, and in a new app on the same day
    app = ui_app.make_app(AppOptions(data, [deck], clock=FixedClock(NOW)))
    app.session.queue = ["t-diag", "t-shape"]
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first = list(app.screen.form.choices)
        card = app.session.cards["t-diag"]
        assert first == list(form_for(card, app.session.seed_for(card.id, app.seed)).choices)  # as counted above
        app.screen.set_focus(app.screen.query_one("#experiment", Input))
        await type_keys(pilot, "enter")
        await type_keys(pilot, "1")
        await settle(pilot)
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert app.screen.card.id == "t-diag" and app.screen.form.choices == first
    again = ui_app.make_app(AppOptions(data, [deck], clock=FixedClock(NOW + dt.timedelta(hours=1))))
    again.session.queue = ["t-diag"]
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert again.screen.form.choices == first


async def test_card_flag_opens_one_card_and_cram_leaves_the_schedule(tmp_path, write_deck):
    deck = write_deck(DECK.rstrip("\n") + "\n" + CONCEPTS)
    data = tmp_path / "data"
    app = ui_app.make_app(AppOptions(data, [deck], clock=FixedClock(NOW), card_id="k-spare", cram=True))
    assert app.session.queue == ["k-spare"]
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "5")
        await settle(pilot)
    assert db(data, "SELECT card_id, grade, mode FROM review_log") == [("k-spare", 5, "cram")]
    assert db(data, "SELECT due, repetitions FROM card_state WHERE card_id='k-spare'") in ([], [(None, 0)])
    app = ui_app.make_app(AppOptions(data, [deck], clock=FixedClock(NOW), card_id="k-spare"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "5")
        await settle(pilot)
    assert db(data, "SELECT due FROM card_state WHERE card_id='k-spare'") == [("2026-05-11",)]


def test_unknown_card_flag_is_a_one_line_error(tmp_path, write_deck, capsys):
    from drill.cli import main

    deck = write_deck(DECK)
    code = main(["--data-dir", str(tmp_path / "d"), "--decks", str(deck), "--card", "t-shap"])
    err = capsys.readouterr().err
    assert code == 2
    assert "no card 't-shap'" in err and "t-shape" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "first, answer",
    [
        ("k-concept", [*"first", "enter"]),
        ("t-shape", [*"(B, S, D)", "enter", *"(B, H, S, Dh)", "enter", *"(B, H, S, S)", "enter"]),
        ("t-ledger", [*"1.5625 GiB", "enter"]),
    ],
)
async def test_text_typed_in_the_burst_after_a_grade_starts_the_next_answer(tmp_path, write_deck, first, answer):
    """A fast typist grades and goes on typing: the characters after the grade key belong to the next card."""
    app, data = make_app(tmp_path, write_deck, first)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await burst(pilot, answer)
        assert app.screen.revealed and app.focused is None  # nothing on a revealed card takes text
        await burst(pilot, ["4", *"next 4 answer"])
        assert app.screen.card.id != first and not app.screen.revealed
        first_field = app.screen.form.inputs()[0]
        assert first_field.value == "next 4 answer" and app.focused is first_field
        assert db(data, "SELECT card_id, grade FROM review_log") == [(first, 4)]  # the digit typed later graded nothing


async def test_a_burst_from_the_evidence_checks_a_diagnosis(tmp_path, write_deck):
    """tab, enter (the first reading), the experiment and enter, typed at once on the page: the form is checked."""
    app, data = make_app(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.focused is app.screen.query_one("#body")
        await burst(pilot, ["tab", "enter", *"pin the host memory", "enter"])
        assert app.screen.revealed
        assert app.screen.answer_record["experiment"] == "pin the host memory"
        assert app.screen.answer_record["choice"] == app.screen.answer_record["order"][0]  # the first reading
        assert db(data, "SELECT count(*) FROM review_log") in (None, [(0,)])  # checked, not graded


async def test_a_burst_into_the_mock_length_and_the_browser_search_lands_in_order(tmp_path, write_deck):
    """Backspace then digits in one read: Textual ran a text box's bindings after the characters behind them."""
    app, _ = make_app(tmp_path, write_deck, "k-concept")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+o")
        await settle(pilot)
        minutes = app.screen.query_one("#minutes", Input)
        assert app.screen.focused is minutes and minutes.value == "45"
        await burst(pilot, ["backspace", "backspace", "2", "0"])  # 45 is selected on focus: one backspace clears it
        assert minutes.value == "20"
        await burst(pilot, ["backspace", "backspace", "1", "5", "left", "backspace", "3"])
        assert minutes.value == "35" and app.screen.plan is not None and app.screen.plan.planned_minutes <= 35
        await type_keys(pilot, "escape")
        await settle(pilot)
        await type_keys(pilot, "ctrl+f")
        await settle(pilot)
        query = app.screen.query_one("#query", Input)
        await burst(pilot, [*"kind:conceptx", "backspace", " ", "ctrl+u", *"id:k-c"])
        assert query.value == "id:k-c"


async def test_text_typed_before_the_next_field_has_taken_focus_is_kept(tmp_path, write_deck):
    """Enter and the first characters of the next answer in one read reach the field before its Focus event:
    that event selected them, and the next key typed replaced them ((B, H, S, Dh) became H, S, Dh))."""
    app, _ = make_app(tmp_path, write_deck, "t-shape")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first, second = app.screen.form.inputs()[:2]
        app.screen.set_focus(first)
        await settle(pilot)
        for key in [*"(B, S, D)", "enter", *"(B, "]:  # one read: all queued before any is handled
            event = key_event(key)
            event.set_sender(app)
            app.post_message(event)
        await handled(pilot)
        await type_keys(pilot, *"H, S, Dh)")
        assert (first.value, second.value) == ("(B, S, D)", "(B, H, S, Dh)")
