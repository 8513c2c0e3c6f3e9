"""The plan to an interview date, made for the minutes a day the learner gives.

The plan is chosen, not fixed: each way of dealing new cards (drill.study.plan_runs: an even deal
over the days to INTRO_LEAD_DAYS before the date, caps of NEW_CAPS a day, as many as the minutes
hold, and the fixed BASELINE_NEW_PER_DAY with no early reviews) is followed through CHOICE_SAMPLES
simulated runs with the same draws, each day's cards decided as the queue decides them
(drill.study.day_cards) within the minutes given. The way with the most cards expected at the
target on the date wins (a higher mean recall, then fewer minutes, break a tie: a card brought up early
to keep it clear of the target is worth its minutes), so a plan does no worse in its own model than
the fixed baseline; its figures are then averaged over SAMPLES runs.

It says what the minutes reach (the expected share of cards at the target, the mean recall with a
10-90 % interval over the runs) and, when they fall short, what the target needs: the fewest minutes
a day in which dealing as many new cards as the minutes hold reaches it. It "fits" when the target
is reached, every card is introduced, and on the 90th percentile of the simulated days the reviews
the plan asks fit in the minutes given. Today's cards (`StudyPlan.today_cards`) are the queue's.

Pure: no clock, no I/O; today is an argument.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drill.study.day_cards import DayCards
from drill.study.forecast import MemoryModel, Readiness, TrackCard, readiness, stop_now
from drill.study.grades import GradeMix
from drill.study.pace import Pace
from drill.study.plan_runs import (
    INTRO_LEAD_DAYS,
    Forecast,
    PlanWorld,
    Policy,
    Run,
)
from drill.study.targets import DEFAULT_TARGET
from drill.study.uncertainty import Uncertainty

MOCK_EVERY_DAYS = 7
LAST_MOCK_DAYS_BEFORE = 2  # the last mock leaves a day to review what it showed, and a rested day
SAMPLES = 16  # simulated runs the chosen plan's figures average (seeded: the same inputs give the same plan)
CHOICE_SAMPLES = 4  # runs each candidate is judged on (the same draws for every candidate)
UNLIMITED_MINUTES = 24 * 60.0
NEEDED_STEP = 5  # minutes: how finely the minutes a day the target needs are searched


# -- the plan's records ------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlanDay:
    day: dt.date
    new_cards: tuple[str, ...]  # the ids of the cards to introduce that day (today's exactly; later days expected)
    reviews: float  # expected reviews of cards already introduced, early ones included
    early_reviews: float  # of those, cards brought up before they are due
    minutes: float  # expected minutes served, same-day repeats included
    mock: bool
    minutes_p90: float = 0.0  # the reviews the day asks, in minutes, on the 90th percentile of the runs

    def as_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "new_cards": len(self.new_cards),
            "reviews": round(self.reviews, 1),
            "early_reviews": round(self.early_reviews, 1),
            "minutes": round(self.minutes, 1),
            "mock": self.mock,
        }


@dataclass(frozen=True)
class TopicCut:
    """A topic the plan could leave out, and the minutes on the busiest day that saves."""

    topic: str
    cards: int
    minutes_saved: float

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "cards": self.cards, "minutes_saved": round(self.minutes_saved, 1)}


@dataclass(frozen=True)
class StudyPlan:
    today: dt.date
    date: dt.date
    minutes_per_day: float
    target: float
    new_per_day: int
    days: tuple[PlanDay, ...]
    fits: bool
    reasons: tuple[str, ...]  # why it does not fit; empty when it does
    minutes_needed: int | None  # the minutes a day the even deal needs on its busiest day (None: no minutes would do)
    leave_out: tuple[TopicCut, ...]  # topics whose leaving out makes it fit, the largest saving first
    mocks: tuple[dt.date, ...]
    now: Readiness  # if the learner stops now
    planned: Readiness  # if the plan is followed
    projected: Mapping[str, float] = field(default_factory=dict)  # each card's predicted recall on the date, planned
    today_cards: DayCards[str] = field(default_factory=lambda: DayCards[str]((), (), (), (), (), 0.0))
    forecast: Forecast = field(default_factory=lambda: Forecast(0.0, 0.0, 0.0, 0.0, 0.0))
    policy: str = ""
    # each candidate way of dealing new cards and its expected share of cards at the target, on the same runs
    compared: tuple[tuple[str, float], ...] = ()
    needed_reaches: float | None = None  # the ready share the minutes_needed reach
    uncertainty: Uncertainty = field(default_factory=Uncertainty)

    @property
    def peak_minutes(self) -> float:
        return max((d.minutes for d in self.days), default=0.0)

    def as_json(self) -> dict[str, Any]:
        return {
            "today": self.today.isoformat(),
            "date": self.date.isoformat(),
            "minutes_per_day": self.minutes_per_day,
            "target": self.target,
            "new_per_day": self.new_per_day,
            "policy": self.policy,
            "fits": self.fits,
            "reasons": list(self.reasons),
            "minutes_needed": self.minutes_needed,
            "leave_out": [c.as_json() for c in self.leave_out],
            "mocks": [d.isoformat() for d in self.mocks],
            "readiness_now": self.now.as_json(),
            "readiness_planned": self.planned.as_json(),
            "forecast": self.forecast.as_json(),
            "days": [d.as_json() for d in self.days],
        }


def make_plan(
    cards: Sequence[TrackCard],
    *,
    today: dt.date,
    date: dt.date,
    minutes_per_day: float,
    target: float = DEFAULT_TARGET,
    pace: Pace | None = None,
    model: MemoryModel | None = None,
    grades: GradeMix | None = None,
    uncertainty: Uncertainty | None = None,
    others: Sequence[TrackCard] = (),
    suggest: bool = True,
) -> StudyPlan:
    """The plan from `today` to the interview on `date` (see the module docstring).

    `cards` are the track's, seen ones first and unseen ones in the order the queue introduces
    them; `others` the seen cards outside the track, which the queue also serves when due.
    `suggest` False skips what would fit when the minutes fall short (the minutes needed, the topics to leave
    out): the day's queue needs neither.
    ValueError (one line) when the date is not after today, the minutes are not positive
    or the target is not between 0 and 1.
    """
    if date <= today:
        raise ValueError(f"the interview date {date.isoformat()} is not after today ({today.isoformat()})")
    if not minutes_per_day > 0:
        raise ValueError(f"minutes per day must be more than 0, got {minutes_per_day!r}")
    if not 0 < target < 1:
        raise ValueError(f"the target recall must be between 0 and 1, got {target!r}")
    model = model or MemoryModel()
    grades = grades or GradeMix()
    pace = pace or Pace()
    uncertainty = uncertainty or Uncertainty()
    world = PlanWorld(cards, others, today, date, target, pace, model, grades, uncertainty)
    budget = minutes_per_day * 60
    candidates = world.candidates()
    chosen, compared = _best(world, candidates, budget)
    run = world.run(chosen, budget, SAMPLES)
    introduced_all = run.introduced_all
    reasons = _reasons(run, introduced_all, minutes_per_day, target, world)
    needed = None
    if suggest and run.forecast.mean < target:
        needed = _minutes_needed(world, target)
    minutes_needed = None if needed is None else needed[0]
    leave_out: tuple[TopicCut, ...] = ()
    if reasons and suggest:
        leave_out = _topics_to_leave_out(world, cards, others, chosen, budget, run, today, date, target)
    mocks = mock_days(today, date)
    first = world.first_day(chosen, budget)
    new_ids = world.new_ids_by_day(run, first, chosen)
    days = []
    for i in range(world.span):
        day = today + dt.timedelta(days=i)
        if i == 0:
            reviews = float(first.reviews)
            early = float(len(first.early))
            minutes = first.seconds / 60
        else:
            reviews = run.reviews[i]
            early = run.early[i]
            minutes = run.minutes[i]
        days.append(PlanDay(day, new_ids[i], reviews, early, minutes, day in mocks, minutes_p90=run.demand_p90[i] / 60))
    projected = dict(run.projected)
    planned = readiness(projected, {c.card_id: c.topic for c in cards}, date)
    return StudyPlan(
        today=today,
        date=date,
        minutes_per_day=minutes_per_day,
        target=target,
        new_per_day=max((len(ids) for ids in new_ids), default=0),
        days=tuple(days),
        fits=not reasons,
        reasons=tuple(reasons),
        minutes_needed=minutes_needed,
        leave_out=leave_out,
        mocks=tuple(sorted(mocks)),
        now=stop_now(cards, date, model),
        planned=planned,
        projected=projected,
        today_cards=first,
        forecast=run.forecast,
        policy=chosen.name,
        compared=compared,
        needed_reaches=None if needed is None else needed[1],
        uncertainty=uncertainty,
    )


def mock_days(today: dt.date, date: dt.date) -> set[dt.date]:
    """A mock every MOCK_EVERY_DAYS days counted back from LAST_MOCK_DAYS_BEFORE days before the date, none before today."""
    out = set()
    day = date - dt.timedelta(days=LAST_MOCK_DAYS_BEFORE)
    while day >= today:
        out.add(day)
        day -= dt.timedelta(days=MOCK_EVERY_DAYS)
    return out


def _best(
    world: PlanWorld, candidates: Sequence[Policy], budget: float
) -> tuple[Policy, tuple[tuple[str, float], ...]]:
    """The candidate with the most cards expected at the target on the date (then the highest mean recall, then the
    fewest minutes), and each candidate's expected share of cards at the target, on the same CHOICE_SAMPLES runs."""
    best: tuple[float, float, float, int] | None = None
    chosen = candidates[0]
    shares = []
    for order, policy in enumerate(candidates):
        run = world.run(policy, budget, CHOICE_SAMPLES)
        shares.append((policy.name, run.forecast.ready_share))
        score = (run.ready, run.forecast.mean, -sum(run.minutes), -order)
        if best is None or score > best:
            best = score
            chosen = policy
    return chosen, tuple(shares)


def _minutes_needed(world: PlanWorld, target: float) -> tuple[int, float] | None:
    """The fewest minutes a day (to NEEDED_STEP) in which new cards dealt as the minutes hold reach the target
    mean recall, and the share of cards ready they give; None when a whole day would not."""
    policy = Policy("as many as fit", None, True, INTRO_LEAD_DAYS)

    def reaches(minutes: int) -> Run | None:
        run = world.run(policy, minutes * 60, CHOICE_SAMPLES)
        return run if run.forecast.mean >= target and run.introduced_all else None

    high = int(UNLIMITED_MINUTES)
    best = reaches(high)
    if best is None:
        return None
    low = 0
    while high - low > NEEDED_STEP:
        middle = (low + high) // 2
        trial = reaches(middle)
        if trial is None:
            low = middle
        else:
            high = middle
            best = trial
    return high, best.forecast.ready_share


def _reasons(run: Run, introduced_all: bool, minutes_per_day: float, target: float, world: PlanWorld) -> list[str]:
    reasons = []
    if not introduced_all:
        reasons.append(
            f"{len(world.unseen)} new cards are not all introduced by the date in {minutes_per_day:g} minutes a day"
        )
    peak = max(run.demand_p90, default=0.0) / 60
    if peak > minutes_per_day:
        reasons.append(
            f"on a busy day the reviews need {math.ceil(peak)} minutes, more than the {minutes_per_day:g} given"
        )
    if run.forecast.mean < target:
        reasons.append(f"readiness on the date would be {run.forecast.mean:.0%}, below the target {target:.0%}")
    return reasons


def _topics_to_leave_out(
    world: PlanWorld,
    cards: Sequence[TrackCard],
    others: Sequence[TrackCard],
    policy: Policy,
    budget: float,
    run: Run,
    today: dt.date,
    date: dt.date,
    target: float,
) -> tuple[TopicCut, ...]:
    """Topics whose leaving out lets the rest reach the target in the minutes given, the slowest topic first."""
    topics: dict[str, list[TrackCard]] = {}
    for card in cards:
        topics.setdefault(card.topic, []).append(card)
    if len(topics) < 2:
        return ()
    minutes_of = {
        topic: sum(world.seconds[i] for i, card in enumerate(cards) if card.topic == topic) / 60 for topic in topics
    }
    ranked = sorted(topics, key=lambda t: (-minutes_of[t], t))
    left_out: list[TopicCut] = []
    for topic in ranked[: len(ranked) // 2]:  # leaving out most of the track is no plan: say the minutes instead
        left_out.append(TopicCut(topic, len(topics[topic]), minutes_of[topic]))
        dropped = {cut.topic for cut in left_out}
        rest = [c for c in cards if c.topic not in dropped]
        smaller = PlanWorld(rest, others, today, date, target, world.pace, world.model, world.grades, world.uncertainty)
        trial = smaller.run(policy, budget, CHOICE_SAMPLES)  # the way chosen for the whole track
        if trial.introduced_all and trial.forecast.mean >= target:
            return tuple(left_out)
    return ()
