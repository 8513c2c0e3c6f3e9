"""The start's reads in one look: the saved settings with the card states, and today's grades with the progress
rows and the replayed log, are what the separate reads give."""

import datetime as dt
import sqlite3
import subprocess
import sys

from drill.store import reader, start_read
from drill.store.store import Store
from drill.study.forecast import MemoryModel, replay_day
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


def _counting_connections(monkeypatch):
    """The database connections opened from here on (each read of the reader opens one)."""
    opened = []
    real = sqlite3.connect

    def connect(*args, **kwargs):
        opened.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    return opened


def _no_second_read(*args):
    raise AssertionError("the start read the log apart from the day")


def test_the_day_and_the_replay_are_read_on_one_connection_as_apart(tmp_path, monkeypatch):
    _graded_store(tmp_path)
    log = reader.read_log(tmp_path)
    expected = replay_day(log, DAY, MemoryModel())
    apart = reader.read_day(tmp_path, DAY, progress=True)
    monkeypatch.setattr(reader, "read_log_from", _no_second_read)
    opened = _counting_connections(monkeypatch)
    day = start_read.read_day(tmp_path, DAY, progress=True, model=MemoryModel())
    assert len(opened) == 1
    assert (day.graded_today, day.progress) == (apart.graded_today, apart.progress)
    assert day.replayed is not None
    assert (day.replayed.at_start, day.replayed.now) == (expected.at_start, expected.now)
    assert day.replayed.replayed == len(log) == 3
    again = start_read.read_day(tmp_path, DAY, progress=False, model=MemoryModel())
    assert again.replayed is not None and again.replayed.replayed == 2  # the day's own two rows: its start was kept
    assert (again.replayed.at_start, again.replayed.now) == (expected.at_start, expected.now)
    assert len(opened) == 2


def test_before_the_first_run_the_replay_is_of_an_empty_log(tmp_path):
    day = start_read.read_day(tmp_path / "none", DAY, progress=False, model=MemoryModel())
    assert day.graded_today == {} and day.progress is None
    assert day.replayed is not None and day.replayed.replayed == 0
    assert day.replayed.now.cards == {} and day.replayed.now.tally.reviews == 0


def test_a_start_without_a_memory_model_reads_no_replay(tmp_path):
    _graded_store(tmp_path)
    code = (
        "import sys, datetime as dt; from drill.store import start_read; "
        f"day = start_read.read_day(sys.argv[1], dt.date({DAY.year}, {DAY.month}, {DAY.day}), progress=False, model=None); "
        "print(day.graded_today, day.replayed, 'drill.study.forecast' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["{'a':", "2}", "None", "False"]
    assert not (tmp_path / "replay.json").exists()
