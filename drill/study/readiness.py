"""Readiness for the interview date as drill shows it: `drill plan`, `drill stats`, the stats screen, the mock report.

`readiness_figures` puts the domain's pieces together for one learner on one study day:

- predicted recall on the date if the learner stops now (drill.study.forecast.stop_now),
  from FSRS memory replayed from the whole review log, today's reviews included;
- the plan to the date (drill.study.plan.make_plan) with the learner's own seconds per
  card of each kind and grade mix, made from the record as it stood at the start of the
  day (the log before today, each card's due day before today's review): today's new
  cards and early reviews stay the same all day, however often the queue is rebuilt;
- today's early reviews (drill.study.plan.early_reviews), from the same start-of-day record.

`as_json()` gives the shape `drill stats --json` carries under "readiness", and
`calibration` the one under "calibration" (drill.study.calibration.CalibrationFigures). Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.study.calibration import ROUNDED, CalibrationFigures, calibrate
from drill.study.forecast import CardMemory, DayReplay, MemoryModel, Readiness, TrackCard, replay, replay_day, stop_now
from drill.study.plan import StudyPlan, early_reviews, grade_mix, make_plan, seconds_per_card
from drill.study.records import CardState, FSRSState, LoggedReview
from drill.study.session import Dealt, new_card_order

TIMED_MODES = ("review", "early", "repeat", "cram")  # views whose seconds say how long a card takes (a mock's do not)
TOPICS_IN_A_LINE = 3  # the topics with the largest gap a one-line summary names


@dataclass(frozen=True)
class Interview:
    """What the learner set: the date, the track (None: every card), the target recall, the minutes a day."""

    date: dt.date
    track: str | None
    target: float
    minutes_per_day: int


@dataclass(frozen=True)
class TopicLine:
    topic: str
    title: str
    cards: int
    stop_now: float
    with_plan: float

    def gap(self, target: float) -> float:
        """How far the topic is from the target today."""
        return target - self.stop_now


@dataclass(frozen=True)
class ReadinessFigures:
    """Readiness on the interview date and the plan to it, on study day `today`.

    `plan` is None on the interview day itself (no day is left to plan).
    """

    interview: Interview
    today: dt.date
    now: Readiness  # if the learner stops now, today's reviews included
    plan: StudyPlan | None
    titles: Mapping[str, str]
    early_today: tuple[str, ...]  # cards to review today although not due, lowest predicted recall first

    @property
    def days_left(self) -> int:
        return (self.interview.date - self.today).days

    @property
    def with_plan(self) -> float:
        return self.plan.planned.overall if self.plan is not None else self.now.overall

    @property
    def new_today(self) -> tuple[str, ...]:
        """The plan's new cards for today, in the order the queue shows them."""
        if self.plan is None or not self.plan.days:
            return ()
        return self.plan.days[0].new_cards

    def topics(self) -> list[TopicLine]:
        """Each topic's readiness, the largest gap to the target first."""
        lines = []
        for topic in self.now.topics:
            planned = self.plan.planned.topic(topic.topic) if self.plan is not None else None
            with_plan = planned.readiness if planned is not None else topic.readiness
            title = self.titles.get(topic.topic, topic.topic)
            lines.append(TopicLine(topic.topic, title, topic.cards, topic.readiness, with_plan))
        lines.sort(key=lambda line: (-line.gap(self.interview.target), line.topic))
        return lines

    def summary_line(self) -> str:
        """One line: overall stop-now and with-plan, and the topics furthest from the target (the mock report's)."""
        target = self.interview.target
        furthest = ", ".join(
            f"{line.title} {line.stop_now:.0%}" for line in self.topics()[:TOPICS_IN_A_LINE] if line.gap(target) > 0
        )
        line = (
            f"Readiness on {self.interview.date.isoformat()} ({days_left_words(self.days_left)}): "
            f"{self.now.overall:.0%} if you stop now, {self.with_plan:.0%} with the plan (target {target:.0%})"
        )
        return f"{line}; furthest from the target: {furthest}" if furthest else line

    def as_json(self) -> dict[str, Any]:
        target = self.interview.target
        return {
            "date": self.interview.date.isoformat(),
            "days_left": self.days_left,
            "track": self.interview.track,
            "target": target,
            "minutes_per_day": self.interview.minutes_per_day,
            "overall": {"stop_now": _r(self.now.overall), "with_plan": _r(self.with_plan)},
            "topics": [
                {
                    "topic": line.topic,
                    "title": line.title,
                    "cards": line.cards,
                    "stop_now": _r(line.stop_now),
                    "with_plan": _r(line.with_plan),
                    "gap": _r(line.gap(target)),
                }
                for line in self.topics()
            ],
            "plan": _plan_json(self.plan) if self.plan is not None else None,
        }


def _plan_json(plan: StudyPlan) -> dict[str, Any]:
    days = [
        {
            "date": day.day.isoformat(),
            "new": len(day.new_cards),
            "reviews": round(day.reviews),
            "early": round(day.early_reviews),
            "minutes": round(day.minutes),
            "mock": day.mock,
        }
        for day in plan.days
    ]
    return {
        "fits": plan.fits,
        "why_not": "; ".join(plan.reasons) or None,
        "needs_minutes": plan.minutes_needed,
        "leave_out": [cut.topic for cut in plan.leave_out],
        "today": {key: value for key, value in days[0].items() if key != "date"},
        "days": days[1:],
        "mocks": [day.isoformat() for day in plan.mocks],
    }


def readiness_figures(
    cards: Sequence[Dealt],
    log: Sequence[LoggedReview],
    states: Mapping[str, CardState],
    today: dt.date,
    interview: Interview,
    *,
    titles: Mapping[str, str],
    model: MemoryModel | None = None,
    new_order: str = "lab",
    replayed: DayReplay | None = None,
) -> ReadinessFigures:
    """Readiness and the plan over `cards` (the track's), from the log and the card states, on study day `today`.

    `replayed` is the log replayed to the start of today and whole (forecast.replay_day, or a cache of it);
    None: it is replayed here. Suspended cards are left out: the queue never asks them. The date must not
    be before today (ValueError).
    """
    if interview.date < today:
        raise ValueError(f"the interview date {interview.date.isoformat()} has passed")
    model = model or MemoryModel()
    chosen = [card for card in cards if not (states.get(card.id) and states[card.id].suspended)]
    topic_of = {card.id: card.topic for card in chosen}
    kind_of = {card.id: card.kind for card in chosen}
    if replayed is None:
        replayed = replay_day(log, today, model)
    current = replayed.now.cards
    now = stop_now(
        [TrackCard(cid, topic_of[cid], kind_of[cid], _memory(current, cid)) for cid in topic_of], interview.date, model
    )
    if interview.date == today:
        return ReadinessFigures(interview, today, now, None, titles, ())

    at_start = replayed.at_start.cards
    seen = [card for card in chosen if card.id in at_start]
    unseen = [card for card in chosen if card.id not in at_start]
    # the plan deals new cards in the order the queue would introduce them
    order = [*(card.id for card in seen), *new_card_order(unseen, new_order, today.toordinal())]
    track = [
        TrackCard(cid, topic_of[cid], kind_of[cid], _memory(at_start, cid), _due_at_start(states.get(cid), today))
        for cid in order
    ]
    # the learner's pace and grades as they stood at the start of the day, as the memories are: the plan is the
    # same all day, whatever is graded meanwhile
    before_today = [row for row in log if row.day < today]
    all_kinds = {row.card_id: kind_of.get(row.card_id) for row in before_today}
    timed = [
        (kind, row.duration_ms / 1000)
        for row in before_today
        if row.mode in TIMED_MODES and (kind := all_kinds.get(row.card_id)) is not None
    ]
    plan = make_plan(
        track,
        today=today,
        date=interview.date,
        minutes_per_day=interview.minutes_per_day,
        target=interview.target,
        seconds_by_kind=seconds_per_card(timed),
        model=model,
        grades=grade_mix(before_today),
    )
    early = early_reviews(track, today, interview.date, interview.target, model)
    return ReadinessFigures(interview, today, now, plan, titles, tuple(early))


def calibration(log: Iterable[LoggedReview], model: MemoryModel | None = None) -> CalibrationFigures:
    """Predicted recall against what happened, over every review the model predicted."""
    return CalibrationFigures(calibrate(replay(log, model).outcomes))


def _memory(memories: Mapping[str, CardMemory], card_id: str) -> FSRSState | None:
    known = memories.get(card_id)
    return known.memory if known is not None else None


def _due_at_start(state: CardState | None, today: dt.date) -> dt.date | None:
    """The day the queue asks the card, as it stood at the start of `today`.

    A card reviewed today was in today's queue (due, or early): it counts as due today,
    not at the day its review today moved it to.
    """
    if state is None:
        return None
    if state.last_review_day == today:
        return today
    return state.due


def days_left_words(count: int) -> str:
    """ "17 days left", "1 day left", "today"."""
    if count == 0:
        return "today"
    return f"{count} day{'s' if count != 1 else ''} left"


def _r(value: float) -> float:
    return round(value, ROUNDED)
