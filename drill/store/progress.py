"""Progress figures read with aggregate SQL on a read-only connection (stdlib sqlite3, no SQLModel).

Everything here is sized to the learner's whole history: the card table is read
once (one row per card), recent reviews come from the covering index
`ix_review_log_day_card` (never the log's rows), and mocks and kernel attempts
are small tables. With 10,000 cards and 1,000,000 logged reviews this stays
well under a tenth of a second (bench/core_loop.py measures it).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drill.store.fast import DB_NAME, _read, _rows_or_none

# SQL: the mock `m` has a question the learner answered (a mock without one was abandoned, and scores nothing)
ANSWERED_MOCK = "EXISTS (SELECT 1 FROM mock_answer b WHERE b.mock_id = m.id AND b.status = 'answered')"

# SQL: the question `a` was put to the learner. One left unanswered with no time spent on it was never reached
# (the mock ended before it), so it says nothing about its topic; the report calls it "not reached" too.
REACHED_QUESTION = "NOT (a.status = 'unanswered' AND a.spent_s < 0.5)"


@dataclass(frozen=True)
class CardFigures:
    """One card's row of card_state, as progress figures need it."""

    reviews: int
    lapses: int
    ef: float
    repetitions: int
    due: str | None
    suspended: bool
    leech: bool
    buried_until: str | None
    introduced_on: str | None = None
    repeat_pending: bool = False
    last_review_day: str | None = None


@dataclass
class ProgressRows:
    """What the database holds for progress figures; the domain (drill.progress) turns it into figures."""

    cards: dict[str, CardFigures] = field(default_factory=dict)
    # last `recent_days` days, cram left out: topic -> (reviews, passed with grade >= 3), from
    # reviews logged with their topic; `recent` holds reviews logged without one, by card
    recent_by_topic: dict[str, tuple[int, int]] = field(default_factory=dict)
    recent: dict[str, tuple[int, int]] = field(default_factory=dict)
    # each day of the last `heat_days` days with a review: day -> (reviews, scheduled reviews, passed)
    days: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    # every day with a review before the window, newest first, only as far back as a streak needs
    earlier_days: list[str] = field(default_factory=list)
    # finished or stopped mocks, newest first: (id, started_at, status, score, minutes); one with no answered
    # question is "abandoned", with no score, whatever its row says (rows written before that rule said "quit", 0)
    mocks: list[tuple[int, str, str, float | None, int]] = field(default_factory=list)
    # topic -> (mock id, mean score of its questions, questions) in the newest mock that asked it and has
    # an answered question: an abandoned mock, or a question the mock never reached, is no evidence about a topic
    last_mock_by_topic: dict[str, tuple[int, float, int]] = field(default_factory=dict)
    # kernel card id -> percentages of the card's ceiling (copy or matmul) over its attempts, oldest first
    kernel_pcts: dict[str, list[float]] = field(default_factory=dict)
    # kernel card id -> attempts with no such figure (no GPU to time on, or not correct)
    kernel_untimed: dict[str, int] = field(default_factory=dict)
    total_reviews: int = 0


def read_progress(data_dir: Path, today: dt.date, *, recent_days: int = 30, heat_days: int = 182) -> ProgressRows:
    """Read every figure at once; an empty ProgressRows before the first review.

    Needs schema version 3 (the review counts and the covering index); callers
    open the Store once first on an older file, which migrates it.
    """
    recent_since = (today - dt.timedelta(days=recent_days - 1)).isoformat()
    heat_since = (today - dt.timedelta(days=heat_days - 1)).isoformat()

    def query(conn: sqlite3.Connection) -> ProgressRows:
        out = ProgressRows()
        rows = _rows_or_none(
            conn,
            "SELECT card_id, reviews, lapses, ef, repetitions, due, suspended, leech, buried_until, introduced_on,"
            " repeat_pending, last_review_day FROM card_state",
        )
        for cid, reviews, lapses, ef, reps, due, susp, leech, buried, intro, pending, last in rows or []:
            figures = CardFigures(
                reviews, lapses, ef, reps, due, bool(susp), bool(leech), buried, intro, bool(pending), last
            )
            out.cards[cid] = figures
            out.total_reviews += reviews
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

    return _read(Path(data_dir) / DB_NAME, query, ProgressRows())


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
    """Whether a database file is there and new enough for read_progress (the Store makes or migrates it)."""
    from drill.store import migrations

    def query(conn: sqlite3.Connection) -> bool:
        return migrations.schema_version(conn) >= migrations.LATEST

    return _read(Path(data_dir) / DB_NAME, query, False)


def mock_report_json(data_dir: Path, mock_id: int) -> Any:
    """A stored report of a finished mock, or None."""

    def query(conn: sqlite3.Connection) -> Any:
        rows = _rows_or_none(conn, f"SELECT report FROM mock WHERE id = {int(mock_id)}")
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    return _read(Path(data_dir) / DB_NAME, query, None)
