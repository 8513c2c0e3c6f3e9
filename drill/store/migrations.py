"""Forward migrations of the SQLite file, one transaction per version step."""

from __future__ import annotations

import sqlite3

# Version 1 shipped card state and the review log; version 2 added answers given,
# leech and same-day repeat tracking, kernel attempts, sessions and settings.
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
}
LATEST = max(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection) -> tuple[int, int]:
    """Bring the file to LATEST; returns (from, to). A file newer than this program is refused."""
    start = schema_version(conn)
    if start > LATEST:
        raise RuntimeError(
            f"this database has schema version {start}, newer than this drill ({LATEST}); upgrade drill"
        )
    for version in range(start + 1, LATEST + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (str(version),),
            )
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
    return start, LATEST
