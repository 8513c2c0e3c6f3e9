"""Plain records the store hands to the domain (no SQLModel, so they import fast)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from drill.sm2 import SM2State


@dataclass
class CardState:
    """What the scheduler knows of one card."""

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

    @property
    def is_new(self) -> bool:
        return self.introduced_on is None

    def as_json(self) -> dict[str, Any]:
        return {
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
        return state
