"""The start's reads in one look: the saved settings with the card states, and today's grades with the progress
rows, are what the separate reads give."""

import datetime as dt

from drill.store import reader
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State

DAY = dt.date(2026, 5, 10)


def _graded_store(data):
    store = Store(data)
    store.set_setting("new_per_day", "3")
    for card_id, grade, day in (("a", 1, DAY), ("a", 4, DAY), ("b", 5, DAY - dt.timedelta(days=1))):
        after = CardState(card_id, sm2=SM2State(1, 2.5, 1), due=DAY + dt.timedelta(days=1))
        after.introduced_on = after.last_review_day = day
        at = dt.datetime.combine(day, dt.time(10))
        store.record_review(CardState(card_id), after, grade=grade, at=at, day=day, duration_ms=1, mode="review")
    store.close()


def test_settings_and_states_are_read_together_as_apart(tmp_path):
    _graded_store(tmp_path)
    saved, states = reader.read_settings_and_states(tmp_path)
    assert saved == reader.read_settings(tmp_path)
    assert saved["new_per_day"] == "3"
    assert states == reader.read_states(tmp_path)
    assert set(states) == {"a", "b"}


def test_the_day_is_read_together_as_apart(tmp_path):
    _graded_store(tmp_path)
    day = reader.read_day(tmp_path, DAY, progress=True)
    assert day.graded_today == reader.reviews_on(tmp_path, DAY) == {"a": 2}
    assert day.progress == reader.read_progress(tmp_path, DAY)
    assert day.progress is not None and day.progress.total_reviews == 3
    assert reader.read_day(tmp_path, DAY, progress=False).progress is None


def test_before_the_first_run_the_reads_are_empty(tmp_path):
    assert reader.read_settings_and_states(tmp_path / "none") == ({}, {})
    day = reader.read_day(tmp_path / "none", DAY, progress=True)
    assert day.graded_today == {}
    assert day.progress == reader.read_progress(tmp_path / "none", DAY)
