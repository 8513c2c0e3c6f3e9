"""A mock interview in progress: a countdown, a clock per question, skip and come back, follow-ups.

The state machine knows nothing of screens or the database: the screen calls
`begin`, `submit`, `submit_follow_up`, `skip`, `tick` and `quit`, and saves
what `Slot.as_json` gives after each. Time is read from an injected clock
(seconds, monotonic).

A follow-up belongs to the question it follows (drill.mock.follow_ups): it is
offered only while the time left holds every planned question not yet answered
and the follow-up too, it ends when its own minutes are spent, and its score
can only raise the question's (drill.mock.grading.with_follow_up). The mock's
score is the mean over the planned questions.

How a mock feeds the schedule (see `schedule_after`): a question failed in a
mock (score below MOCK_PASS) makes its card due tomorrow, unless it is due sooner
already; a pass leaves the schedule alone. Either way the answer is logged in
the review history with mode "mock".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace

from drill.cards.model import Card
from drill.mock.follow_ups import FollowUpKind, follow_up_for
from drill.mock.grading import QuestionGrade, with_follow_up
from drill.mock.plan import MockPlan
from drill.quantities import SECONDS_PER_MINUTE
from drill.study.records import CardState
from drill.study.scheduling import MOCK_PASS

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
class FollowUpSlot:
    """A follow-up put to the learner after a question: `card` is what is asked (for a narrower follow-up, a
    card built from the one answered), `hint` what it gives away ('' for a deeper one)."""

    kind: FollowUpKind
    card: Card
    hint: str
    budget_s: float
    status: str = PENDING  # pending, answered, or unanswered (declined, or its time ran out)
    spent_s: float = 0.0
    grade: QuestionGrade | None = None
    answer: object = None
    shown: str = ""  # the question as the screen showed it (its numbers drawn), for the report

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "card_id": self.card.id,
            "prompt": self.shown or self.card.prompt,
            "hint": self.hint,
            "budget_s": self.budget_s,
            "spent_s": round(self.spent_s, 1),
            "status": self.status,
            "grade": None if self.grade is None else self.grade.as_json(),
            "answer": self.answer,
        }


@dataclass
class Slot:
    """A planned question. `score` is its score as the mock reports it and `evidence` the part drill checked,
    each with its follow-up counted; `grade` is the answer's own grade."""

    position: int
    card_id: str
    topic: str
    kind: str
    budget_s: float
    status: str = PENDING
    skips: int = 0  # how many times the learner skipped it (it came back after the others)
    spent_s: float = 0.0
    score: float | None = None
    evidence: float | None = None
    answer: object = None
    missed: list[str] = field(default_factory=list)
    grade: QuestionGrade | None = None
    follow_up: FollowUpSlot | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "card_id": self.card_id,
            "topic": self.topic,
            "kind": self.kind,
            "budget_s": self.budget_s,
            "spent_s": round(self.spent_s, 1),
            "status": self.status,
            "skips": self.skips,
            "score": self.score,
            "evidence": self.evidence,
            "answer": self.answer,
            "missed": list(self.missed),
            "grade": None if self.grade is None else self.grade.as_json(),
            "follow_up": None if self.follow_up is None else self.follow_up.as_json(),
        }


class MockRun:
    """One mock: `plan`'s questions asked in order, skipped ones asked again at the end."""

    def __init__(
        self,
        plan: MockPlan,
        cards: Mapping[str, Card],
        clock: Callable[[], float],
        recent: Collection[str] = (),
        exclude: Collection[str] = (),
    ) -> None:
        self.cards = cards
        self.clock = clock
        self.recent = frozenset(recent)  # cards reviewed lately: a deeper follow-up prefers others
        self.exclude = frozenset(exclude)  # cards a follow-up never asks (suspended ones)
        self.minutes = plan.minutes
        self.slots = [
            Slot(i + 1, q.card_id, q.topic, q.kind, q.minutes * SECONDS_PER_MINUTE)
            for i, q in enumerate(plan.questions)
        ]
        self.started = clock()
        self.status = RUNNING
        self.current: Slot | None = None
        self._since: float | None = None
        self._follow_up_due: Slot | None = None  # a question whose follow-up is asked next
        self.changed: list[Slot] = []  # slots changed since the caller last saved (it clears this)

    # -- time ------------------------------------------------------------------
    @property
    def deadline(self) -> float:
        return self.started + self.minutes * SECONDS_PER_MINUTE

    def time_left(self) -> float:
        return max(0.0, self.deadline - self.clock())

    def question_elapsed(self) -> float:
        """Seconds spent on the current question (or its follow-up, when that is asked), earlier visits included."""
        if self.current is None:
            return 0.0
        extra = self.clock() - self._since if self._since is not None else 0.0
        follow = self.asking_follow_up()
        return (follow.spent_s if follow is not None else self.current.spent_s) + extra

    def asking_follow_up(self) -> FollowUpSlot | None:
        """The follow-up being asked now, if the current question is at its follow-up."""
        slot = self.current
        if slot is None or slot.status != ANSWERED or slot.follow_up is None or slot.follow_up.status != PENDING:
            return None
        return slot.follow_up

    def follow_up_over(self) -> bool:
        """Whether the follow-up being asked has used its minutes (the screen then moves on)."""
        follow = self.asking_follow_up()
        return follow is not None and self.question_elapsed() >= follow.budget_s

    def tick(self) -> bool:
        """Check the countdown; ends the mock as time_up when it has run out. True while it runs."""
        if self.status == RUNNING and self.clock() >= self.deadline:
            self._stop(TIME_UP)
        return self.status == RUNNING

    # -- moving through the questions ---------------------------------------------
    def next_slot(self) -> Slot | None:
        """The next question to ask: a follow-up just earned, the first pending one, then the first skipped one."""
        if self._follow_up_due is not None:
            return self._follow_up_due
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
        self._follow_up_due = None
        self.current = slot
        self._since = self.clock()
        return slot

    def _leave(self) -> Slot:
        slot = self.current
        assert slot is not None, "no question is being asked"
        now = min(self.clock(), self.deadline)
        follow = self.asking_follow_up()
        if self._since is not None:
            spent = max(0.0, now - self._since)
            if follow is not None:
                follow.spent_s += spent
            else:
                slot.spent_s += spent
        self.current = None
        self._since = None
        return slot

    def skip(self) -> None:
        """Leave the current question unanswered for now (it comes back after the others); at a follow-up,
        decline it (the question keeps its score)."""
        follow = self.asking_follow_up()
        slot = self._leave()
        if follow is not None:
            follow.status = UNANSWERED
        else:
            slot.status = SKIPPED
            slot.skips += 1
        self.changed.append(slot)

    def submit(self, grade: QuestionGrade, answer: object) -> FollowUpSlot | None:
        """Record the current question's grade; returns the follow-up it earned when there is time for one
        (asked next, by `begin`)."""
        slot = self._leave()
        slot.status = ANSWERED
        slot.grade = grade
        slot.score = _unit(grade.score)
        slot.evidence = _unit(grade.evidence)
        slot.answer = answer
        slot.missed = list(grade.missed)
        self.changed.append(slot)
        return self._offer_follow_up(slot, grade)

    def _offer_follow_up(self, after: Slot, grade: QuestionGrade) -> FollowUpSlot | None:
        """A follow-up to the answer, in addition to the plan: only when the time left still holds every planned
        question not yet answered and the follow-up too. A planned question is never dropped for one (the setup
        screen showed the plan as the mock to sit)."""
        card = self.cards.get(after.card_id)
        if card is None:  # no longer in the decks
            return None
        asked = {s.card_id for s in self.slots} | {s.follow_up.card.id for s in self.slots if s.follow_up}
        asked |= self.exclude
        offer = follow_up_for(card, grade.score, grade.first_missed, self.cards, asked, self.recent)
        if offer is None:
            return None
        budget_s = offer.minutes * SECONDS_PER_MINUTE
        still_to_ask_s = sum(s.budget_s for s in self.slots if s.status in (PENDING, SKIPPED))
        if still_to_ask_s + budget_s > self.time_left():
            return None
        after.follow_up = FollowUpSlot(offer.kind, offer.card, offer.hint, budget_s)
        self._follow_up_due = after
        return after.follow_up

    def submit_follow_up(self, grade: QuestionGrade, answer: object) -> None:
        """Record the follow-up's grade; the question's score and evidence take it in, never lower for it."""
        follow = self.asking_follow_up()
        assert follow is not None, "no follow-up is being asked"
        slot = self._leave()
        follow.status = ANSWERED
        follow.grade = grade
        follow.answer = answer
        own = slot.grade
        assert own is not None
        hinted = bool(follow.hint)
        slot.score = _unit(with_follow_up(own.score, grade.score, hinted))
        slot.evidence = _unit(with_follow_up(own.evidence, grade.evidence, hinted))
        self.changed.append(slot)

    def end_follow_up(self) -> None:
        """The follow-up being asked ran out of its minutes unanswered: the question keeps its score."""
        if self.asking_follow_up() is not None:
            self.skip()

    def quit(self) -> None:
        """End the mock now; what was answered stays answered."""
        if self.status == RUNNING:
            self._stop(QUIT)

    def _stop(self, status: str) -> None:
        if self.current is not None:
            self._leave()
        due = self._follow_up_due
        if due is not None and due.follow_up is not None and due.follow_up.spent_s == 0:
            due.follow_up = None  # offered as the mock ended, never put to the learner
        self._follow_up_due = None
        for slot in self.slots:
            if slot.status in (PENDING, SKIPPED):
                slot.status = UNANSWERED
                self.changed.append(slot)
            if slot.follow_up is not None and slot.follow_up.status == PENDING:
                slot.follow_up.status = UNANSWERED
                self.changed.append(slot)
        self.status = status if self.answered() else ABANDONED

    def answered(self) -> int:
        """How many questions have an answer the learner submitted."""
        return sum(s.status == ANSWERED for s in self.slots)

    # -- results -----------------------------------------------------------------
    def score(self) -> float | None:
        """Mean score over every planned question in the mock (each with its follow-up), unanswered and skipped
        ones counting 0; None (not scored) while no question is answered."""
        if not self.answered():
            return None
        return sum(s.score or 0.0 for s in self.slots) / len(self.slots)

    def counts(self) -> dict[str, int]:
        out = {ANSWERED: 0, SKIPPED: 0, UNANSWERED: 0, PENDING: 0}
        for s in self.slots:
            out[s.status] += 1
        return out


def _unit(value: float) -> float:
    return max(0.0, min(1.0, value))


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
