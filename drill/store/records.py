"""Plain records the store hands to the domain (no SQLModel, so they import fast)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from drill.sm2 import SM2State


@dataclass(frozen=True)
class FSRSState:
    """What FSRS keeps of a card besides its due date (which is the card's one due date, `sm2.due`).

    `state` is FSRS's own numbering: 1 learning, 2 review, 3 relearning.
    `last_review` is the study day of the last review FSRS scheduled.
    """

    stability: float
    difficulty: float
    state: int
    last_review: dt.date

    def as_json(self) -> dict[str, Any]:
        return {
            "stability": self.stability,
            "difficulty": self.difficulty,
            "state": self.state,
            "last_review": self.last_review.isoformat(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "FSRSState":
        return cls(
            float(data["stability"]),
            float(data["difficulty"]),
            int(data["state"]),
            dt.date.fromisoformat(data["last_review"]),
        )


@dataclass
class CardState:
    """What the scheduler knows of one card.

    `sm2` holds SM-2's repetitions, ease and interval (kept under either scheduler) and
    the card's due date, which the active scheduler sets and the queue reads. `fsrs` is
    set while FSRS is the active scheduler and None under SM-2.
    """

    card_id: str
    sm2: SM2State = field(default_factory=SM2State)
    lapses: int = 0
    suspended: bool = False
    buried_until: dt.date | None = None
    leech: bool = False
    changed: bool = False
    content_hash: str = ""
    last_review_day: dt.date | None = None
    repeat_pending: bool = False
    introduced_on: dt.date | None = None
    fsrs: FSRSState | None = None

    @property
    def is_new(self) -> bool:
        return self.introduced_on is None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "repetitions": self.sm2.repetitions,
            "ef": self.sm2.ef,
            "interval": self.sm2.interval,
            "due": self.sm2.due.isoformat() if self.sm2.due else None,
            "lapses": self.lapses,
            "leech": self.leech,
            "last_review_day": self.last_review_day.isoformat() if self.last_review_day else None,
            "repeat_pending": self.repeat_pending,
            "introduced_on": self.introduced_on.isoformat() if self.introduced_on else None,
        }
        if self.fsrs is not None:  # absent under SM-2, so SM-2 states read as they always did
            data["fsrs"] = self.fsrs.as_json()
        return data

    @classmethod
    def from_json(cls, card_id: str, data: dict[str, Any], base: "CardState | None" = None) -> "CardState":
        def day(v: str | None) -> dt.date | None:
            return dt.date.fromisoformat(v) if v else None

        state = cls(card_id=card_id) if base is None else CardState(**base.__dict__)
        state.sm2 = SM2State(data["repetitions"], data["ef"], data["interval"], day(data["due"]))
        state.lapses = data.get("lapses", 0)
        state.leech = data.get("leech", False)
        state.last_review_day = day(data.get("last_review_day"))
        state.repeat_pending = data.get("repeat_pending", False)
        state.introduced_on = day(data.get("introduced_on"))
        state.fsrs = FSRSState.from_json(data["fsrs"]) if data.get("fsrs") else None
        return state


@dataclass(frozen=True)
class LoggedReview:
    """One row of the review log, as a scheduler replays it."""

    id: int
    card_id: str
    day: dt.date  # the study day it counted for
    grade: int
    mode: str  # review, repeat, cram, mock
    reviewed_at: str = ""
    answer: dict[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "LoggedReview":
        """A review_log row (as a mapping); a day that is not a date is named with its row."""
        try:
            day = dt.date.fromisoformat(row["day"])
        except (TypeError, ValueError):
            raise ValueError(f"review {row['id']} ({row['card_id']}): its day {row['day']!r} is not a date") from None
        try:
            answer = json.loads(row["answer"]) if row.get("answer") else None
        except ValueError:
            answer = None
        return cls(
            id=int(row["id"]),
            card_id=row["card_id"],
            day=day,
            grade=row["grade"],
            mode=row.get("mode") or "review",
            reviewed_at=row.get("reviewed_at") or "",
            answer=answer if isinstance(answer, dict) else None,
        )
