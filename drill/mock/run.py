"""A mock interview in progress: a countdown, a clock per question, skip and come back, follow-ups.

The state machine knows nothing of screens or the database: the screen calls
`begin`, `submit`, `skip`, `tick` and `quit`, and saves what `Slot.as_json`
gives after each. Time is read from an injected clock (seconds, monotonic).

How a mock feeds the schedule (see `schedule_after`): a question failed in a
mock (score below MOCK_PASS) makes its card due tomorrow, unless it is due sooner
already; a pass leaves the schedule alone. Either way the answer is logged in
the review history with mode "mock".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from drill.cards.model import Card
from drill.mock.plan import MockPlan, minutes_for
from drill.quantities import SECONDS_PER_MINUTE
from drill.study.records import CardState
from drill.study.scheduling import MOCK_PASS

FOLLOW_UP_AT = 0.8  # a score at or above this earns a follow-up question

# Where a question stands.
PENDING = "pending"
ANSWERED = "answered"
SKIPPED = "skipped"
UNANSWERED = "unanswered"
# How the mock stands, or how it ended.
RUNNING = "running"
FINISHED = "finished"
TIME_UP = "time_up"
QUIT = "quit"
# A mock that ended (however) with no question answered: kept in the list, never scored, never in weakness.
ABANDONED = "abandoned"
# How a mock's ending is named to the learner, alike in the report, `drill mock --list` and the stats screen.
STATUS_WORDS = {FINISHED: "finished", TIME_UP: "time ran out", QUIT: "ended early", ABANDONED: "abandoned"}


@dataclass
class Slot:
    position: int
    card_id: str
    topic: str
    kind: str
    budget_s: float
    status: str = PENDING
    spent_s: float = 0.0
    score: float | None = None
    answer: Any = None
    missed: list[str] = field(default_factory=list)
    follow_up_of: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "card_id": self.card_id,
            "topic": self.topic,
            "kind": self.kind,
            "budget_s": self.budget_s,
            "spent_s": round(self.spent_s, 1),
            "status": self.status,
            "score": self.score,
            "answer": self.answer,
            "missed": list(self.missed),
            "follow_up_of": self.follow_up_of,
        }


class MockRun:
    """One mock: `plan`'s questions asked in order, skipped ones asked again at the end."""

    def __init__(self, plan: MockPlan, cards: Mapping[str, Card], clock: Callable[[], float]) -> None:
        self.cards = cards
        self.clock = clock
        self.minutes = plan.minutes
        self.slots = [
            Slot(i + 1, q.card_id, q.topic, q.kind, q.minutes * SECONDS_PER_MINUTE)
            for i, q in enumerate(plan.questions)
        ]
        self.started = clock()
        self.status = RUNNING
        self.current: Slot | None = None
        self._since: float | None = None
        self.changed: list[Slot] = []  # slots changed since the caller last saved (it clears this)

    # -- time ------------------------------------------------------------------
    @property
    def deadline(self) -> float:
        return self.started + self.minutes * SECONDS_PER_MINUTE

    def time_left(self) -> float:
        return max(0.0, self.deadline - self.clock())

    def question_elapsed(self) -> float:
        """Seconds spent on the current question, earlier visits included."""
        if self.current is None:
            return 0.0
        extra = self.clock() - self._since if self._since is not None else 0.0
        return self.current.spent_s + extra

    def tick(self) -> bool:
        """Check the countdown; ends the mock as time_up when it has run out. True while it runs."""
        if self.status == RUNNING and self.clock() >= self.deadline:
            self._stop(TIME_UP)
        return self.status == RUNNING

    # -- moving through the questions ---------------------------------------------
    def next_slot(self) -> Slot | None:
        """The next question to ask: the first pending one, then the first skipped one."""
        for wanted in (PENDING, SKIPPED):
            for slot in self.slots:
                if slot.status == wanted and slot is not self.current:
                    return slot
        return None

    def begin(self) -> Slot | None:
        """Start (or return to) the next question; None, and the mock finished, when none is left."""
        if not self.tick():
            return None
        slot = self.next_slot()
        if slot is None:
            self._stop(FINISHED)
            return None
        self.current = slot
        self._since = self.clock()
        return slot

    def _leave(self) -> Slot:
        slot = self.current
        assert slot is not None, "no question is being asked"
        now = min(self.clock(), self.deadline)
        if self._since is not None:
            slot.spent_s += max(0.0, now - self._since)
        self.current = None
        self._since = None
        return slot

    def skip(self) -> None:
        """Leave the current question unanswered for now; it comes back after the others."""
        slot = self._leave()
        slot.status = SKIPPED
        self.changed.append(slot)

    def submit(self, score: float, answer: Any, missed: Sequence[str] = ()) -> Slot | None:
        """Record the current question's result; returns a follow-up slot when a good answer earned one."""
        slot = self._leave()
        slot.status = ANSWERED
        slot.score = max(0.0, min(1.0, score))
        slot.answer = answer
        slot.missed = list(missed)
        self.changed.append(slot)
        if slot.score >= FOLLOW_UP_AT:
            return self._add_follow_up(slot)
        return None

    def _add_follow_up(self, after: Slot) -> Slot | None:
        """Put one of the card's follow-ups next, in addition to the plan: only when the time left still holds
        every planned question not yet answered and the follow-up too. A planned question is never dropped for
        one (the setup screen showed the plan as the mock to sit)."""
        card = self.cards.get(after.card_id)
        if card is None:  # no longer in the decks
            return None
        asked = {s.card_id for s in self.slots}
        options = [cid for cid in card.follow_ups if cid in self.cards and cid not in asked]
        if not options:
            return None
        follow = self.cards[options[0]]
        budget_s = minutes_for(follow) * SECONDS_PER_MINUTE
        still_to_ask_s = sum(s.budget_s for s in self.slots if s.status in (PENDING, SKIPPED))
        if still_to_ask_s + budget_s > self.time_left():
            return None
        slot = Slot(0, follow.id, follow.topic, follow.kind, budget_s, follow_up_of=after.card_id)
        self.slots.insert(self.slots.index(after) + 1, slot)
        for i, s in enumerate(self.slots):
            s.position = i + 1
        return slot

    def quit(self) -> None:
        """End the mock now; what was answered stays answered."""
        if self.status == RUNNING:
            self._stop(QUIT)

    def _stop(self, status: str) -> None:
        if self.current is not None:
            self._leave()
        for slot in self.slots:
            if slot.status in (PENDING, SKIPPED):
                slot.status = UNANSWERED
                self.changed.append(slot)
        self.status = status if self.answered() else ABANDONED

    def answered(self) -> int:
        """How many questions have an answer the learner submitted."""
        return sum(s.status == ANSWERED for s in self.slots)

    # -- results -----------------------------------------------------------------
    def score(self) -> float | None:
        """Mean score over every question in the mock, unanswered and skipped ones counting 0; None (not
        scored) while no question is answered."""
        if not self.answered():
            return None
        return sum(s.score or 0.0 for s in self.slots) / len(self.slots)

    def counts(self) -> dict[str, int]:
        out = {ANSWERED: 0, SKIPPED: 0, UNANSWERED: 0, PENDING: 0}
        for s in self.slots:
            out[s.status] += 1
        return out


def schedule_after(state: CardState, score: float, today: dt.date) -> CardState:
    """The card's state after a mock answer: failed -> due tomorrow (unless sooner); passed -> unchanged."""
    if score >= MOCK_PASS:
        return state
    tomorrow = today + dt.timedelta(days=1)
    if state.due is not None and state.due <= tomorrow:
        return state
    return replace(state, due=tomorrow, introduced_on=state.introduced_on or today)


def grade_for(score: float) -> int:
    """The 0-5 grade logged for a mock answer's score."""
    return max(0, min(5, round(score * 5)))
