"""Rows to the domain's records and back: card_state rows to CardState, review_log rows to LoggedReview.

The one place that knows how a record is laid out in columns; the reader and the
Store both convert through here.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping

from drill.study.records import CardFigures, CardState, FSRSState, LoggedReview
from drill.study.sm2 import SM2State

if TYPE_CHECKING:  # the reader converts rows too, and never imports SQLModel
    from drill.store.tables import CardRow


@dataclass
class ImportCounts:
    """What a review import did: rows added, rows the log already had, rows the file gave more than once."""

    added: int = 0
    already_there: int = 0
    repeated: int = 0


@dataclass(frozen=True)
class ReviewRecord:
    """One review_log row as it is kept (days and times as ISO text, states and answer as JSON text): what an
    export writes out, column for column."""

    id: int
    card_id: str
    reviewed_at: str
    day: str
    grade: int
    duration_ms: int
    mode: str
    state_before: str
    state_after: str
    answer: str | None
    topic: str | None

    def columns(self) -> dict[str, Any]:
        """Column name to value, as the table holds them."""
        return {name: getattr(self, name) for name in REVIEW_RECORD_COLUMNS}


REVIEW_RECORD_COLUMNS = (
    "id",
    "card_id",
    "reviewed_at",
    "day",
    "grade",
    "duration_ms",
    "mode",
    "state_before",
    "state_after",
    "answer",
    "topic",
)


def iso(day: dt.date | None) -> str | None:
    """A date as the database keeps it (ISO text), or None."""
    if day is None:
        return None
    return day.isoformat()


def _day(value: str | None) -> dt.date | None:
    if not value:
        return None
    return dt.date.fromisoformat(value)


def state_from_row(row: Mapping[str, Any]) -> CardState:
    """One card_state row (as a mapping) to a CardState; columns added after v1 may be absent."""
    return CardState(
        card_id=row["card_id"],
        sm2=SM2State(row["repetitions"], row["ef"], row["interval"]),
        due=_day(row["due"]),
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
    stability = row.get("fsrs_stability")
    difficulty = row.get("fsrs_difficulty")
    state = row.get("fsrs_state")
    last_review = row.get("fsrs_last_review")
    if stability is None or difficulty is None or state is None or last_review is None:
        return None
    return FSRSState(float(stability), float(difficulty), int(state), dt.date.fromisoformat(last_review))


# card_state's columns as `card_state_select` reads them, each with what an older file without it reads as (None: a
# column of the first schema, always there)
CARD_STATE_COLUMNS: tuple[tuple[str, str | None], ...] = (
    ("card_id", None),
    ("repetitions", None),
    ("ef", None),
    ("interval", None),
    ("due", None),
    ("lapses", None),
    ("suspended", None),
    ("buried_until", None),
    ("leech", "0"),
    ("changed", None),
    ("content_hash", None),
    ("last_review_day", "NULL"),
    ("repeat_pending", "0"),
    ("introduced_on", None),
    ("fsrs_stability", "NULL"),
    ("fsrs_difficulty", "NULL"),
    ("fsrs_state", "NULL"),
    ("fsrs_last_review", "NULL"),
    ("reviews", "0"),
)
CardTuple = tuple[Any, ...]  # one card_state row as `card_state_select` reads it, column for column


def card_state_select(present: Collection[str]) -> str:
    """The one SELECT of every card's row, its columns in CARD_STATE_COLUMNS' order: those the file has not (an
    older file, `present` its columns) read as their defaults."""
    columns = [
        name if name in present or default is None else f"{default} AS {name}" for name, default in CARD_STATE_COLUMNS
    ]
    return f"SELECT {', '.join(columns)} FROM card_state"


class _Days(dict[str | None, dt.date | None]):
    """ISO days to dates, each parsed once however many cards share it; no day (None, "") is None."""

    def __init__(self) -> None:
        super().__init__({None: None, "": None})

    def __missing__(self, text: str | None) -> dt.date:
        day = dt.date.fromisoformat(str(text))
        self[text] = day
        return day

    def day(self, text: str) -> dt.date:
        """The date of `text`, which must be one."""
        day = self[text]
        if day is None:
            raise ValueError(f"{text!r} is not a date")
        return day


def states_from_tuples(rows: Iterable[CardTuple]) -> dict[str, CardState]:
    """Every card's state from its card_state row as `card_state_select` reads it."""
    days = _Days()
    out: dict[str, CardState] = {}
    for (
        card_id,
        repetitions,
        ef,
        interval,
        due,
        lapses,
        suspended,
        buried_until,
        leech,
        changed,
        content_hash,
        last_review_day,
        repeat_pending,
        introduced_on,
        stability,
        difficulty,
        state,
        last_review,
        _reviews,
    ) in rows:
        fsrs = None
        if not (stability is None or difficulty is None or state is None or last_review is None):
            fsrs = FSRSState(float(stability), float(difficulty), int(state), days.day(last_review))
        out[card_id] = CardState(
            card_id=card_id,
            sm2=SM2State(repetitions, ef, interval),
            due=days[due],
            lapses=lapses,
            suspended=bool(suspended),
            buried_until=days[buried_until],
            leech=bool(leech),
            changed=bool(changed),
            content_hash=content_hash,
            last_review_day=days[last_review_day],
            repeat_pending=bool(repeat_pending),
            introduced_on=days[introduced_on],
            fsrs=fsrs,
        )
    return out


def figures_from_tuples(rows: Iterable[CardTuple]) -> dict[str, CardFigures]:
    """Every card's row as progress figures read it (days as text), from the rows `card_state_select` reads."""
    out: dict[str, CardFigures] = {}
    for (
        card_id,
        repetitions,
        ef,
        _interval,
        due,
        lapses,
        suspended,
        buried_until,
        leech,
        _changed,
        _content_hash,
        last_review_day,
        repeat_pending,
        introduced_on,
        *_fsrs,
        reviews,
    ) in rows:
        out[card_id] = CardFigures(
            reviews,
            lapses,
            ef,
            repetitions,
            due,
            bool(suspended),
            bool(leech),
            buried_until,
            introduced_on,
            bool(repeat_pending),
            last_review_day,
        )
    return out


def fill_card_row(row: CardRow, state: CardState) -> None:
    """Set a card_state row's scheduling columns to `state` (the text's hash and the review count are the Store's)."""
    row.repetitions = state.sm2.repetitions
    row.ef = state.sm2.ef
    row.interval = state.sm2.interval
    row.due = iso(state.due)
    row.lapses = state.lapses
    row.suspended = state.suspended
    row.buried_until = iso(state.buried_until)
    row.leech = state.leech
    row.last_review_day = iso(state.last_review_day)
    row.repeat_pending = state.repeat_pending
    row.introduced_on = iso(state.introduced_on)
    fsrs = state.fsrs
    if fsrs is None:
        row.fsrs_stability = None
        row.fsrs_difficulty = None
        row.fsrs_state = None
        row.fsrs_last_review = None
    else:
        row.fsrs_stability = fsrs.stability
        row.fsrs_difficulty = fsrs.difficulty
        row.fsrs_state = fsrs.state
        row.fsrs_last_review = iso(fsrs.last_review)


def logged_review_from_row(row: Mapping[str, Any]) -> LoggedReview:
    """A review_log row (as a mapping); a day that is not a date is named with its row."""
    try:
        day = dt.date.fromisoformat(row["day"])
    except (TypeError, ValueError):
        raise ValueError(f"review {row['id']} ({row['card_id']}): its day {row['day']!r} is not a date") from None
    answer = _answer(row.get("answer"))
    return LoggedReview(
        id=int(row["id"]),
        card_id=row["card_id"],
        day=day,
        grade=row["grade"],
        mode=row.get("mode") or "review",
        reviewed_at=row.get("reviewed_at") or "",
        answer=answer,
        duration_ms=int(row.get("duration_ms") or 0),
    )


def _answer(text: str | None) -> dict[str, Any] | None:
    """A logged answer's JSON object; None when there is none or it is not an object."""
    if not text:
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return None
    if isinstance(answer, dict):
        return answer
    return None
