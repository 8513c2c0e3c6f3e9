"""What the card browser reads from the review log, with the stdlib sqlite3: one card's reviews, the cards of a day."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

from drill.store.fast import DB_NAME, _read

_HISTORY = "SELECT reviewed_at, day, grade, mode, duration_ms FROM review_log WHERE card_id = ? ORDER BY id"
_STUDIED_ON = "SELECT DISTINCT card_id FROM review_log WHERE day = ?"


def card_history(data_dir: Path, card_id: str) -> list[dict[str, Any]]:
    """The card's logged reviews, oldest first; [] before the first run.

    Raises StoreError when the file is not a drill database, is damaged, is newer
    than this drill, or stays locked past the busy timeout.
    """

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        conn.row_factory = sqlite3.Row
        rows = _rows(conn, _HISTORY, (card_id,))
        return [dict(r) for r in rows]

    return _read(Path(data_dir) / DB_NAME, query, [])


def studied_on(data_dir: Path, day: dt.date) -> set[str]:
    """The ids of the cards graded on study day `day` in any mode (review, repeat, cram, mock); empty before the first run.

    Raises StoreError as card_history does.
    """

    def query(conn: sqlite3.Connection) -> set[str]:
        return {card_id for (card_id,) in _rows(conn, _STUDIED_ON, (day.isoformat(),))}

    return _read(Path(data_dir) / DB_NAME, query, set())


def _rows(conn: sqlite3.Connection, sql: str, parameters: tuple[str, ...]) -> list[Any]:
    """The rows of `sql`, or none when the log is not there yet (a file from before the first review)."""
    try:
        return conn.execute(sql, parameters).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
