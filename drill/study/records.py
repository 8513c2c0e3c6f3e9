"""The domain's plain records: what the scheduler knows of a card, a logged review, the figures progress reads.

Plain dataclasses with no database layer, so they import fast; the store converts its
rows to them (drill.store.rows) and never the other way round.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NotRequired, Protocol, TypedDict

from drill.study.sm2 import SM2State


class CardFacts(Protocol):
    """What the study domain reads of a card (the new-card order, progress figures, readiness): a Card, or the
    deck summary's CardSummary (drill.cards.deck_summary)."""

    @property
    def id(self) -> str: ...
    @property
    def topic(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def fields(self) -> Mapping[str, object]: ...


def _iso(day: dt.date | None) -> str | None:
    if day is None:
        return None
    return day.isoformat()


def _date_from_iso(text: str | None) -> dt.date | None:
    if not text:
        return None
    return dt.date.fromisoformat(text)


class FSRSStateJSON(TypedDict):
    """FSRSState as the review log and review exports keep it."""

    stability: float
    difficulty: float
    state: int
    last_review: str


class CardStateJSON(TypedDict):
    """CardState as the review log keeps it before and after each review (and review exports carry)."""

    repetitions: int
    ef: float
    interval: int
    due: str | None
    lapses: NotRequired[int]
    leech: NotRequired[bool]
    last_review_day: NotRequired[str | None]
    repeat_pending: NotRequired[bool]
    introduced_on: NotRequired[str | None]
    fsrs: NotRequired[FSRSStateJSON | None]


@dataclass(frozen=True)
class FSRSState:
    """What FSRS keeps of a card besides its due date (which is the card's one due date, `CardState.due`).

    `state` is FSRS's own numbering: 1 learning, 2 review, 3 relearning.
    `last_review` is the study day of the last review FSRS scheduled.
    """

    stability: float
    difficulty: float
    state: int
    last_review: dt.date

    def as_json(self) -> FSRSStateJSON:
        return {
            "stability": self.stability,
            "difficulty": self.difficulty,
            "state": self.state,
            "last_review": self.last_review.isoformat(),
        }

    @classmethod
    def from_json(cls, data: FSRSStateJSON) -> "FSRSState":
        return cls(
            float(data["stability"]),
            float(data["difficulty"]),
            int(data["state"]),
            dt.date.fromisoformat(data["last_review"]),
        )


@dataclass
class CardState:
    """What the scheduler knows of one card.

    `due` is the card's one due date, whichever scheduler set it; the queue reads it.
    `sm2` holds SM-2's repetitions, ease and interval, kept under either scheduler.
    `fsrs` is set while FSRS is the active scheduler and None under SM-2.
    """

    card_id: str
    sm2: SM2State = field(default_factory=SM2State)
    due: dt.date | None = None
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

    def as_json(self) -> CardStateJSON:
        """The form the review log keeps before and after each review (and review exports carry)."""
        data: CardStateJSON = {
            "repetitions": self.sm2.repetitions,
            "ef": self.sm2.ef,
            "interval": self.sm2.interval,
            "due": _iso(self.due),
            "lapses": self.lapses,
            "leech": self.leech,
            "last_review_day": _iso(self.last_review_day),
            "repeat_pending": self.repeat_pending,
            "introduced_on": _iso(self.introduced_on),
        }
        if self.fsrs is not None:  # absent under SM-2, so SM-2 states read as they always did
            data["fsrs"] = self.fsrs.as_json()
        return data

    @classmethod
    def from_json(cls, card_id: str, data: CardStateJSON, base: "CardState | None" = None) -> "CardState":
        """The state `as_json` wrote; what it does not hold (suspension, burial, the text's hash) comes from `base`."""
        if base is None:
            state = cls(card_id=card_id)
        else:
            state = CardState(**base.__dict__)
        state.sm2 = SM2State(data["repetitions"], data["ef"], data["interval"])
        state.due = _date_from_iso(data["due"])
        state.lapses = data.get("lapses", 0)
        state.leech = data.get("leech", False)
        state.last_review_day = _date_from_iso(data.get("last_review_day"))
        state.repeat_pending = data.get("repeat_pending", False)
        state.introduced_on = _date_from_iso(data.get("introduced_on"))
        fsrs = data.get("fsrs")
        state.fsrs = FSRSState.from_json(fsrs) if fsrs else None
        return state


@dataclass(frozen=True)
class LoggedReview:
    """One row of the review log, as a scheduler replays it."""

    id: int
    card_id: str
    day: dt.date  # the study day it counted for
    grade: int
    mode: str  # review, early, repeat, cram, mock
    reviewed_at: str = ""
    answer: dict[str, object] | None = None
    duration_ms: int = 0  # how long the answer took; 0 when not timed


def same_review(card_id: str, reviewed_at: str) -> tuple[str, str]:
    """What makes two logged reviews one review, whichever file brought them: the card and the time to the
    second (grades and modes differ between tools: Anki keeps drill's 0 and 2 as its 1)."""
    return card_id, str(reviewed_at)[:19]


@dataclass(frozen=True)
class CardFigures:
    """One card's row of card_state, as progress figures need it (dates as ISO text, compared as text)."""

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
    """What the database holds for progress figures; drill.study.standing turns it into figures."""

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
