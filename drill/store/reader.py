"""Every read that writes nothing, with the stdlib sqlite3 on a read-only connection.

The first paint (card states, saved settings), the progress figures behind `drill
stats` and the stats screen, the mock commands' looks and the browser's looks at the
review log all read here; the Store (drill.store.store, SQLModel) is for writes.
SQLModel takes most of a second to import on a small machine, and none of these
needs it: the review screen shows its first card from `read_states` and opens the
Store in the background.

The progress figures are sized to the learner's whole history: the card table is
read once (one row per card), recent reviews come from the covering index
`ix_review_log_day_card` (never the log's rows), and mocks and kernel attempts are
small tables. bench/core_loop.py measures them at 10,000 cards and 1,000,000 reviews.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from drill.store import errors, migrations
from drill.store.rows import (
    REVIEW_RECORD_COLUMNS,
    CardTuple,
    ReviewRecord,
    card_state_select,
    figures_from_tuples,
    logged_review_from_row,
    states_from_tuples,
)
from drill.study.records import CardState, LoggedReview, ProgressRows

DB_NAME = "drill.sqlite3"
T = TypeVar("T")

# A mock still marked running this long past its minutes was cut off (its app closed or killed mid-mock).
ABANDON_GRACE = dt.timedelta(minutes=2)

# SQL: the mock `m` has a question the learner answered (a mock without one was abandoned, and scores nothing)
ANSWERED_MOCK = "EXISTS (SELECT 1 FROM mock_answer b WHERE b.mock_id = m.id AND b.status = 'answered')"

# SQL: the question `a` was put to the learner. One left unanswered with no time spent on it was never reached
# (the mock ended before it), so it says nothing about its topic; the report calls it "not reached" too.
REACHED_QUESTION = "NOT (a.status = 'unanswered' AND a.spent_s < 0.5)"

_HISTORY = "SELECT reviewed_at, day, grade, mode, duration_ms FROM review_log WHERE card_id = ? ORDER BY id"
_STUDIED_ON = "SELECT DISTINCT card_id FROM review_log WHERE day = ?"
_REVIEWS_ON = (
    "SELECT card_id, COUNT(*) FROM review_log INDEXED BY ix_review_log_day_card WHERE day = ? GROUP BY card_id"
)


def database_path(data_dir: Path) -> Path:
    """The learner's database file in `data_dir`."""
    return Path(data_dir) / DB_NAME


# -- the first paint -----------------------------------------------------------------
def read_states(data_dir: Path) -> dict[str, CardState]:
    """Card states from the database file, or {} when there is none yet.

    Raises StoreError when the file is not a drill database, is damaged, is newer
    than this drill, or stays locked past the busy timeout.
    """

    return _read(data_dir, _states, {})


def _states(conn: sqlite3.Connection) -> dict[str, CardState]:
    return states_from_tuples(_card_tuples(conn))


def _card_tuples(conn: sqlite3.Connection) -> list[CardTuple]:
    """Every card's card_state row as plain tuples, in one SELECT (drill.store.rows.card_state_select); [] before
    the table is there. The states and the progress figures are both made from these."""
    present = {str(row[1]) for row in conn.execute("PRAGMA table_info(card_state)")}
    if not present:
        return []
    return conn.execute(card_state_select(present)).fetchall()


@dataclass(frozen=True)
class FirstRead:
    """The app's first read, on one connection: the saved settings and the card table's rows as plain tuples
    (drill.store.rows.states_from_tuples makes the states of them). `current`: the file was at the current schema,
    so the rows may stand for the progress rows' cards too (an older file is migrated before those are read)."""

    settings: dict[str, str]
    cards: list[CardTuple]
    current: bool


def read_settings_and_cards(data_dir: Path) -> FirstRead:
    """The saved settings and every card's row, read on one connection (the app's first read); empty before the
    first run. Raises StoreError in the same cases as `read_states`."""

    def query(conn: sqlite3.Connection) -> FirstRead:
        current = migrations.schema_version(conn) >= migrations.LATEST
        return FirstRead(_settings(conn), _card_tuples(conn), current)

    return _read(data_dir, query, FirstRead({}, [], False))


def read_settings_and_states(data_dir: Path) -> tuple[dict[str, str], dict[str, CardState]]:
    """The saved settings and every card's state, read on one connection; ({}, {}) before the first run. Raises
    StoreError in the same cases as `read_states`."""
    first = read_settings_and_cards(data_dir)
    return first.settings, states_from_tuples(first.cards)


def overdue_by(started_at: str, minutes: int, now: dt.datetime, grace: dt.timedelta = ABANDON_GRACE) -> bool:
    return dt.datetime.fromisoformat(started_at) + dt.timedelta(minutes=minutes) + grace <= now


def has_abandoned_mock(data_dir: Path, now: dt.datetime) -> bool:
    """Whether a mock is still marked running past its time (cheap: no database layer is imported)."""

    def query(conn: sqlite3.Connection) -> bool:
        rows = _rows_or_none(conn, "SELECT started_at, minutes FROM mock WHERE status = 'running'")
        return any(overdue_by(at, minutes, now) for at, minutes in rows or [])

    return _read(data_dir, query, False)


def read_settings(data_dir: Path) -> dict[str, str]:
    """Saved settings, or {} before the first run (or on a version-1 file without the table).

    Raises StoreError in the same cases as `read_states`.
    """

    return _read(data_dir, _settings, {})


def _settings(conn: sqlite3.Connection) -> dict[str, str]:
    rows = _rows_or_none(conn, "SELECT key, value FROM setting")
    return {str(k): str(v) for k, v in rows or []}


# -- progress figures ---------------------------------------------------------------
def read_progress(data_dir: Path, today: dt.date, *, recent_days: int = 30, heat_days: int = 182) -> ProgressRows:
    """Read every figure at once; an empty ProgressRows before the first review.

    Needs the current schema (the review counts and the covering index); callers
    open the Store once first on an older file, which migrates it (drill.workspace does).
    """

    def query(conn: sqlite3.Connection) -> ProgressRows:
        return _progress(conn, today, recent_days, heat_days)

    return _read(data_dir, query, ProgressRows())


@dataclass(frozen=True)
class ProgressAndStates:
    """The progress rows and every card's state, both made from one read of the card table."""

    progress: ProgressRows
    states: dict[str, CardState]


def read_progress_and_states(data_dir: Path, today: dt.date) -> ProgressAndStates:
    """`read_progress` and `read_states` in one snapshot, the card table read once for both (what `drill stats`
    with an interview date reads)."""

    def query(conn: sqlite3.Connection) -> ProgressAndStates:
        conn.execute("BEGIN")  # one read transaction: the queries below see the same rows
        try:
            cards = _card_tuples(conn)
            return ProgressAndStates(_progress(conn, today, cards=cards), states_from_tuples(cards))
        finally:
            conn.rollback()

    return _read_else(data_dir, query, lambda: ProgressAndStates(ProgressRows(), {}))


def _progress(
    conn: sqlite3.Connection,
    today: dt.date,
    recent_days: int = 30,
    heat_days: int = 182,
    *,
    cards: list[CardTuple] | None = None,
) -> ProgressRows:
    """The progress rows of study day `today` (read_progress), on an open connection; `cards` are the card table's
    rows when they were read already (`_card_tuples`)."""
    recent_since = (today - dt.timedelta(days=recent_days - 1)).isoformat()
    heat_since = (today - dt.timedelta(days=heat_days - 1)).isoformat()
    out = ProgressRows()
    out.cards = figures_from_tuples(_card_tuples(conn) if cards is None else cards)
    out.total_reviews = sum(figures.reviews for figures in out.cards.values())
    by_topic = conn.execute(
        "SELECT topic, SUM(scheduled), SUM(passed) FROM review_topic_day WHERE day >= ? GROUP BY topic",
        (recent_since,),
    ).fetchall()
    out.recent_by_topic = {t: (int(n or 0), int(p or 0)) for t, n, p in by_topic if n}
    untagged = conn.execute(  # reviews logged before topics were kept with them
        "SELECT card_id, COUNT(*), SUM(grade >= 3) FROM review_log INDEXED BY ix_review_log_day_card"
        " WHERE day >= ? AND topic IS NULL AND mode != 'cram' GROUP BY card_id",
        (recent_since,),
    ).fetchall()
    out.recent = {cid: (n, int(passed or 0)) for cid, n, passed in untagged}
    days = conn.execute(
        "SELECT day, reviews, scheduled, passed FROM review_day WHERE day >= ? AND reviews > 0", (heat_since,)
    ).fetchall()
    out.days = {day: (n, sched, passed) for day, n, sched, passed in days}
    if heat_since in out.days:  # the streak may reach past the window: walk back only as far as it goes
        out.earlier_days = _days_before(conn, heat_since)
    mocks = _rows_or_none(
        conn,
        f"SELECT id, started_at, CASE WHEN {ANSWERED_MOCK} THEN status ELSE 'abandoned' END,"
        f" CASE WHEN {ANSWERED_MOCK} THEN score END, minutes FROM mock m WHERE status != 'running' ORDER BY id DESC",
    )
    out.mocks = [(m[0], m[1], m[2], m[3], m[4]) for m in mocks or []]
    mock_topics = _rows_or_none(
        conn,
        "SELECT a.topic, a.mock_id, AVG(COALESCE(a.score, 0)), COUNT(*) FROM mock_answer a JOIN mock m ON m.id = a.mock_id"
        # a planned question a follow-up took the place of stays pending: it was never asked
        f" WHERE m.status != 'running' AND {ANSWERED_MOCK} AND a.status != 'pending' AND {REACHED_QUESTION}"
        " GROUP BY a.mock_id, a.topic ORDER BY a.mock_id",
    )
    for topic, mock_id, score, questions in mock_topics or []:
        out.last_mock_by_topic[topic] = (mock_id, float(score), int(questions))
    attempts = _rows_or_none(conn, "SELECT card_id, result FROM kernel_attempt ORDER BY id")
    for cid, result in attempts or []:
        pct = _pct(result)
        if pct is not None:
            out.kernel_pcts.setdefault(cid, []).append(pct)
        else:
            out.kernel_untimed[cid] = out.kernel_untimed.get(cid, 0) + 1
    return out


def _days_before(conn: sqlite3.Connection, before: str, chunk: int = 400) -> list[str]:
    """Days with a review before `before`, newest first, stopping at the first gap of a day or more."""
    out: list[str] = []
    cursor = dt.date.fromisoformat(before)
    rows = conn.execute(
        "SELECT day FROM review_day WHERE day < ? AND reviews > 0 ORDER BY day DESC LIMIT ?", (before, chunk)
    ).fetchall()
    for (day,) in rows:
        expected = (cursor - dt.timedelta(days=1)).isoformat()
        if day != expected:
            break
        out.append(day)
        cursor = dt.date.fromisoformat(day)
    return out


def _pct(result: str) -> float | None:
    try:
        value = json.loads(result).get("pct_of_ceiling")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def has_progress_schema(data_dir: Path) -> bool:
    """Whether a database file is there at the current schema, as read_progress needs (the Store makes or migrates it)."""

    def query(conn: sqlite3.Connection) -> bool:
        return migrations.schema_version(conn) >= migrations.LATEST

    return _read(data_dir, query, False)


def mock_report_json(data_dir: Path, mock_id: int) -> Any:
    """A stored report of a finished mock, or None."""

    def query(conn: sqlite3.Connection) -> Any:
        rows = _rows_or_none(conn, f"SELECT report FROM mock WHERE id = {int(mock_id)}")
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    return _read(data_dir, query, None)


# -- the whole review log: readiness, calibration and fitting replay it -------------------
# a mock answer's score decides what it does to the schedule (scheduling.after_grade); no other mode reads its answer
_LOG_COLUMNS = "id, card_id, day, grade, mode, duration_ms, CASE WHEN mode = 'mock' THEN answer END AS answer"
# the whole log as a fit reads it: with each review's time, so that same-day reviews keep their gaps
_LOG = f"SELECT {_LOG_COLUMNS}, reviewed_at FROM review_log ORDER BY id"
_LOG_FROM = f"SELECT {_LOG_COLUMNS} FROM review_log WHERE day >= ? ORDER BY day, id"
# The newest row (highest id) before a day: walked back from the newest, never through the day index
_NEWEST_BEFORE = (
    "SELECT id, card_id, day, grade, mode, reviewed_at, answer FROM review_log NOT INDEXED"
    " WHERE day < ? ORDER BY id DESC LIMIT 1"
)
_END_OF_TIME = "9999-12-31~"  # sorts after every day: "before it" is the whole log


def read_log(data_dir: Path) -> list[LoggedReview]:
    """Every logged review, oldest first; [] before the first run. A day that is not a date raises ValueError."""

    def query(conn: sqlite3.Connection) -> list[LoggedReview]:
        conn.row_factory = sqlite3.Row
        rows = _rows_or_none(conn, _LOG)
        return [logged_review_from_row(dict(r)) for r in rows or []]

    return _read(data_dir, query, [])


@dataclass(frozen=True)
class LogMark:
    """What tells one state of the log's rows before a day from another: how many there are, and the newest.

    Rows are only ever added (a grade, an import) or removed (an undo): one more or one fewer changes
    `rows`, and an undo followed by a grade, which SQLite may give the freed id, changes `newest`.
    """

    rows: int
    newest: tuple[Any, ...] | None  # the newest row's id, card, day, grade, mode, time and answer; None: no row


@dataclass(frozen=True)
class LogPlace:
    """Where a kept replay of the log stopped: the first study day it did not replay, and the mark the rows before
    that day bore when it was kept."""

    day: dt.date
    mark: LogMark


# Handed the rows a LogAsk reads as they stream past: the place they start from (None: the log's first row), and
# the rows, in replay order.
TakeRows = Callable[[LogPlace | None, Iterator[LoggedReview]], None]


@dataclass(frozen=True)
class LogAsk:
    """A replay's read of the log: the rows from `kept` on (every row without one, or when the rows before its day
    no longer bear its mark: an undo, an import of older reviews), and the marks of the log before study day
    `before` and whole. The rows go to `take` as they are read, and are never held: a whole log costs no more
    memory than one row."""

    kept: LogPlace | None
    before: dt.date
    take: TakeRows


@dataclass(frozen=True)
class LogRead:
    """What a LogAsk read besides the rows, in the same snapshot: a grade saved meanwhile is in both the rows and
    the marks, or in neither. `start`: where the rows started (None: at the log's first row)."""

    start: LogPlace | None
    before: LogMark  # the rows before the day asked about
    whole: LogMark  # every row


def log_mark(data_dir: Path) -> LogMark:
    """The mark of the whole log (two quick looks: a count and the newest row); LogMark(0, None) before the first run."""

    def query(conn: sqlite3.Connection) -> LogMark:
        return _mark(conn, _END_OF_TIME, _count(conn))

    return _read(data_dir, query, _NO_ROWS)


def read_log_from(data_dir: Path, ask: LogAsk) -> LogRead:
    """The rows `ask` asks for, handed to its `take` (exactly once, an empty log before the first run included),
    with the marks, all read in one snapshot. A day that is not a date raises ValueError."""

    def query(conn: sqlite3.Connection) -> LogRead:
        conn.execute("BEGIN")  # one read transaction: the queries below see the same rows
        try:
            return _log_from(conn, ask)
        finally:
            conn.rollback()

    return _read_else(data_dir, query, lambda: _no_log(ask))


def _log_from(conn: sqlite3.Connection, ask: LogAsk) -> LogRead:
    """`read_log_from` on an open connection, inside a read transaction."""
    total = _count(conn)
    if total is None:  # a new or version-1 file: no log yet
        return _no_log(ask)
    start = ask.kept
    if start is not None and _mark(conn, start.day.isoformat(), total) != start.mark:
        start = None  # a review undone or imported before the kept day: every row is read
    first = "" if start is None else start.day.isoformat()  # "" sorts before every day
    conn.row_factory = sqlite3.Row
    try:
        ask.take(start, (logged_review_from_row(dict(r)) for r in conn.execute(_LOG_FROM, (first,))))
    finally:
        conn.row_factory = None
    return LogRead(start, _mark(conn, ask.before.isoformat(), total), _mark(conn, _END_OF_TIME, total))


def _no_log(ask: LogAsk) -> LogRead:
    ask.take(None, iter(()))
    return LogRead(None, _NO_ROWS, _NO_ROWS)


_NO_ROWS = LogMark(0, None)


def _count(conn: sqlite3.Connection) -> int | None:
    """The log's rows, or None when there is no log table yet: the count the schema's triggers keep (one row to
    read, at any size of the log); counted on a file older than that."""
    kept = _rows_or_none(conn, "SELECT rows FROM review_log_count WHERE id = 1")
    if kept:
        return int(kept[0][0])
    total = _rows_or_none(conn, "SELECT COUNT(*) FROM review_log")
    return None if total is None else int(total[0][0])


def _mark(conn: sqlite3.Connection, day: str, total: int | None) -> LogMark:
    """The mark of the rows before study day `day` (ISO text), of `total` rows in all."""
    if total is None:
        return _NO_ROWS
    later = conn.execute("SELECT COUNT(*) FROM review_log WHERE day >= ?", (day,)).fetchone()[0]
    newest = conn.execute(_NEWEST_BEFORE, (day,)).fetchone()
    return LogMark(total - later, None if newest is None else tuple(newest))


def review_records(data_dir: Path) -> list[ReviewRecord]:
    """Every logged review as it is kept, oldest first (what an export writes); [] before the first run."""

    def query(conn: sqlite3.Connection) -> list[ReviewRecord]:
        rows = _rows_or_none(conn, f"SELECT {', '.join(REVIEW_RECORD_COLUMNS)} FROM review_log ORDER BY id")
        return [ReviewRecord(*row) for row in rows or []]

    return _read(data_dir, query, [])


# -- the browser's looks at the review log -------------------------------------------
def card_history(data_dir: Path, card_id: str) -> list[dict[str, Any]]:
    """The card's logged reviews, oldest first; [] before the first run.

    Raises StoreError when the file is not a drill database, is damaged, is newer
    than this drill, or stays locked past the busy timeout.
    """

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        conn.row_factory = sqlite3.Row
        rows = _rows_or_none(conn, _HISTORY, (card_id,))
        return [dict(r) for r in rows or []]

    return _read(data_dir, query, [])


def studied_on(data_dir: Path, day: dt.date) -> set[str]:
    """The ids of the cards graded on study day `day` in any mode (review, repeat, cram, mock); empty before the first run.

    Raises StoreError as card_history does.
    """

    def query(conn: sqlite3.Connection) -> set[str]:
        return {card_id for (card_id,) in _rows_or_none(conn, _STUDIED_ON, (day.isoformat(),)) or []}

    return _read(data_dir, query, set())


def reviews_on(data_dir: Path, day: dt.date) -> dict[str, int]:
    """How many times each card was graded on study day `day` in any mode; empty before the first run.

    Read from the covering index `ix_review_log_day_card`. Raises StoreError as card_history does.
    """

    def query(conn: sqlite3.Connection) -> dict[str, int]:
        return _graded_on(conn, day)

    return _read(data_dir, query, {})


def _graded_on(conn: sqlite3.Connection, day: dt.date) -> dict[str, int]:
    rows = _rows_or_none(conn, _REVIEWS_ON, (day.isoformat(),)) or []
    return {card_id: int(count) for card_id, count in rows}


@dataclass(frozen=True)
class DayRows:
    """What the app's start reads of study day `today` in one look: how many times each card was graded on it
    (`reviews_on`), the progress rows when asked for (`read_progress`), and what a replay's read of the log found
    when one was asked (`read_log_from`)."""

    graded_today: dict[str, int]
    progress: ProgressRows | None
    log: LogRead | None = None


def read_day(
    data_dir: Path,
    today: dt.date,
    *,
    progress: bool,
    log: LogAsk | None = None,
    cards: list[CardTuple] | None = None,
) -> DayRows:
    """Today's grades, the progress rows when `progress`, and the rows `log` asks for (handed to its `take`), read
    in one snapshot; the progress rows' cards made from `cards`, the card table's rows, when the start read them
    already (`read_settings_and_cards`). The progress rows need the current schema, as read_progress does; raises
    StoreError as card_history does, and ValueError as read_log_from does."""

    def query(conn: sqlite3.Connection) -> DayRows:
        conn.execute("BEGIN")  # one read transaction: the queries below see the same rows
        try:
            graded = _graded_on(conn, today)
            rows = _progress(conn, today, cards=cards) if progress else None
            return DayRows(graded, rows, None if log is None else _log_from(conn, log))
        finally:
            conn.rollback()

    def no_file() -> DayRows:
        rows = ProgressRows() if progress else None
        replayed = None if log is None else _no_log(log)
        return DayRows({}, rows, replayed)

    return _read_else(data_dir, query, no_file)


# -- reading --------------------------------------------------------------------------
def _rows_or_none(conn: sqlite3.Connection, sql: str, parameters: tuple[str, ...] = ()) -> list[Any] | None:
    """The rows of `sql`, or None when its table is not there yet (a new or version-1 file)."""
    try:
        return conn.execute(sql, parameters).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise


def _read(data_dir: Path, query: Callable[[sqlite3.Connection], T], empty: T) -> T:
    """Run `query` on a read-only connection to the database in `data_dir`; `empty` when there is no file yet.
    Whatever stops the read is said here, once, as a StoreError (drill.store.errors)."""
    return _read_else(data_dir, query, lambda: empty)


def _read_else(data_dir: Path, query: Callable[[sqlite3.Connection], T], no_file: Callable[[], T]) -> T:
    """`_read`, with what to give when there is no file yet made by `no_file`."""
    path = database_path(data_dir)
    try:
        return _read_file(path, query, no_file)
    except OSError as exc:  # a folder on the way that may not even be looked into
        raise errors.unreachable(path, exc) from exc
    except sqlite3.Error as exc:
        raise errors.from_sqlite(path, exc, migrations.BUSY_WAIT_S) from exc


def _read_file(path: Path, query: Callable[[sqlite3.Connection], T], no_file: Callable[[], T]) -> T:
    """`_read` before its failures are said: `no_file()` when there is no file yet.

    A WAL file in a folder the learner may not write to cannot be opened the usual
    way (SQLite needs to create its shared-memory file beside it); nobody can be
    writing there either, so it is read as an immutable file instead (the first error stands if that fails too).
    """
    if not path.exists():
        return no_file()
    try:
        return _query(path, query, immutable=False)
    except sqlite3.Error as exc:
        if not _unreadable_here(path, exc):
            raise
        try:
            return _query(path, query, immutable=True)
        except sqlite3.Error:
            raise exc from None


def _query(path: Path, query: Callable[[sqlite3.Connection], T], *, immutable: bool) -> T:
    uri = path.resolve().as_uri() + ("?immutable=1" if immutable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, timeout=migrations.BUSY_WAIT_S)
    try:
        migrations.known_version(conn)
        return query(conn)
    finally:
        conn.close()


def _unreadable_here(path: Path, exc: sqlite3.Error) -> bool:
    """Whether `exc` is SQLite unable to set up a WAL read in a folder it may not write to."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name == "SQLITE_READONLY_DIRECTORY":
        return True
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or "readonly" in str(exc):
        return not os.access(path.parent, os.W_OK)
    return False
