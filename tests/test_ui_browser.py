"""Pilot tests of the card browser: search as you type, unsuspend, practise a card now."""

import datetime as dt

from textual.widgets import DataTable, Input, Static

from drill.store.records import CardState
from drill.store.store import Store
from drill.ui.app import DrillApp
from drill.ui.browser import BrowserScreen
from drill.ui.review import ReviewScreen
from tests.conftest import FixedClock, rows, settle, type_keys, until
from tests.test_ui_checked import DECK
from tests.test_ui_keys import burst

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
    app = DrillApp(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        assert sorted(shown_ids(app)) == ["t-diag", "t-ledger", "t-shape"]
        assert "3 of 3 card(s) match" in str(app.screen.query_one("#btop", Static).render())
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
    app = DrillApp(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1)
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
    app = DrillApp(data, [write_deck(DECK)], clock=FixedClock(NOW), seed=1)
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


async def test_enter_practises_the_highlighted_card_now(tmp_path, write_deck):
    app = DrillApp(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        target = next(c for c in ("t-diag", "t-ledger") if c != app.screen.card.id)
        await open_browser(pilot)
        await search(pilot, f"id:{target}")
        assert shown_ids(app) == [target]
        await type_keys(pilot, "tab", "enter")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ReviewScreen) and app.screen.card is not None and app.screen.card.id == target
            ),
            f"{target} shown for practice",
        )
        assert len(app.screen_stack) == 2  # the default screen and one review screen: nothing left beneath


async def test_a_search_that_finds_nothing_clears_the_card_shown_and_names_a_misspelt_filter(tmp_path, write_deck):
    app = DrillApp(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1)
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
