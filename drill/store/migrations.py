"""Forward migrations of the SQLite file, one transaction per version step.

Every step runs under SQLite's write lock (BEGIN IMMEDIATE) and reads the schema
version again inside it, so two drills opening a new data directory at the same
moment take turns: the second finds the tables the first made and adds nothing.
Stdlib only, like `fast`, which reads the version too.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable

from drill.store import errors

# How long opening the file waits for another drill's lock before giving up.
BUSY_WAIT_S = 5.0
_PAUSE_S = 0.02

# Version 1 shipped card state and the review log; version 2 added answers given,
# leech and same-day repeat tracking, kernel attempts, sessions and settings;
# version 3 added mock interviews, a review count per card and a covering index
# for recent reviews; version 4 added what FSRS keeps of a card; version 5 a count of the
# review log's rows that triggers keep.
MIGRATIONS: dict[int, list[str]] = {
    1: [
        "CREATE TABLE IF NOT EXISTS meta (key VARCHAR NOT NULL PRIMARY KEY, value VARCHAR NOT NULL)",
        """CREATE TABLE card_state (
            card_id VARCHAR NOT NULL PRIMARY KEY,
            content_hash VARCHAR NOT NULL DEFAULT '',
            changed BOOLEAN NOT NULL DEFAULT 0,
            repetitions INTEGER NOT NULL DEFAULT 0,
            ef FLOAT NOT NULL DEFAULT 2.5,
            interval INTEGER NOT NULL DEFAULT 0,
            due VARCHAR,
            lapses INTEGER NOT NULL DEFAULT 0,
            suspended BOOLEAN NOT NULL DEFAULT 0,
            buried_until VARCHAR,
            introduced_on VARCHAR)""",
        "CREATE INDEX ix_card_state_due ON card_state (due)",
        """CREATE TABLE review_log (
            id INTEGER NOT NULL PRIMARY KEY,
            card_id VARCHAR NOT NULL,
            reviewed_at VARCHAR NOT NULL,
            day VARCHAR NOT NULL,
            grade INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL DEFAULT 0,
            mode VARCHAR NOT NULL DEFAULT 'review',
            state_before VARCHAR NOT NULL DEFAULT '{}',
            state_after VARCHAR NOT NULL DEFAULT '{}')""",
        "CREATE INDEX ix_review_log_card_id ON review_log (card_id)",
        "CREATE INDEX ix_review_log_day ON review_log (day)",
    ],
    2: [
        "ALTER TABLE review_log ADD COLUMN answer VARCHAR",
        "ALTER TABLE card_state ADD COLUMN leech BOOLEAN NOT NULL DEFAULT 0",
        "ALTER TABLE card_state ADD COLUMN last_review_day VARCHAR",
        "ALTER TABLE card_state ADD COLUMN repeat_pending BOOLEAN NOT NULL DEFAULT 0",
        """CREATE TABLE kernel_attempt (
            id INTEGER NOT NULL PRIMARY KEY,
            card_id VARCHAR NOT NULL,
            at VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            result VARCHAR NOT NULL)""",
        "CREATE INDEX ix_kernel_attempt_card_id ON kernel_attempt (card_id)",
        """CREATE TABLE session (
            id INTEGER NOT NULL PRIMARY KEY,
            mode VARCHAR NOT NULL,
            started_at VARCHAR NOT NULL,
            ended_at VARCHAR,
            summary VARCHAR)""",
        "CREATE TABLE setting (key VARCHAR NOT NULL PRIMARY KEY, value VARCHAR NOT NULL)",
        # lapses before this version were not tracked per repeat; mark the cards already lapsing often
        "UPDATE card_state SET leech = 1 WHERE lapses >= 8",
    ],
    3: [
        # a count of each card's logged reviews, so progress figures need not scan the whole log
        "ALTER TABLE card_state ADD COLUMN reviews INTEGER NOT NULL DEFAULT 0",
        """UPDATE card_state SET reviews =
            (SELECT COUNT(*) FROM review_log r WHERE r.card_id = card_state.card_id)""",
        # the card's topic when it was reviewed, for per-topic figures without the deck at hand
        "ALTER TABLE review_log ADD COLUMN topic VARCHAR",
        # reviews per study day and topic, kept with every logged review: retention by topic over
        # recent days reads a few hundred of these rows instead of grouping the log by card
        """CREATE TABLE review_topic_day (
            day VARCHAR NOT NULL,
            topic VARCHAR NOT NULL,
            scheduled INTEGER NOT NULL DEFAULT 0,
            passed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (day, topic))""",
        # reviews per study day (heatmap, streak, retention trend), kept with every logged review
        """CREATE TABLE review_day (
            day VARCHAR NOT NULL PRIMARY KEY,
            reviews INTEGER NOT NULL DEFAULT 0,
            scheduled INTEGER NOT NULL DEFAULT 0,
            passed INTEGER NOT NULL DEFAULT 0)""",
        """INSERT INTO review_day (day, reviews, scheduled, passed)
            SELECT day, COUNT(*), SUM(mode != 'cram'), SUM(grade >= 3 AND mode != 'cram')
            FROM review_log GROUP BY day""",
        # recent per-card figures (30-day retention) read only this index, never the log's rows
        "DROP INDEX IF EXISTS ix_review_log_day",
        "CREATE INDEX ix_review_log_day_card ON review_log (day, card_id, grade, mode, topic)",
        """CREATE TABLE mock (
            id INTEGER NOT NULL PRIMARY KEY,
            started_at VARCHAR NOT NULL,
            ended_at VARCHAR,
            minutes INTEGER NOT NULL,
            status VARCHAR NOT NULL DEFAULT 'running',
            plan VARCHAR NOT NULL,
            score FLOAT,
            report VARCHAR)""",
        """CREATE TABLE mock_answer (
            id INTEGER NOT NULL PRIMARY KEY,
            mock_id INTEGER NOT NULL REFERENCES mock (id),
            position INTEGER NOT NULL,
            card_id VARCHAR NOT NULL,
            topic VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            budget_s FLOAT NOT NULL,
            spent_s FLOAT NOT NULL DEFAULT 0,
            status VARCHAR NOT NULL,
            score FLOAT,
            answer VARCHAR,
            missed VARCHAR,
            follow_up_of VARCHAR,
            UNIQUE (mock_id, card_id))""",
    ],
    4: [
        # FSRS's stability, difficulty, state (1 learning, 2 review, 3 relearning) and last review
        # day; NULL while SM-2 schedules the card. The due column stays the one date the queue reads.
        "ALTER TABLE card_state ADD COLUMN fsrs_stability FLOAT",
        "ALTER TABLE card_state ADD COLUMN fsrs_difficulty FLOAT",
        "ALTER TABLE card_state ADD COLUMN fsrs_state INTEGER",
        "ALTER TABLE card_state ADD COLUMN fsrs_last_review VARCHAR",
    ],
    5: [
        # The review log's row count, kept by SQLite itself as rows come and go, whoever writes them: the
        # replay cache's check (drill.store.reader.log_mark) reads it instead of counting a million rows.
        "CREATE TABLE review_log_count (id INTEGER NOT NULL PRIMARY KEY CHECK (id = 1), rows INTEGER NOT NULL)",
        "INSERT INTO review_log_count (id, rows) SELECT 1, COUNT(*) FROM review_log",
        """CREATE TRIGGER review_log_row_added AFTER INSERT ON review_log
            BEGIN UPDATE review_log_count SET rows = rows + 1; END""",
        """CREATE TRIGGER review_log_row_removed AFTER DELETE ON review_log
            BEGIN UPDATE review_log_count SET rows = rows - 1; END""",
    ],
}
LATEST = max(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if not row:
        return 0
    try:
        return int(row[0])
    except (TypeError, ValueError):
        raise sqlite3.DatabaseError(f"its schema version {row[0]!r} is not a number") from None


def known_version(conn: sqlite3.Connection) -> int:
    """The file's schema version; StoreError when a newer drill wrote it (this one neither reads nor migrates it)."""
    version = schema_version(conn)
    if version > LATEST:
        raise errors.newer_schema(db_path(conn), version, LATEST)
    return version


def db_path(conn: sqlite3.Connection) -> Path:
    """The file behind the connection's main database."""
    for _seq, name, file in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return Path(file)
    return Path("")


def migrate(conn: sqlite3.Connection, *, wait_s: float | None = None) -> tuple[int, int]:
    """Bring the file to LATEST; returns (from, to). A file newer than this program is refused.

    `conn` is in autocommit mode (isolation_level=None). Each step takes the write
    lock first and only then reads the version, so a step another process has
    just applied is never applied twice. When nothing is left to do, a write that
    is rolled back at once checks that the file can be written at all, so a
    read-only file or folder is reported here rather than at the first grade.
    """
    wait_s = BUSY_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    start: int | None = None
    while True:
        version = _with_write_lock(conn, deadline, wait_s, _step)
        if start is None:
            start = version
        if version >= LATEST:
            return start, LATEST


def _step(conn: sqlite3.Connection) -> int:
    """Inside the write lock: apply the next version step, or check writability; returns the version found."""
    version = known_version(conn)  # a newer file: the write lock's transaction is rolled back as the error passes
    if version == LATEST:
        conn.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
        conn.execute("ROLLBACK")
        return version
    for statement in MIGRATIONS[version + 1]:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        (str(version + 1),),
    )
    conn.execute("COMMIT")
    return version


def _with_write_lock(
    conn: sqlite3.Connection, deadline: float, wait_s: float, body: Callable[[sqlite3.Connection], int]
) -> int:
    """Run `body(conn)` inside BEGIN IMMEDIATE, starting over while another connection holds the lock.

    The busy timeout already waits inside SQLite; this loop covers the cases where
    SQLite reports busy without waiting (a reader recovering the WAL, a commit that
    needs readers gone), up to the same deadline.
    """
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                return body(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
        except sqlite3.OperationalError as exc:
            if not errors.is_busy(exc):
                raise
            if time.monotonic() >= deadline:
                raise errors.locked(db_path(conn), wait_s, str(exc)) from exc
            time.sleep(_PAUSE_S)


def use_wal(conn: sqlite3.Connection, *, wait_s: float | None = None) -> None:
    """Put the file in WAL mode unless it is already; retries while another connection holds a lock.

    Called after `migrate`, so the file already has its tables: SQLite drops the WAL
    of a file that is still empty when another connection opens it, so a new file
    is given its first pages in rollback mode and switched afterwards.
    """
    wait_s = BUSY_WAIT_S if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    while True:
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode == "wal":
                return
            mode = str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
            if mode == "wal":
                return
            reason = f"journal mode stays {mode}"
        except sqlite3.OperationalError as exc:
            if not errors.is_busy(exc):
                raise
            reason = str(exc)
        if time.monotonic() >= deadline:
            raise errors.locked(db_path(conn), wait_s, reason)
        time.sleep(_PAUSE_S)
