"""Pilot tests of the card browser: search as you type, unsuspend, practise a card now and come back."""

import datetime as dt

from textual.widgets import DataTable, Input, Static

from drill.start import AppOptions
from drill.store.store import Store
from drill.study.records import CardState
from drill.ui.app import make_app
from drill.ui.browser import BrowserScreen
from drill.ui.review import ReviewScreen
from tests.conftest import FixedClock, rows, settle, type_keys, until
from tests.ui.test_checked import DECK
from tests.ui.test_keys import burst

NOW = dt.datetime(2026, 5, 10, 12, 0)


def shown_ids(app):
    table = app.screen.query_one("#results", DataTable)
    return [table.get_row_at(i)[0].plain for i in range(table.row_count)]


def detail(app):
    return "\n".join(str(app.screen.query_one(f"#{part}", Static).render()) for part in ("dinfo", "dhist"))


async def open_browser(pilot):
    await settle(pilot)
    await type_keys(pilot, "ctrl+f")
    await until(pilot, lambda: isinstance(pilot.app.screen, BrowserScreen), "the browser opened")


async def search(pilot, text):
    field = pilot.app.screen.query_one("#query", Input)
    field.focus()
    field.value = ""
    await type_keys(pilot, *text)
    await settle(pilot)


async def test_typing_a_filter_narrows_the_list(tmp_path, write_deck):
    app = make_app(AppOptions(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        assert sorted(shown_ids(app)) == ["t-diag", "t-ledger", "t-shape"]
        assert "found 3 of 3 cards" in str(app.screen.query_one("#btop", Static).render())
        await search(pilot, "kind:diagnosis")
        assert app.screen.query_one("#query", Input).value == "kind:diagnosis"
        assert shown_ids(app) == ["t-diag"]
        text = detail(app)
        assert "What bounds this kernel?" in text and "topic profiling" in text and "no reviews yet" in text
        await search(pilot, '"near peak"')  # a phrase of the answer
        assert shown_ids(app) == ["t-diag"]
        await search(pilot, "kind:diagnosis topic:serving")
        assert shown_ids(app) == [] and "No card matches" in detail(app)
        await type_keys(pilot, "escape")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)


async def test_tab_moves_between_the_search_and_the_list(tmp_path, write_deck):
    app = make_app(AppOptions(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        assert app.screen.focused is app.screen.query_one("#query", Input)
        await type_keys(pilot, "down")  # from the search field, the arrows move through the list
        await settle(pilot)
        table = app.screen.query_one("#results", DataTable)
        assert table.cursor_row == 1 and shown_ids(app)[1] in detail(app)
        await type_keys(pilot, "tab")
        assert app.screen.focused is table
        await type_keys(pilot, "shift+tab")
        assert app.screen.focused is app.screen.query_one("#query", Input)
        highlighted = shown_ids(app)[1]
        await pilot.resize_terminal(120, 30)  # the id column takes the new width; the highlight stays
        await settle(pilot)
        table = app.screen.query_one("#results", DataTable)
        assert table.columns["id"].width == 50 and table.cursor_row == 1 and shown_ids(app)[1] == highlighted


async def test_a_suspended_card_is_found_and_unsuspended(tmp_path, write_deck):
    data = tmp_path / "data"
    store = Store(data)
    store.set_suspended(CardState("t-shape"), True)
    store.record_review(
        CardState("t-ledger"),
        CardState("t-ledger"),
        grade=2,
        at=dt.datetime(2026, 5, 9, 9),
        day=dt.date(2026, 5, 9),
        duration_ms=900,
        mode="review",
    )
    store.close()
    app = make_app(AppOptions(data, [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        await search(pilot, "is:suspended")
        assert shown_ids(app) == ["t-shape"]
        table = app.screen.query_one("#results", DataTable)
        assert table.get_row_at(0)[3].plain == "suspended"
        assert "suspended" in detail(app)
        await type_keys(pilot, "ctrl+r")
        await until(
            pilot, lambda: rows(data, "SELECT suspended FROM card_state WHERE card_id='t-shape'") == [(0,)], "saved"
        )
        assert table.get_row_at(0)[3].plain == "new"
        assert "new: not studied yet" in detail(app)
        await search(pilot, "is:suspended")
        assert shown_ids(app) == []
        await search(pilot, "id:ledger")
        assert "2026-05-09 2 almost  review" in detail(app)


async def test_enter_practises_the_highlighted_card_and_comes_back_to_the_search(tmp_path, concept_deck):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [concept_deck(3)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        review = app.screen
        assert review.card.id == "c00"
        await open_browser(pilot)
        await search(pilot, "question c01")
        assert shown_ids(app)[0] == "c01"
        await type_keys(pilot, "tab", "enter")
        await until(pilot, lambda: getattr(app.screen, "card", None) is not None, "c01 shown for practice")
        assert app.screen.card.id == "c01"
        assert any("practise c01" in n.message for n in app._notifications)
        assert not any("card(s)" in n.message for n in app._notifications)
        await type_keys(pilot, "enter", "4")  # the answer, then a grade
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen), "back in the browser")
        await settle(pilot)  # the grade's write runs behind the next paint
        assert rows(data, "SELECT card_id, grade, mode FROM review_log") == [("c01", 4, "review")]
        # the search as it was, the card's new schedule and history; never an "All done" page
        assert app.screen.query_one("#query", Input).value == "question c01"
        assert shown_ids(app)[0] == "c01"
        await until(pilot, lambda: "2026-05-10 4" in detail(app), "the history read again")
        assert "due 2026-05-11" in detail(app)
        await search(pilot, "is:today")
        assert shown_ids(app) == ["c01"]
        await type_keys(pilot, "escape")  # the review beneath goes on where it was
        await settle(pilot)
        assert app.screen is review and review.card.id == "c00"
        assert review.context.session.states["c01"].last_review_day == NOW.date()
        await type_keys(pilot, "enter", "4")
        await settle(pilot)
        assert review.card.id == "c02"  # c01 was reviewed from the browser: not asked twice today
        assert rows(data, "SELECT card_id FROM review_log ORDER BY id") == [("c01",), ("c00",)]


async def test_ctrl_f_leaves_a_card_practised_from_the_browser_ungraded(tmp_path, concept_deck):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [concept_deck(2)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        await search(pilot, "id:c01")
        await type_keys(pilot, "tab", "enter")
        await until(pilot, lambda: getattr(app.screen, "card", None) is not None, "c01 shown for practice")
        await type_keys(pilot, "ctrl+f")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen), "back in the browser")
        assert app.screen.query_one("#query", Input).value == "id:c01"
        assert [type(screen) for screen in app.screen_stack] == [ReviewScreen, BrowserScreen]  # no second browser
        assert rows(data, "SELECT count(*) FROM review_log") == [(0,)]


async def test_is_today_lists_the_cards_graded_today(tmp_path, write_deck):
    data = tmp_path / "data"
    store = Store(data)
    for day in (NOW.date(), NOW.date() - dt.timedelta(days=1)):
        card_id = "t-diag" if day == NOW.date() else "t-shape"
        at = dt.datetime.combine(day, dt.time(9))
        store.record_review(CardState(card_id), CardState(card_id), grade=4, at=at, day=day, duration_ms=9, mode="cram")
    store.close()
    app = make_app(AppOptions(data, [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        await search(pilot, "is:today")
        await until(pilot, lambda: shown_ids(app) == ["t-diag"], "the card graded today, read from the log")
        await search(pilot, "is:reviewed")
        assert shown_ids(app) == []
        assert "no is 'reviewed', did you mean is:review?" in detail(app)


async def test_a_search_that_finds_nothing_clears_the_card_shown_and_names_a_misspelt_filter(tmp_path, write_deck):
    app = make_app(AppOptions(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        assert shown_ids(app)[0] in detail(app)
        field = app.screen.query_one("#query", Input)
        field.focus()
        await burst(pilot, list("topc:gemm"))  # each key a search: the lists of "t", "to"... came and went
        await settle(pilot)
        assert shown_ids(app) == []
        text = detail(app)
        assert "No card matches" in text and "did you mean topic:?" in text
        assert not any(card_id in text for card_id in ("t-diag", "t-ledger", "t-shape"))
