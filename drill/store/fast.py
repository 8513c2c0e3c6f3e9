"""A read-only look at card states with the stdlib sqlite3, for the first paint.

SQLModel takes most of a second to import on a small machine; the review screen
needs only the schedule to show the first card, so it reads it here and opens
the full Store in the background.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any, Mapping

from drill.sm2 import SM2State
from drill.store.records import CardState

DB_NAME = "drill.sqlite3"


def _day(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


def state_from_row(row: Mapping[str, Any]) -> CardState:
    """One card_state row (as a mapping) to a CardState; columns added in v2 may be absent."""
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
    )


def read_states(data_dir: Path) -> dict[str, CardState]:
    """Card states from the database file, or {} when there is none yet."""
    path = Path(data_dir) / DB_NAME
    if not path.exists():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        conn.row_factory = sqlite3.Row
        try:
            rows = conn.execute("SELECT * FROM card_state").fetchall()
        except sqlite3.OperationalError:
            return {}
        return {r["card_id"]: state_from_row(dict(r)) for r in rows}
    finally:
        conn.close()


def read_settings(data_dir: Path) -> dict[str, str]:
    """Saved settings, or {} before the first run (or on a version-1 file without the table)."""
    path = Path(data_dir) / DB_NAME
    if not path.exists():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return dict(conn.execute("SELECT key, value FROM setting").fetchall())
    except sqlite3.OperationalError:
        return {}
    finally:
        conn.close()
