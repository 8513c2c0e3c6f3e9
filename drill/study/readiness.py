"""Readiness for the interview date as drill shows it: `drill plan`, `drill stats`, the stats screen, the mock report.

`readiness_figures` puts the domain's pieces together for one learner on one study day:

- predicted recall on the date if the learner stops now (drill.study.forecast.stop_now),
  from FSRS memory replayed from the whole review log, today's reviews included;
- the plan to the date (drill.study.plan.make_plan) for the minutes a day given, with the
  learner's own pace (drill.study.pace), grade mix, stability factor and skip rate
  (drill.study.uncertainty), made from the record as it stood at the start of the day (the
  log before today, each card's due day before today's review): today's cards
  (`plan.today_cards`, the very list the queue serves) stay the same all day, however often
  the queue is rebuilt; so the plan is kept for the day (drill.study.kept_plan, given a keeper)
  and made once;
- the seconds already spent today, which the day's budget counts;
- the forecast against what happened over the last seven days (drill.study.calibration.WeekCheck).

`as_json()` gives the shape `drill stats --json` carries under "readiness", and
`calibration` the one under "calibration" (drill.study.calibration.CalibrationFigures). Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drill.study.calibration import ROUNDED, CalibrationFigures, WeekCheck, calibrate
from drill.study.forecast import CardMemory, DayReplay, MemoryModel, Readiness, TrackCard, replay, replay_day, stop_now
from drill.study.kept_plan import PlanKeeper, plan_kept
from drill.study.pace import TIMED_MODES
from drill.study.plan import PlanInputs, StudyPlan, plan_of
from drill.study.records import CardFacts, CardState, FSRSState, LoggedReview
from drill.study.session import new_card_order
from drill.study.uncertainty import learner_uncertainty

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
    week: WeekCheck = WeekCheck(0, None, None)  # the forecast against the last seven days' recalls
    spent_today_seconds: float = 0.0  # timed views logged today: the day's budget counts them

    @property
    def early_today(self) -> tuple[str, ...]:
        """Cards to review today although not due: the early reviews, then the top-up, each lowest recall first."""
        if self.plan is None:
            return ()
        return self.plan.today_cards.ahead

    @property
    def days_left(self) -> int:
        return (self.interview.date - self.today).days

    @property
    def with_plan(self) -> float:
        return self.plan.forecast.mean if self.plan is not None else self.now.overall

    @property
    def new_today(self) -> tuple[str, ...]:
        """The plan's new cards for today, in the order the queue shows them."""
        if self.plan is None:
            return ()
        return self.plan.today_cards.new

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
            "week": self.week.as_json(),
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
        "policy": plan.policy,
        "forecast": plan.forecast.as_json(),
        "needs_reaches": None if plan.needed_reaches is None else _r(plan.needed_reaches),
        "fits": plan.fits,
        "why_not": "; ".join(plan.reasons) or None,
        "needs_minutes": plan.minutes_needed,
        "leave_out": [cut.topic for cut in plan.leave_out],
        "today": {key: value for key, value in days[0].items() if key != "date"},
        "days": days[1:],
        "mocks": [day.isoformat() for day in plan.mocks],
    }


@dataclass(frozen=True)
class ReadinessInputs:
    """What readiness reads of the learner's data besides the card states: the interview, the track's cards and
    the others, the topics' titles, the memory model, the review log replayed to today (cached), and where the
    day's plan is kept (None: made afresh)."""

    interview: Interview
    cards: Sequence[CardFacts]
    others: Sequence[CardFacts]
    titles: Mapping[str, str]
    model: MemoryModel
    replayed: DayReplay
    keeper: PlanKeeper | None = None


def readiness_of(
    read: ReadinessInputs,
    states: Mapping[str, CardState],
    today: dt.date,
    *,
    new_order: str,
    suggest: bool = True,
) -> ReadinessFigures:
    """`figures_of_replay` over what was read (`read`: the cached replay carries what the plan reads of the log)
    and the card states."""
    return figures_of_replay(
        read.cards,
        read.replayed,
        states,
        today,
        read.interview,
        titles=read.titles,
        model=read.model,
        new_order=new_order,
        others=read.others,
        suggest=suggest,
        keeper=read.keeper,
    )


def readiness_figures(
    cards: Sequence[CardFacts],
    log: Sequence[LoggedReview],
    states: Mapping[str, CardState],
    today: dt.date,
    interview: Interview,
    *,
    titles: Mapping[str, str],
    model: MemoryModel | None = None,
    new_order: str = "lab",
    replayed: DayReplay | None = None,
    others: Sequence[CardFacts] = (),
    suggest: bool = True,
    keeper: PlanKeeper | None = None,
) -> ReadinessFigures:
    """`figures_of_replay` from the log: `replayed` is the log replayed to the start of today and whole
    (forecast.replay_day, or a cache of it); None: `log` is replayed here (given `replayed`, `log` is not read)."""
    model = model or MemoryModel()
    if replayed is None:
        replayed = replay_day(log, today, model)
    return figures_of_replay(
        cards,
        replayed,
        states,
        today,
        interview,
        titles=titles,
        model=model,
        new_order=new_order,
        others=others,
        suggest=suggest,
        keeper=keeper,
    )


def figures_of_replay(
    cards: Sequence[CardFacts],
    replayed: DayReplay,
    states: Mapping[str, CardState],
    today: dt.date,
    interview: Interview,
    *,
    titles: Mapping[str, str],
    model: MemoryModel,
    new_order: str = "lab",
    others: Sequence[CardFacts] = (),
    suggest: bool = True,
    keeper: PlanKeeper | None = None,
) -> ReadinessFigures:
    """Readiness and the plan over `cards` (the track's), from the replayed log and the card states, on study day
    `today`.

    `replayed` is the log replayed to the start of today and whole, with the digest of its rows the plan reads.
    `others` are the cards outside the track: the queue serves them when due, so the day's minutes
    count them. `suggest` False leaves out what would fit when the plan does not (the day's queue needs
    none of it). `keeper`: where the day's plan is kept (drill.study.kept_plan.plan_kept);
    None: it is made here. Suspended cards are left out: the queue never asks
    them. The date must not be before today (ValueError).
    """
    if interview.date < today:
        raise ValueError(f"the interview date {interview.date.isoformat()} has passed")
    # the loops below run over every card of the decks (10,000 a `drill stats`): each looks a card up once
    suspended = {card_id for card_id, state in states.items() if state.suspended}
    chosen = [card for card in cards if card.id not in suspended]
    topic_of = {card.id: card.topic for card in chosen}
    kind_of = {card.id: card.kind for card in chosen}
    memory_now = _memories(replayed.now.cards)
    cards_now = [TrackCard(cid, topic_of[cid], kind_of[cid], memory_now.get(cid)) for cid in topic_of]
    now = stop_now(cards_now, interview.date, model)
    every_kind = {card.id: card.kind for card in (*cards, *others)}
    spent = sum(row.duration_ms for row in replayed.today if row.day == today and row.mode in TIMED_MODES) / 1000
    # what the log says of the learner's pace, grades and habits, as it stood at the start of the day
    digest = replayed.at_start.digest
    week = digest.week(today)
    if interview.date == today:
        return ReadinessFigures(interview, today, now, None, titles, week, spent)

    memory_at_start = _memories(replayed.at_start.cards)
    seen = [card for card in chosen if card.id in memory_at_start]
    unseen = [card for card in chosen if card.id not in memory_at_start]
    # the plan deals new cards in the order the queue would introduce them
    order = [*(card.id for card in seen), *new_card_order(unseen, new_order, today.toordinal())]
    track = [
        TrackCard(cid, topic_of[cid], kind_of[cid], memory_at_start.get(cid), _due_at_start(states.get(cid), today))
        for cid in order
    ]
    in_track = topic_of.keys()
    outside = [
        TrackCard(card.id, card.topic, card.kind, memory, _due_at_start(states.get(card.id), today))
        for card in others
        if card.id not in in_track and (memory := memory_at_start.get(card.id)) is not None and card.id not in suspended
    ]
    # the learner's pace, grades and habits as they stood at the start of the day, as the memories are: the plan
    # is the same all day, whatever is graded meanwhile
    uncertainty = learner_uncertainty(
        replayed.at_start.tally,
        _decay(model),
        digest.study_days,
        today,
        fitted=model.parameters is not None,
    )
    week = week.with_model_fit(uncertainty.fits_poorly)
    inputs = PlanInputs(
        track,
        outside,
        today,
        interview.date,
        interview.minutes_per_day,
        interview.target,
        digest.pace(every_kind),
        model,
        digest.grade_mix(),
        uncertainty,
    )
    if keeper is None:
        plan = plan_of(inputs, suggest=suggest)
    else:
        plan = plan_kept(inputs, suggest=suggest, keeper=keeper)
    return ReadinessFigures(interview, today, now, plan, titles, week, spent)


def _decay(model: MemoryModel) -> float:
    """FSRS's decay exponent (negative) of the model's parameters."""
    if model.parameters is not None:
        return -model.parameters[20]
    from fsrs.scheduler import DEFAULT_PARAMETERS

    return -DEFAULT_PARAMETERS[20]


def calibration(log: Iterable[LoggedReview], model: MemoryModel | None = None) -> CalibrationFigures:
    """Predicted recall against what happened, over every review the model predicted."""
    return CalibrationFigures(calibrate(replay(log, model).outcomes))


def _memories(memories: Mapping[str, CardMemory]) -> dict[str, FSRSState]:
    """Each replayed card's FSRS memory, by card id (a card the log never reached has none)."""
    return {card_id: known.memory for card_id, known in memories.items()}


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
