"""One write path: the workspace's Writes, the only door the app writes through, keeps the derived data true.

The replay of the log and its digest (what readiness, calibration and the plan read) are
kept by the writers: after an import or an undo that reaches before today the cache is
already current, and the figures taken on incrementally are exactly a whole rebuild's.
"""

import ast
import datetime as dt
import json
from pathlib import Path

import pytest

from drill.store import reader, replay_cache, replay_json
from drill.store.store import Store
from drill.study.calibration import week_check
from drill.study.forecast import MemoryModel, replay, replay_day, replay_order
from drill.study.grades import grade_mix
from drill.study.pace import learned_pace
from drill.study.records import CardState, LoggedReview
from drill.workspace import Workspace
from tests.conftest import stretched
from tests.study.test_fitting import START, simulated_history

DRILL = Path(__file__).resolve().parents[2] / "drill"
MODEL = MemoryModel()
# The command line's data commands may hold the Store itself (an import, an export, a scheduler switch)
DATA_COMMANDS = {"cli/config.py", "cli/exchange.py", "cli/fsrs.py", "cli/mock.py"}


@pytest.fixture(scope="module")
def history():
    """About 300 reviews over a few weeks, each with the seconds it took."""
    return [
        LoggedReview(r.id, r.card_id, r.day, r.grade, r.mode, r.reviewed_at, duration_ms=1000 + 137 * (r.id % 90))
        for r in simulated_history(300)
    ]


def import_row(review: LoggedReview) -> dict:
    state = json.dumps(CardState(review.card_id).as_json())
    return {
        "card_id": review.card_id,
        "reviewed_at": review.reviewed_at,
        "day": review.day.isoformat(),
        "grade": review.grade,
        "mode": review.mode,
        "duration_ms": review.duration_ms,
        "state_before": state,
        "state_after": state,
    }


def workspace_on(data: Path, today: dt.date) -> Workspace:
    return Workspace(data, clock=lambda: dt.datetime.combine(today, dt.time(12)))


def record(writes, card_id: str, day: dt.date, grade: int, second: int = 0) -> int:
    state = CardState(card_id)
    return writes.record_review(
        state,
        state,
        grade=grade,
        at=dt.datetime.combine(day, dt.time(12, 0, second)),
        day=day,
        duration_ms=4000,
        mode="review",
    )


def assert_cached_as_rebuilt(data: Path, today: dt.date) -> None:
    """What the cache gives without replaying anything holds, to the last digit, what a whole rebuild gives."""
    cached = replay_cache.replay_day(data, MODEL, today)
    rebuilt = replay_day(reader.read_log(data), today, MODEL)
    assert replay_json.state_json(cached.at_start) == replay_json.state_json(rebuilt.at_start)
    assert replay_json.state_json(cached.now) == replay_json.state_json(rebuilt.now)
    assert cached.at_start == rebuilt.at_start


# -- only the workspace and the data commands touch the Store ------------------------------
def _calls_to_store(path: Path) -> list[int]:
    """Lines of `path` that call `<something>.store()` or construct `Store(...)`."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "store" and not node.args:
            lines.append(node.lineno)
        elif isinstance(func, ast.Name) and func.id == "Store":
            lines.append(node.lineno)
    return sorted(lines)


def test_nothing_outside_the_workspace_and_the_data_commands_opens_the_store():
    outside = {}
    for path in sorted(DRILL.rglob("*.py")):
        where = path.relative_to(DRILL).as_posix()
        if where.startswith("store/") or where == "workspace.py" or where in DATA_COMMANDS:
            continue
        lines = _calls_to_store(path)
        if lines:
            outside[where] = lines
    assert outside == {}


def test_the_check_finds_a_store_opened_elsewhere(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def grade(workspace):\n    workspace.store().record_review()\n    Store(path)\n")
    assert _calls_to_store(sneaky) == [2, 3]


# -- every write that changes the log says how far back it reached -----------------------------
def test_each_write_to_the_log_tells_the_earliest_day_it_changed(tmp_path):
    store = Store(tmp_path)
    try:
        day = dt.date(2026, 3, 10)
        assert store.take_log_change() is None
        log_id = record(store, "a", day, 4)
        assert store.take_log_change() == day
        assert store.take_log_change() is None  # taken once
        store.set_suspended(CardState("a"), True)
        store.record_kernel_attempt("a", "src", {"ok": True})
        store.set_setting("k", "v")
        assert store.take_log_change() is None  # the log is untouched
        store.undo_review(log_id)
        assert store.take_log_change() == day
        older = LoggedReview(1, "b", day - dt.timedelta(days=5), 3, "review", "2026-03-05T10:00:00")
        newer = LoggedReview(2, "b", day - dt.timedelta(days=2), 4, "review", "2026-03-08T10:00:00")
        store.import_reviews([import_row(newer), import_row(older)])
        assert store.take_log_change() == older.day
    finally:
        store.close()


# -- the derived data, kept by the writers ------------------------------------------------------
def test_an_import_leaves_the_replay_current_so_the_next_look_replays_nothing(tmp_path, history):
    today = history[-1].day + dt.timedelta(days=1)
    data = tmp_path / "home"
    data.mkdir()
    workspace = workspace_on(data, today)
    try:
        half = len(history) // 2
        workspace.import_reviews(import_row(r) for r in history[half:])
        assert workspace.replay_day(today).replayed == 0  # the import brought the cache up to date
        workspace.import_reviews(import_row(r) for r in history[:half])  # older reviews: before the cached ones
        assert workspace.replay_day(today).replayed == 0
        assert_cached_as_rebuilt(data, today)
    finally:
        workspace.close()


def test_grades_day_after_day_then_an_undo_across_days_match_a_whole_rebuild(tmp_path, history):
    data = tmp_path / "home"
    data.mkdir()
    days = sorted({r.day for r in history})
    for day in days:
        workspace = workspace_on(data, day)
        try:
            writes = workspace.writes()
            for i, review in enumerate(r for r in history if r.day == day):
                writes.record_review(
                    CardState(review.card_id),
                    CardState(review.card_id),
                    grade=review.grade,
                    at=dt.datetime.combine(day, dt.time(9)) + dt.timedelta(seconds=i),
                    day=day,
                    duration_ms=review.duration_ms,
                    mode=review.mode,
                )
            workspace.readiness(day)  # nothing without a date; the cache moves on with each look below
            workspace.replay_day(day)
        finally:
            workspace.close()
    today = days[-1] + dt.timedelta(days=1)
    assert_cached_as_rebuilt(data, today)
    workspace = workspace_on(data, today)
    try:
        assert workspace.replay_day(today).replayed == 0
        workspace.writes().undo_review(5)  # a review of the first day: the writer rebuilds at once
        assert workspace.replay_day(today).replayed == 0
        assert_cached_as_rebuilt(data, today)
        rebuilt = workspace.rebuild_derived()
        assert replay_json.state_json(rebuilt.now) == replay_json.state_json(
            replay_cache.replay_day(data, MODEL, today).now
        )
    finally:
        workspace.close()


def test_the_digest_holds_what_the_plan_read_from_the_whole_log(history):
    """Pace, grade mix, study days and the week's check from the replay's digest: the figures the log gives."""
    today = history[-1].day - dt.timedelta(days=3)
    before = sorted((r for r in history if r.day < today), key=replay_order)
    digest = replay_day(history, today, MODEL).at_start.digest
    kinds = {r.card_id: "concept" for r in history}
    assert digest.pace(kinds) == learned_pace(before, kinds)
    assert digest.grade_mix() == grade_mix(before)
    assert digest.study_days == {r.day for r in before}
    start = today - dt.timedelta(days=7)
    replayed = replay(before, MODEL)
    expected = week_check(o for o, r in zip(replayed.outcomes, replayed.predicted) if start <= r.day < today)
    week = digest.week(today)
    assert week.reviews == expected.reviews > 0
    assert week.predicted == pytest.approx(expected.predicted, rel=1e-12)
    assert week.recalled == expected.recalled


def test_the_digest_reads_back_from_its_json(history):
    state = replay_day(history, history[-1].day, MODEL).at_start
    back = replay_json.state_from_json(json.loads(json.dumps(replay_json.state_json(state))))
    assert back == state


def test_unsuspend_through_the_write_path(tmp_path):
    workspace = workspace_on(tmp_path, START)
    try:
        writes = workspace.writes()
        assert writes.unsuspend("nobody") is False
        writes.set_suspended(CardState("a"), True)
        assert writes.unsuspend("a") is True
        assert workspace.states()["a"].suspended is False
        assert writes.unsuspend("a") is False
    finally:
        workspace.close()


def test_the_store_opens_in_the_background_and_says_what_changed(tmp_path):
    workspace = workspace_on(tmp_path, START)
    try:
        first = workspace.open_writes({"new_per_day": "7"}, {"a": "hash-1"}, dt.datetime(2026, 3, 1, 9))
        opened = first.result(timeout=stretched(120))
        assert workspace.open_writes({}, {}, dt.datetime(2026, 3, 1, 9)) is first  # opened once
        assert opened.changed_cards == []
        assert workspace.saved_settings()["new_per_day"] == "7"
    finally:
        workspace.close()


# -- the grade's write behind the review screen ------------------------------------------------------
def test_writes_behind_the_screen_run_in_order_when_started_and_an_undo_waits_for_them(tmp_path):
    workspace = workspace_on(tmp_path, START)
    try:
        writes = workspace.writes()
        started = []
        failures = []
        behind = writes.write_behind(started.append, failures.append)
        first = record(behind, "a", START, 2)
        second = record(behind, "b", START, 5, second=1)
        assert len(started) == 2  # a job asked to run per write
        assert reader.read_log(tmp_path) == []  # nothing written until a job runs
        state = CardState("c")
        behind.set_suspended(state, True)
        assert state.suspended  # the caller's record at once
        started[0]()  # the first job runs every queued write, oldest first
        assert [r.card_id for r in reader.read_log(tmp_path)] == ["a", "b"]
        assert workspace.states()["c"].suspended
        started[1]()  # nothing left: nothing written twice
        assert len(reader.read_log(tmp_path)) == 2
        record(behind, "d", START, 4, second=2)
        restored = behind.undo_review(second)  # drains "d" first, then undoes b's real row
        assert restored == CardState("b")
        assert [r.card_id for r in reader.read_log(tmp_path)] == ["a", "d"]
        assert behind.undo_review(first) == CardState("a")
        assert failures == []
    finally:
        workspace.close()


def test_a_write_behind_that_fails_is_said_and_the_next_still_runs(tmp_path):
    workspace = workspace_on(tmp_path, START)
    try:
        failures = []
        behind = workspace.writes().write_behind(lambda job: None, failures.append)
        behind.bury(CardState("x"), START)
        ticket = record(behind, "a", START, 4)
        behind._pending.appendleft(lambda: 1 / 0)  # a write that fails ahead of the others
        workspace.settle_writes()
        assert [type(exc) for exc in failures] == [ZeroDivisionError]
        assert [r.card_id for r in reader.read_log(tmp_path)] == ["a"]
        assert workspace.states()["x"].buried_until == START
        assert behind.undo_review(ticket) == CardState("a")
    finally:
        workspace.close()


def test_closing_the_workspace_saves_the_writes_behind(tmp_path):
    workspace = workspace_on(tmp_path, START)
    behind = workspace.writes().write_behind(lambda job: None, lambda exc: None)
    record(behind, "a", START, 4)
    workspace.close()
    assert [r.card_id for r in reader.read_log(tmp_path)] == ["a"]


def test_the_log_count_follows_every_row_whoever_writes_it(tmp_path):
    """The count the replay cache's check reads is kept by SQLite's triggers: raw SQL, the Store and an import alike."""
    import sqlite3

    store = Store(tmp_path)
    try:
        record(store, "a", START, 4)
        store.import_reviews([import_row(LoggedReview(1, "b", START, 3, "review", "2026-01-01T10:00:00"))])
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / reader.DB_NAME)
    with conn:
        conn.execute("INSERT INTO review_log(card_id, reviewed_at, day, grade) VALUES('c', 't', '2026-01-02', 4)")
        conn.execute("DELETE FROM review_log WHERE card_id = 'a'")
    kept = conn.execute("SELECT rows FROM review_log_count").fetchone()[0]
    counted = conn.execute("SELECT COUNT(*) FROM review_log").fetchone()[0]
    conn.close()
    assert kept == counted == 2
    assert reader.log_mark(tmp_path).rows == 2
