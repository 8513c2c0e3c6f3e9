"""A card's schedule and review log as an Anki collection stores them (`drill export anki --with-history`).

Anki keeps a review card's due day as days since the collection was created (col.crt),
its interval in days and its ease in permille; FSRS's memory goes in the card's data
(`s` stability, `d` difficulty). Each review is a revlog row: its time as the id, the
answer button, the interval it gave and the one before. drill's study days are written
as Anki's days, so Anki's importer (with scheduling) shows the same due dates.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.exchange.anki_revlog import GRADE_EASE, RevlogKind, revlog_id
from drill.store.rows import ReviewRecord
from drill.study.records import CardState

# The collection's first day: every due date is counted from it (a date before it would be a negative day).
COLLECTION_DAY = dt.date(2000, 1, 1)
ROLLOVER_HOUR = 4  # Anki's default: the package's days start when a new collection's do


@dataclass(frozen=True)
class History:
    """What --with-history takes from the learner's data: every card's state and the review log."""

    states: Mapping[str, CardState]
    reviews: Sequence[ReviewRecord]


@dataclass(frozen=True)
class CardSchedule:
    """The scheduling columns of one card in Anki's `cards` table."""

    type: int
    queue: int
    due: int
    ivl: int
    factor: int
    reps: int
    lapses: int
    data: str


@dataclass(frozen=True)
class RevlogRow:
    """One row of Anki's `revlog` table (its usn is always -1: not yet synced)."""

    id: int
    cid: int
    ease: int
    ivl: int
    last_ivl: int
    factor: int
    time: int
    type: int


def collection_created() -> int:
    """col.crt: noon of COLLECTION_DAY, local time, so the day it starts is that day whatever the rollover."""
    return int(dt.datetime.combine(COLLECTION_DAY, dt.time(12)).astimezone().timestamp())


def creation_offset() -> int:
    """Anki's `creationOffset`: minutes west of UTC at col.crt, which makes Anki count days in local time."""
    offset = dt.datetime.combine(COLLECTION_DAY, dt.time(12)).astimezone().utcoffset()
    assert offset is not None
    return -int(offset.total_seconds() // 60)


def anki_day(day: dt.date) -> int:
    """A date as Anki's due day: days since the collection's first day."""
    return (day - COLLECTION_DAY).days


def interval_days(state: CardState) -> int:
    """The card's current interval: FSRS's (due date less its last review) while FSRS schedules, else SM-2's."""
    if state.fsrs is not None and state.due is not None:
        return max(1, (state.due - state.fsrs.last_review).days)
    return max(1, state.sm2.interval)


def schedule_of(state: CardState, reps: int) -> CardSchedule | None:
    """The card as an Anki review card; None for a card drill has not scheduled yet (it stays new)."""
    if state.is_new or state.due is None:
        return None
    data: dict[str, Any] = {}
    if state.fsrs is not None:
        data = {"s": round(state.fsrs.stability, 4), "d": round(state.fsrs.difficulty, 4)}
    return CardSchedule(
        type=2,  # review
        queue=-1 if state.suspended else 2,
        due=anki_day(state.due),
        ivl=interval_days(state),
        factor=round(state.sm2.ef * 1000),
        reps=reps,
        lapses=state.lapses,
        data=json.dumps(data) if data else "",
    )


def _interval_in(state_json: str, day: dt.date) -> int:
    """The interval a logged state gave: its due date less the review's day (0 when it had none)."""
    state = json.loads(state_json)
    due = state.get("due")
    if not due:
        return 0
    return max(0, (dt.date.fromisoformat(due) - day).days)


def _ease_permille(state_json: str) -> int:
    return round(float(json.loads(state_json).get("ef", 2.5)) * 1000)


def _kind(review: ReviewRecord) -> RevlogKind:
    if review.mode in ("cram", "mock"):
        return RevlogKind.FILTERED
    if not json.loads(review.state_before).get("introduced_on"):
        return RevlogKind.LEARN
    return RevlogKind.REVIEW


def revlog_rows(reviews: Iterable[ReviewRecord], anki_card_ids: Mapping[str, int]) -> list[RevlogRow]:
    """The reviews of exported cards as revlog rows, oldest first; two in one millisecond are a millisecond apart."""
    rows: list[RevlogRow] = []
    taken: set[int] = set()
    for review in sorted(reviews, key=lambda r: (r.reviewed_at, r.id)):
        cid = anki_card_ids.get(review.card_id)
        if cid is None:
            continue
        at = revlog_id(review.reviewed_at)
        while at in taken:
            at += 1
        taken.add(at)
        day = dt.date.fromisoformat(review.day)
        rows.append(
            RevlogRow(
                id=at,
                cid=cid,
                ease=GRADE_EASE[review.grade],
                ivl=_interval_in(review.state_after, day),
                last_ivl=int(json.loads(review.state_before).get("interval", 0) or 0),
                factor=_ease_permille(review.state_after),
                time=max(0, review.duration_ms),
                type=int(_kind(review)),
            )
        )
    return rows
