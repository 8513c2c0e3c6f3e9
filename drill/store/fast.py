"""A read-only look at card states with the stdlib sqlite3, for the first paint.

SQLModel takes most of a second to import on a small machine; the review screen
needs only the schedule to show the first card, so it reads it here and opens
the full Store in the background.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from drill.sm2 import SM2State
from drill.store import errors, migrations
from drill.store.records import CardState, FSRSState

DB_NAME = "drill.sqlite3"
T = TypeVar("T")


def _day(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def state_from_row(row: Mapping[str, Any]) -> CardState:
    """One card_state row (as a mapping) to a CardState; columns added after v1 may be absent."""
    return CardState(
        card_id=row["card_id"],
        sm2=SM2State(row["repetitions"], row["ef"], row["interval"], _day(row["due"])),
        lapses=row["lapses"],
        suspended=bool(row["suspended"]),
        buried_until=_day(row["buried_until"]),
        leech=bool(row.get("leech", False)),
        changed=bool(row["changed"]),
        content_hash=row["content_hash"],
        last_review_day=_day(row.get("last_review_day")),
        repeat_pending=bool(row.get("repeat_pending", False)),
        introduced_on=_day(row["introduced_on"]),
        fsrs=_fsrs_from_row(row),
    )


def _fsrs_from_row(row: Mapping[str, Any]) -> FSRSState | None:
    """FSRS's part of a card_state row (v4), or None when SM-2 schedules the card."""
    stability, difficulty = row.get("fsrs_stability"), row.get("fsrs_difficulty")
    state, last_review = row.get("fsrs_state"), row.get("fsrs_last_review")
    if stability is None or difficulty is None or state is None or last_review is None:
        return None
    return FSRSState(float(stability), float(difficulty), int(state), dt.date.fromisoformat(last_review))


def read_states(data_dir: Path) -> dict[str, CardState]:
    """Card states from the database file, or {} when there is none yet.

    Raises StoreError when the file is not a drill database, is damaged, is newer
    than this drill, or stays locked past the busy timeout.
    """

    def query(conn: sqlite3.Connection) -> dict[str, CardState]:
        conn.row_factory = sqlite3.Row
        rows = _rows_or_none(conn, "SELECT * FROM card_state")
        return {r["card_id"]: state_from_row(dict(r)) for r in rows or []}

    return _read(Path(data_dir) / DB_NAME, query, {})


# A mock still marked running this long past its minutes was cut off (its app closed or killed mid-mock).
ABANDON_GRACE = dt.timedelta(minutes=2)


def overdue_by(started_at: str, minutes: int, now: dt.datetime, grace: dt.timedelta = ABANDON_GRACE) -> bool:
    return dt.datetime.fromisoformat(started_at) + dt.timedelta(minutes=minutes) + grace <= now


def has_abandoned_mock(data_dir: Path, now: dt.datetime) -> bool:
    """Whether a mock is still marked running past its time (cheap: no database layer is imported)."""

    def query(conn: sqlite3.Connection) -> bool:
        rows = _rows_or_none(conn, "SELECT started_at, minutes FROM mock WHERE status = 'running'")
        return any(overdue_by(at, minutes, now) for at, minutes in rows or [])

    return _read(Path(data_dir) / DB_NAME, query, False)


def read_settings(data_dir: Path) -> dict[str, str]:
    """Saved settings, or {} before the first run (or on a version-1 file without the table).

    Raises StoreError in the same cases as `read_states`.
    """

    def query(conn: sqlite3.Connection) -> dict[str, str]:
        rows = _rows_or_none(conn, "SELECT key, value FROM setting")
        return {str(k): str(v) for k, v in rows or []}

    return _read(Path(data_dir) / DB_NAME, query, {})


def _rows_or_none(conn: sqlite3.Connection, sql: str) -> list[Any] | None:
    """The rows of `sql`, or None when its table is not there yet (a new or version-1 file)."""
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise


def _read(path: Path, query: Callable[[sqlite3.Connection], T], empty: T) -> T:
    """Run `query` on a read-only connection to `path`; `empty` when there is no file yet.

    A WAL file in a folder the learner may not write to cannot be opened the usual
    way (SQLite needs to create its shared-memory file beside it); nobody can be
    writing there either, so it is read as an immutable file instead.
    """
    try:
        if not path.exists():
            return empty
    except OSError as exc:
        raise errors.unreachable(path, exc) from exc
    try:
        return _query(path, query, immutable=False)
    except sqlite3.Error as exc:
        if _unreadable_here(path, exc):
            try:
                return _query(path, query, immutable=True)
            except sqlite3.Error:
                pass
        raise errors.from_sqlite(path, exc, migrations.BUSY_WAIT_S) from exc


def _query(path: Path, query: Callable[[sqlite3.Connection], T], *, immutable: bool) -> T:
    uri = path.resolve().as_uri() + ("?immutable=1" if immutable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, timeout=migrations.BUSY_WAIT_S)
    try:
        version = migrations.schema_version(conn)
        if version > migrations.LATEST:
            raise errors.newer_schema(path, version, migrations.LATEST)
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
