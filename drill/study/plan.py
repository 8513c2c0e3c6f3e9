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

What would fit (the minutes needed, the topics to leave out) costs more simulated runs than the plan
itself, and only `drill stats`, `drill plan` and the stats screen show it: `make_plan(suggest=False)`
leaves it out and `with_suggestions` adds it to a plan made so, the very figures `make_plan` gives.
`PlanInputs` holds everything a plan is made of (drill.study.kept_plan keys a kept plan on it).

Pure: no clock, no I/O; today is an argument.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    top_up: float = 0.0  # of the reviews, cards not due asked with the minutes left over in the last days

    def as_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "new_cards": len(self.new_cards),
            "reviews": round(self.reviews, 1),
            "early_reviews": round(self.early_reviews, 1),
            "top_up": round(self.top_up, 1),
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
    today_cards: DayCards[str] = field(default_factory=lambda: DayCards[str]((), (), (), (), (), (), 0.0))
    forecast: Forecast = field(default_factory=lambda: Forecast(0.0, 0.0, 0.0, 0.0, 0.0))
    policy: str = ""
    # each candidate way of dealing new cards and its expected share of cards at the target, on the same runs
    compared: tuple[tuple[str, float], ...] = ()
    needed_reaches: float | None = None  # the ready share the minutes_needed reach
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    suggested: bool = False  # whether what would fit (minutes_needed, leave_out, needed_reaches) was worked out

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


@dataclass(frozen=True)
class PlanInputs:
    """Everything a plan is made of (make_plan's arguments but `suggest`): the track's cards, the seen cards
    outside it, the days, the minutes, the target, and the learner's pace, memory model, grades and uncertainty."""

    cards: Sequence[TrackCard]
    others: Sequence[TrackCard]
    today: dt.date
    date: dt.date
    minutes_per_day: float
    target: float = DEFAULT_TARGET
    pace: Pace = field(default_factory=Pace)
    model: MemoryModel = field(default_factory=MemoryModel)
    grades: GradeMix = field(default_factory=GradeMix)
    uncertainty: Uncertainty = field(default_factory=Uncertainty)

    def world(self, cards: Sequence[TrackCard] | None = None) -> PlanWorld:
        """The simulation's world of these inputs (`cards`: the track's cards instead of `self.cards`)."""
        track = self.cards if cards is None else cards
        return PlanWorld(
            track,
            self.others,
            self.today,
            self.date,
            self.target,
            self.pace,
            self.model,
            self.grades,
            self.uncertainty,
        )


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
    inputs = PlanInputs(
        cards,
        others,
        today,
        date,
        minutes_per_day,
        target,
        pace or Pace(),
        model or MemoryModel(),
        grades or GradeMix(),
        uncertainty or Uncertainty(),
    )
    return plan_of(inputs, suggest=suggest)


def plan_of(inputs: PlanInputs, *, suggest: bool = True) -> StudyPlan:
    """make_plan over `inputs`."""
    today = inputs.today
    date = inputs.date
    minutes_per_day = inputs.minutes_per_day
    target = inputs.target
    if date <= today:
        raise ValueError(f"the interview date {date.isoformat()} is not after today ({today.isoformat()})")
    if not minutes_per_day > 0:
        raise ValueError(f"minutes per day must be more than 0, got {minutes_per_day!r}")
    if not 0 < target < 1:
        raise ValueError(f"the target recall must be between 0 and 1, got {target!r}")
    cards = inputs.cards
    world = inputs.world()
    budget = minutes_per_day * 60
    candidates = world.candidates()
    chosen, compared, tried = _best(world, candidates, budget)
    run = world.run(chosen, budget, SAMPLES)
    reasons = _reasons(run, run.introduced_all, minutes_per_day, target, world)
    mocks = mock_days(today, date)
    first = world.first_day(chosen, budget)
    new_ids = world.new_ids_by_day(run, first, chosen)
    days = []
    for i in range(world.span):
        day = today + dt.timedelta(days=i)
        if i == 0:
            reviews = float(first.reviews)
            early = float(len(first.early))
            top_up = float(len(first.top_up))
            minutes = first.seconds / 60
        else:
            reviews = run.reviews[i]
            early = run.early[i]
            top_up = run.top_up[i]
            minutes = run.minutes[i]
        days.append(
            PlanDay(
                day,
                new_ids[i],
                reviews,
                early,
                minutes,
                day in mocks,
                minutes_p90=run.demand_p90[i] / 60,
                top_up=top_up,
            )
        )
    projected = dict(run.projected)
    planned = readiness(projected, {c.card_id: c.topic for c in cards}, date)
    plan = StudyPlan(
        today=today,
        date=date,
        minutes_per_day=minutes_per_day,
        target=target,
        new_per_day=max((len(ids) for ids in new_ids), default=0),
        days=tuple(days),
        fits=not reasons,
        reasons=tuple(reasons),
        minutes_needed=None,
        leave_out=(),
        mocks=tuple(sorted(mocks)),
        now=stop_now(cards, date, inputs.model),
        planned=planned,
        projected=projected,
        today_cards=first,
        forecast=run.forecast,
        policy=chosen.name,
        compared=compared,
        uncertainty=inputs.uncertainty,
    )
    if not suggest:
        return plan
    return _suggest(plan, inputs, world, chosen, tried.get(AS_MANY_AS_FIT.name))


def with_suggestions(plan: StudyPlan, inputs: PlanInputs) -> StudyPlan:
    """`plan` (made from `inputs` with suggest False) with what would fit worked out: make_plan's figures."""
    if plan.suggested:
        return plan
    world = inputs.world()
    chosen = next((p for p in world.candidates() if p.name == plan.policy), None)
    if chosen is None:  # not a plan of these inputs: made again whole
        return plan_of(inputs, suggest=True)
    return _suggest(plan, inputs, world, chosen, None)


def _suggest(plan: StudyPlan, inputs: PlanInputs, world: PlanWorld, chosen: Policy, as_many: Run | None) -> StudyPlan:
    """`plan` with the minutes needed when the target is not reached, and the topics to leave out when it does not
    fit. `as_many`: the run of AS_MANY_AS_FIT in the minutes given on CHOICE_SAMPLES runs, when it was made."""
    needed = None
    if plan.forecast.mean < inputs.target:
        needed = _minutes_needed(world, inputs.target, inputs.minutes_per_day, as_many)
    leave_out: tuple[TopicCut, ...] = ()
    if plan.reasons:
        leave_out = _topics_to_leave_out(inputs, world, chosen, inputs.minutes_per_day * 60)
    return replace(
        plan,
        minutes_needed=None if needed is None else needed[0],
        needed_reaches=None if needed is None else needed[1],
        leave_out=leave_out,
        suggested=True,
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
) -> tuple[Policy, tuple[tuple[str, float], ...], dict[str, Run]]:
    """The candidate with the most cards expected at the target on the date (then the highest mean recall, then the
    fewest minutes), each candidate's expected share of cards at the target, on the same CHOICE_SAMPLES runs, and
    each candidate's run by its name."""
    best: tuple[float, float, float, int] | None = None
    chosen = candidates[0]
    shares = []
    runs: dict[str, Run] = {}
    for order, policy in enumerate(candidates):
        run = world.run(policy, budget, CHOICE_SAMPLES)
        runs[policy.name] = run
        shares.append((policy.name, run.forecast.ready_share))
        score = (run.ready, run.forecast.mean, -sum(run.minutes), -order)
        if best is None or score > best:
            best = score
            chosen = policy
    return chosen, tuple(shares), runs


# the way of dealing the minutes needed are searched for: new cards as the minutes hold (one of the candidates)
AS_MANY_AS_FIT = Policy("as many as fit", None, True, INTRO_LEAD_DAYS)


def _minutes_needed(world: PlanWorld, target: float, given: float, given_run: Run | None) -> tuple[int, float] | None:
    """The fewest minutes a day (to NEEDED_STEP) in which new cards dealt as the minutes hold reach the target
    mean recall, and the share of cards ready they give; None when a whole day would not.

    Reaching is taken to grow with the minutes. A whole day is tried first (None at once when it falls
    short); the search then starts from the minutes given (`given_run`: AS_MANY_AS_FIT's run in them on
    CHOICE_SAMPLES runs, when it was made), tries a guess from that run (`_guess`), adds half as much
    again until the target is reached, and halves that bracket down to NEEDED_STEP: what is needed is
    seldom far above the guess, and a run in fewer minutes serves fewer cards, so this costs fewer and
    cheaper runs than halving from a whole day down. Where reaching comes and goes with the draws
    over a band of minutes (every card introduced in all CHOICE_SAMPLES runs or not), either search
    may stop anywhere in that band."""

    def reaches(minutes: int) -> Run | None:
        run = world.run(AS_MANY_AS_FIT, minutes * 60, CHOICE_SAMPLES)
        return _reached(run, target)

    whole_day = int(UNLIMITED_MINUTES)
    best = reaches(whole_day)
    if best is None:
        return None
    high = whole_day
    low = 0  # taken to fall short: not a plan
    probe = whole_day
    given_whole = int(given)  # the whole minutes of the minutes given (fewer fall short when they do)
    if 0 < given_whole < whole_day:
        if given_run is None:
            given_run = world.run(AS_MANY_AS_FIT, given * 60, CHOICE_SAMPLES)
        if _reached(given_run, target) is None:
            low = given_whole
            probe = _guess(world, given_run, given_whole)
        else:
            high = math.ceil(given)
            trial = given_run if high == given else reaches(high)
            if trial is None:  # the draws of a minute more fall short: the search goes on from a whole day
                high = whole_day
            else:
                best = trial
    while probe < high:  # up from what falls short: the guess, then half as much again, until the target is reached
        trial = reaches(probe)
        if trial is not None:
            high = probe
            best = trial
            break
        low = probe
        probe = probe * 3 // 2  # the guess was near: half as much again
    while high - low > NEEDED_STEP:
        # halved by ratio while the bracket is wide (the minutes needed are nearer its foot), then by difference
        middle = math.isqrt(low * high) if high > 2 * low > 0 else (low + high) // 2
        trial = reaches(middle)
        if trial is None:
            low = middle
        else:
            high = middle
            best = trial
    return high, best.forecast.ready_share


def _guess(world: PlanWorld, short: Run, minutes: int) -> int:
    """A first guess at the minutes needed from a run in `minutes` that falls short: the minutes scaled by the
    share of new cards it introduced, and at least twice the minutes."""
    introduced = sum(short.new)
    scaled = math.ceil(minutes * len(world.unseen) / introduced) if introduced > 0 else 0
    return max(2 * minutes, scaled)


def _reached(run: Run, target: float) -> Run | None:
    """`run` when it reaches the target mean recall with every card introduced, else None."""
    return run if run.forecast.mean >= target and run.introduced_all else None


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


def _topics_to_leave_out(inputs: PlanInputs, world: PlanWorld, policy: Policy, budget: float) -> tuple[TopicCut, ...]:
    """Topics whose leaving out lets the rest reach the target in the minutes given, the slowest topic first."""
    cards = inputs.cards
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
        smaller = inputs.world([c for c in cards if c.topic not in dropped])
        trial = smaller.run(policy, budget, CHOICE_SAMPLES)  # the way chosen for the whole track
        if trial.introduced_all and trial.forecast.mean >= inputs.target:
            return tuple(left_out)
    return ()
