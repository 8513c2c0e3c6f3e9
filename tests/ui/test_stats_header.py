"""The stats screen's header counts its cards, reviews and mocks in words that agree with the number."""

import datetime as dt

from textual.widgets import Static

from drill.start import AppOptions
from drill.store.store import Store
from drill.study.records import CardState
from drill.ui.app import make_app
from tests.conftest import FixedClock
from tests.ui.test_stats import open_stats

NOW = dt.datetime(2026, 5, 10, 12, 0)


async def test_one_review_and_one_card_are_said_in_the_singular(tmp_path, concept_deck):
    data = tmp_path / "data"
    store = Store(data)
    day = NOW.date() - dt.timedelta(days=1)
    at = dt.datetime.combine(day, dt.time(9, 0))
    store.record_review(CardState("c00"), CardState("c00"), grade=4, at=at, day=day, mode="review", duration_ms=0)
    store.close()
    app = make_app(AppOptions(data, [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_stats(pilot)
        header = str(screen.query_one("#sttop", Static).render())
        assert "1 card · 1 review · " in header and "0 mocks" in header
        assert "1 cards" not in header and "1 reviews" not in header


def test_drill_stats_says_one_review_in_the_singular(tmp_path, concept_deck, capsys):
    from drill.cli import main

    data = tmp_path / "data"
    store = Store(data)
    day = dt.date.today() - dt.timedelta(days=1)
    at = dt.datetime.combine(day, dt.time(9, 0))
    store.record_review(CardState("c00"), CardState("c00"), grade=4, at=at, day=day, mode="review", duration_ms=0)
    store.close()
    assert main(["stats", "--data-dir", str(data), "--decks", str(concept_deck(1))]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert ", 1 review logged" in first and "1 reviews" not in first
