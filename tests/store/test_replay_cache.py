"""The replay cache: the log's replay through FSRS taken on from where it stopped, with the very figures a whole replay gives."""

import datetime as dt
import sqlite3

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.store import reader, replay_cache
from drill.store.store import Store
from drill.study.calibration import calibrate
from drill.study.forecast import MemoryModel, replay, replay_day
from drill.study.readiness import calibration
from drill.workspace import Workspace
from tests.study.test_fitting import START, simulated_history

MODEL = MemoryModel()


@pytest.fixture(scope="module")
def history():
    """About 600 scheduled reviews with their same-day repeats over a few weeks: (card, day, grade, mode) each."""
    return [(r.card_id, r.day, r.grade, r.mode) for r in simulated_history(600)]


def make_data(tmp_path):
    data = tmp_path / "home"
    data.mkdir()
    Store(data).close()
    return data


def insert(data, rows, second=0):
    """Log `rows` as the review app does (new ids, oldest first); each gets its own time of day."""
    conn = sqlite3.connect(data / reader.DB_NAME)
    with conn:
        conn.executemany(
            "INSERT INTO review_log(card_id, reviewed_at, day, grade, mode) VALUES(?, ?, ?, ?, ?)",
            [
                (
                    card,
                    f"{day.isoformat()}T10:{(second + i) // 60 % 60:02d}:{(second + i) % 60:02d}.{i:06d}",
                    day.isoformat(),
                    grade,
                    mode,
                )
                for i, (card, day, grade, mode) in enumerate(rows)
            ],
        )
    conn.close()


def delete(data, log_id):
    conn = sqlite3.connect(data / reader.DB_NAME)
    with conn:
        conn.execute("DELETE FROM review_log WHERE id = ?", (log_id,))
    conn.close()


def assert_as_whole_replay(day, data, today, model=MODEL):
    """The cached replay holds what one replay of the whole log gives, to the last digit."""
    expected = replay_day(reader.read_log(data), today, model)
    assert day.at_start == expected.at_start
    assert day.now == expected.now
    assert day.now.tally.calibration() == calibrate(replay(reader.read_log(data), model).outcomes)


def split(history, day):
    return [r for r in history if r[1] < day], [r for r in history if r[1] >= day]


def test_a_second_replay_takes_on_only_the_new_rows_with_the_same_figures(tmp_path, history):
    data = make_data(tmp_path)
    middle = START + dt.timedelta(days=15)
    end = history[-1][1] + dt.timedelta(days=1)
    first, second = split(history, middle)
    insert(data, first)
    day = replay_cache.replay_day(data, MODEL, middle)
    assert day.replayed == len(first)
    assert_as_whole_replay(day, data, middle)

    insert(data, second, second=len(first))
    day = replay_cache.replay_day(data, MODEL, end)
    assert day.replayed == len(second)  # the first days come from the cache
    assert_as_whole_replay(day, data, end)
    assert replay_cache.replay_day(data, MODEL, end).replayed == 0  # nothing new: nothing replayed


def test_grades_of_the_cached_day_itself_are_replayed_on_top_of_its_start(tmp_path, history):
    data = make_data(tmp_path)
    today = history[-1][1]
    earlier, todays = split(history, today)
    insert(data, earlier)
    assert replay_cache.replay_day(data, MODEL, today).replayed == len(earlier)
    insert(data, todays[:3], second=len(earlier))
    day = replay_cache.replay_day(data, MODEL, today)
    assert day.replayed == 3
    assert_as_whole_replay(day, data, today)
    insert(data, todays[3:], second=len(earlier) + 3)
    day = replay_cache.replay_day(data, MODEL, today)
    assert day.replayed == len(todays)  # the day's rows, from its start: the cache keeps the start of the day
    assert_as_whole_replay(day, data, today)


def cached_then(tmp_path, history):
    """A data folder whose cache holds the first half of the history, and the day after it."""
    data = make_data(tmp_path)
    middle = START + dt.timedelta(days=15)
    first, second = split(history, middle)
    insert(data, first)
    replay_cache.replay_day(data, MODEL, middle)
    return data, middle, first, second


def test_an_undone_review_before_the_cached_day_means_a_whole_replay(tmp_path, history):
    data, middle, first, _ = cached_then(tmp_path, history)
    delete(data, 40)
    day = replay_cache.replay_day(data, MODEL, middle)
    assert day.replayed == len(first) - 1
    assert_as_whole_replay(day, data, middle)


def test_an_undo_then_a_grade_that_takes_the_freed_id_means_a_whole_replay(tmp_path, history):
    data, middle, first, _ = cached_then(tmp_path, history)
    newest = len(first)
    card, day, grade, mode = first[-1]
    delete(data, newest)
    insert(data, [(card, day, 5 - grade, mode)], second=7)  # SQLite gives the new row the freed id
    assert reader.read_log(data)[-1].id == newest
    replayed = replay_cache.replay_day(data, MODEL, middle)
    assert replayed.replayed == len(first)
    assert_as_whole_replay(replayed, data, middle)


def test_imported_older_reviews_mean_a_whole_replay(tmp_path, history):
    data, middle, first, _ = cached_then(tmp_path, history)
    older = START - dt.timedelta(days=3)
    insert(data, [("card-0", older, 4, "review"), ("imported", older, 1, "review")], second=3)
    day = replay_cache.replay_day(data, MODEL, middle)
    assert day.replayed == len(first) + 2
    assert_as_whole_replay(day, data, middle)


def test_other_fitted_parameters_are_another_replay(tmp_path, history):
    data, middle, first, _ = cached_then(tmp_path, history)
    fitted = list(DEFAULT_PARAMETERS)
    fitted[2] = 1.0
    model = MemoryModel(tuple(fitted))
    day = replay_cache.replay_day(data, model, middle)
    assert day.replayed == len(first)
    assert_as_whole_replay(day, data, middle, model)
    assert day.now.tally != replay_cache.replay_day(data, MODEL, middle).now.tally
    assert replay_cache.replay_day(data, MemoryModel(max_interval=30), middle).replayed == len(first)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: b"",
        lambda text: text[: len(text) // 2],
        lambda text: text.replace(b'"before"', b'"b4"'),
        lambda text: text.replace(b'"cards":{"id":[', b'"cards":{"id":[7,'),
        lambda text: text.replace(b"[[", b"[[1e400,", 1),
        lambda text: text.rsplit(b"\n", 2)[0] + b"\n" + b"\xff\xfe\n" + text.rsplit(b"\n", 2)[2],
        lambda text: text.replace(b'"whole_mark":[', b'"whole_mark":["x",'),
    ],
    ids=["empty", "cut short", "a key renamed", "a card spoiled", "a number spoiled", "not UTF-8", "a mark spoiled"],
)
def test_a_spoiled_cache_is_replayed_again_with_the_same_figures(tmp_path, history, spoil):
    data, middle, first, second = cached_then(tmp_path, history)
    insert(data, second[:20], second=len(first))
    cache = replay_cache.cache_path(data)
    cache.write_bytes(spoil(cache.read_bytes()))
    day = replay_cache.replay_day(data, MODEL, middle)
    assert day.replayed in (len(first) + 20, 20)  # a part the replay does not need may be spoiled
    assert_as_whole_replay(day, data, middle)
    expected = calibration(reader.read_log(data), MODEL).as_json()
    cache.write_bytes(spoil(cache.read_bytes()))
    assert replay_cache.calibration_tally(data, MODEL, middle).calibration() == calibrate(
        replay(reader.read_log(data), MODEL).outcomes
    )
    assert Workspace(data, []).calibration().as_json() == expected


def test_the_calibration_reads_no_row_when_nothing_was_graded_since(tmp_path, history, monkeypatch):
    data, middle, first, second = cached_then(tmp_path, history)
    expected = calibrate(replay(reader.read_log(data), MODEL).outcomes)
    read = []
    real = reader.read_log_from
    monkeypatch.setattr(reader, "read_log_from", lambda *a: read.append(a) or real(*a))
    assert replay_cache.calibration_tally(data, MODEL, middle).calibration() == expected
    assert read == []
    insert(data, second[:5], second=len(first))
    tally = replay_cache.calibration_tally(data, MODEL, middle)
    assert tally.calibration() == calibrate(replay(reader.read_log(data), MODEL).outcomes)
    assert len(read) == 1


def test_the_workspace_figures_are_those_of_a_whole_replay(tmp_path, history):
    data = make_data(tmp_path)
    insert(data, history)
    workspace = Workspace(data, [], clock=lambda: dt.datetime.combine(history[-1][1], dt.time(12)))
    expected = calibration(reader.read_log(data), MODEL).as_json()
    assert workspace.calibration().as_json() == expected  # replayed, then written
    assert replay_cache.cache_path(data).exists()
    assert workspace.calibration().as_json() == expected  # from the cache
    today = history[-1][1]
    cached = workspace.replay_day(today)
    expected_day = replay_day(reader.read_log(data), today)
    assert (cached.at_start, cached.now) == (expected_day.at_start, expected_day.now)
    assert cached.replayed < expected_day.replayed  # the day's own rows only


@pytest.mark.parametrize("change", ["undo", "import"])
def test_a_changed_log_before_the_cached_day_is_replayed_whole_in_the_same_read(tmp_path, history, monkeypatch, change):
    data, middle, first, _ = cached_then(tmp_path, history)
    if change == "undo":
        delete(data, 40)
    else:
        insert(data, [("imported", START - dt.timedelta(days=3), 1, "review")], second=3)
    expected = len(first) - 1 if change == "undo" else len(first) + 1
    asked = []
    real = reader.read_log_from
    monkeypatch.setattr(reader, "read_log_from", lambda *a: asked.append(a[1]) or real(*a))
    day = replay_cache.replay_day(data, MODEL, middle)
    assert len(asked) == 1 and asked[0].kept is not None  # the cached day was asked for, once
    assert day.replayed == expected  # and the reader read every row instead
    assert_as_whole_replay(day, data, middle)
