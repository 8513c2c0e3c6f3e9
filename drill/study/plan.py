"""The plan to an interview date, made for the minutes a day the learner gives, and the day's cards it asks.

One function decides a day's cards, `day_cards`: same-day repeats, then the track's due reviews
(oldest due first), then the early reviews of the last EARLY_REVIEW_DAYS days (cards whose predicted
recall on the date is below the target plus EARLY_REVIEW_MARGIN, lowest first), then the new cards
the plan's policy deals that day (in the queue's order), then the other decks' due reviews; each card
is taken while its expected seconds (the learner's pace times the views it is expected to need:
a review, and a same-day repeat when graded below 4) still fit in the minutes left. The plan's
"Today" line and the app's queue are that one list (drill.workspace.planned_queue), and the session
stops serving once the minutes given are spent (drill.study.session.ReviewSession.budget_seconds).

The plan is chosen, not fixed: each candidate policy (new cards a day: an even deal over the days
to INTRO_LEAD_DAYS before the date, a ladder of caps, as many as the minutes hold, and the fixed
BASELINE_NEW_PER_DAY with no early reviews) is followed day by day through SAMPLES simulated runs,
each with the same random draws: the learner's answers (recalled with the model's predicted recall,
its stabilities times a factor drawn from drill.study.uncertainty; graded by their mix of grades),
their seconds per view (drill.study.pace), skipped days at their skip rate, the queue served to the
minutes given. The policy with the most cards expected at the target on the date wins (fewer
minutes break a tie), so a plan does no worse in its own model than the fixed baseline.

It says what the minutes reach (the expected share of cards at the target, the mean recall with a
10-90 % interval over the runs), and what the target needs: the even deal without a limit on minutes,
the 90th percentile of its busiest day. It "fits" when the target is reached, every card
is introduced in time and, on the 90th percentile of the simulated days, the reviews the plan asks
fit in the minutes given.

Pure: no clock, no I/O; today is an argument.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import statistics
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from drill.study import scheduling, sm2
from drill.study.forecast import UNSEEN_RECALL, MemoryModel, Readiness, TrackCard, readiness, stop_now
from drill.study.memory_law import MemoryLaw, memory_law
from drill.study.pace import Pace
from drill.study.records import LoggedReview
from drill.study.targets import DEFAULT_TARGET
from drill.study.uncertainty import Uncertainty

INTRO_LEAD_DAYS = 3  # the even deal introduces every card at least this many days before the date
EARLY_REVIEW_DAYS = 5  # the days before the date in which a card below target comes up early
# Until its parameters are fitted to the learner, the model's recall can be a few points off
# for one learner: a card comes up early when its predicted recall on the date is below the target plus this.
EARLY_REVIEW_MARGIN = 0.03
MOCK_EVERY_DAYS = 7
LAST_MOCK_DAYS_BEFORE = 2  # the last mock leaves a day to review what it showed, and a rested day
SAMPLES = 16  # simulated runs the chosen plan's figures average (seeded: the same inputs give the same plan)
CHOICE_SAMPLES = 4  # runs each candidate is judged on (the same draws for every candidate)
FORGOTTEN_GRADE = 1  # a forgotten review's grade: "wrong, familiar", FSRS's Again
BASELINE_NEW_PER_DAY = 10  # the fixed policy every plan is compared with
NEW_CAPS = (5, 10, 20, 40)  # the caps on new cards a day the planner tries beside the even deal and "all that fit"
FITS_QUANTILE = 0.9  # a day fits when its reviews fit on this quantile of the simulated days
INTERVAL = (0.1, 0.9)  # the forecast's interval: these quantiles of the runs' mean recall on the date
UNLIMITED_MINUTES = 24 * 60.0
NEEDED_STEP = 5  # minutes: how finely the minutes a day the target needs are searched

Card_ = TypeVar("Card_")  # a card as the caller names it: its id in the app, its index in the simulation

# How the learner grades, until their log holds MIN_GRADED of each: the first answer to a
# new card (often missed: drill asks before it shows), and a recalled review (mostly good).
DEFAULT_FIRST_GRADES: tuple[tuple[int, float], ...] = ((1, 0.3), (3, 0.2), (4, 0.4), (5, 0.1))
DEFAULT_RECALLED_GRADES: tuple[tuple[int, float], ...] = ((3, 0.15), (4, 0.75), (5, 0.1))
MIN_GRADED = 30


@dataclass(frozen=True)
class GradeMix:
    """How the learner grades: (grade, probability) pairs for a new card's first answer and for a recalled review."""

    first: tuple[tuple[int, float], ...] = DEFAULT_FIRST_GRADES
    recalled: tuple[tuple[int, float], ...] = DEFAULT_RECALLED_GRADES

    def first_repeat_share(self) -> float:
        """The share of first answers graded below 4: they take a same-day repeat."""
        return sum(share for grade, share in self.first if grade < sm2.SAME_DAY_REPEAT_BELOW)

    def recalled_repeat_share(self) -> float:
        return sum(share for grade, share in self.recalled if grade < sm2.SAME_DAY_REPEAT_BELOW)


def grade_mix(log: Iterable[LoggedReview]) -> GradeMix:
    """The learner's own grade mix from the reviews that reach the scheduler (mode review or early); defaults where too few."""
    first: dict[int, int] = {}
    recalled: dict[int, int] = {}
    seen: set[str] = set()
    for row in sorted(log, key=lambda r: (r.day, r.id)):
        if row.mode not in ("review", scheduling.EARLY):
            continue
        if row.card_id not in seen:
            seen.add(row.card_id)
            first[row.grade] = first.get(row.grade, 0) + 1
        elif row.grade >= sm2.PASSING:
            recalled[row.grade] = recalled.get(row.grade, 0) + 1
    mix = GradeMix()
    if sum(first.values()) >= MIN_GRADED:
        mix = GradeMix(_shares(first), mix.recalled)
    if sum(recalled.values()) >= MIN_GRADED:
        mix = GradeMix(mix.first, _shares(recalled))
    return mix


# -- the day's cards ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DayCards(Generic[Card_]):
    """A day's cards in the order the queue asks them, each group taken while it fits in the minutes."""

    due: tuple[Card_, ...]  # the track's due reviews, oldest due first
    early: tuple[Card_, ...]  # brought up before they are due, lowest recall on the date first
    new: tuple[Card_, ...]  # new cards, in the queue's order
    other_due: tuple[Card_, ...]  # due reviews of cards outside the track
    left_over: tuple[Card_, ...]  # due reviews that do not fit today (they wait for tomorrow)
    seconds: float  # expected seconds of what is taken

    @property
    def cards(self) -> tuple[Card_, ...]:
        return self.due + self.early + self.new + self.other_due

    @property
    def reviews(self) -> int:
        return len(self.due) + len(self.early) + len(self.other_due)


def day_cards(
    due: Sequence[Card_],
    early: Sequence[Card_],
    new: Sequence[Card_],
    other_due: Sequence[Card_],
    cost: Callable[[Card_], float],
    budget_seconds: float,
) -> DayCards[Card_]:
    """The day's cards: each group in turn, each card taken while its expected seconds fit in what is left.

    The first card of the day is taken even when it alone is longer than the minutes (a long
    card would otherwise never come up); once one card does not fit, the day is full.
    """
    spent = 0.0
    taken: list[list[Card_]] = [[], [], [], []]
    left_over: list[Card_] = []
    full = False
    for group, cards in enumerate((due, early, new, other_due)):
        for card in cards:
            seconds = cost(card)
            if not full and (not any(taken) or spent + seconds <= budget_seconds):
                taken[group].append(card)
                spent += seconds
                continue
            full = True
            if group in (0, 3):
                left_over.append(card)
    return DayCards(tuple(taken[0]), tuple(taken[1]), tuple(taken[2]), tuple(taken[3]), tuple(left_over), spent)


def expected_views(recall: float | None, grades: GradeMix) -> float:
    """Views a card is expected to need today: a new card (`recall` None) or a review, with its same-day repeat."""
    if recall is None:
        return 1 + grades.first_repeat_share()
    return 1 + (1 - recall) + recall * grades.recalled_repeat_share()


# -- the plan's records ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Policy:
    """How many new cards a day, whether cards come up early in the last days, and the days before the date with none."""

    name: str
    new_per_day: int | None  # None: as many as the minutes hold
    early: bool
    lead_days: int

    def new_on(self, day: int, span: int) -> int:
        if day >= span - self.lead_days:
            return 0
        return self.new_per_day if self.new_per_day is not None else 1_000_000


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
class Forecast:
    """Mean predicted recall of the track on the date if the plan is followed, with its interval over the runs."""

    mean: float
    low: float
    high: float
    ready_share: float  # expected share of the track's cards at the target or above on the date
    ready_low: float  # the 10th percentile of that share over the runs

    def as_json(self) -> dict[str, Any]:
        return {
            "mean": round(self.mean, 3),
            "low": round(self.low, 3),
            "high": round(self.high, 3),
            "ready_share": round(self.ready_share, 3),
            "ready_low": round(self.ready_low, 3),
        }


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


def early_reviews(
    cards: Sequence[TrackCard],
    today: dt.date,
    date: dt.date,
    target: float = DEFAULT_TARGET,
    model: MemoryModel | None = None,
) -> list[str]:
    """Cards to review today although not due: in the last EARLY_REVIEW_DAYS before the date, those below target.

    A card counts when its predicted recall on the date is below `target` plus
    EARLY_REVIEW_MARGIN, from its own first day in those days on (`early_review_day`); the
    lowest come first. Before then, for cards never seen and for cards due anyway, nothing.
    """
    model = model or MemoryModel()
    if not today < date:
        return []
    below = []
    for card in cards:
        if card.memory is None or (card.due is not None and card.due <= today):
            continue  # unseen, or due anyway
        if today < early_review_day(card.card_id, date):
            continue
        recall = model.recall(card.memory, date)
        if recall < target + EARLY_REVIEW_MARGIN:
            below.append((recall, card.card_id))
    return [card_id for _, card_id in sorted(below)]


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
    `suggest` False skips the topics-to-leave-out search when the plan does not fit.
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
    world = _World(cards, others, today, date, target, pace, model, grades, uncertainty)
    budget = minutes_per_day * 60
    candidates = world.candidates()
    chosen, compared = _best(world, candidates, budget)
    run = world.run(chosen, budget, SAMPLES)
    introduced_all = run.introduced_all
    reasons = _reasons(run, introduced_all, minutes_per_day, target, world)
    needed = None
    if run.forecast.mean < target:
        needed = _minutes_needed(world, target)
    minutes_needed = None if needed is None else needed[0]
    leave_out: tuple[TopicCut, ...] = ()
    if reasons and suggest:
        leave_out = _topics_to_leave_out(world, cards, others, chosen, budget, run, today, date, target)
    mocks = mock_days(today, date)
    first = world.first_day(chosen, budget)
    new_ids = world.new_ids_by_day(run, first)
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


def early_review_day(card_id: str, date: dt.date) -> dt.date:
    """The first day a card below target may come up early: one of the last EARLY_REVIEW_DAYS days, by its id.

    Spreading the cards over those days (a stable hash of the id, the same in every run)
    keeps the extra reviews from landing on one day, and leaves a card that comes up on
    the first of them a day or two to be asked again if it is forgotten.
    """
    return date - dt.timedelta(days=EARLY_REVIEW_DAYS - zlib.crc32(card_id.encode()) % EARLY_REVIEW_DAYS)


# -- the simulation ---------------------------------------------------------------------------------
@dataclass
class _Run:
    """A policy followed through some runs: per day means, the 90th percentile of the reviews asked, the forecast."""

    minutes: list[float]
    reviews: list[float]
    early: list[float]
    new: list[float]
    demand_p90: list[float]  # seconds
    projected: dict[str, float]
    forecast: Forecast
    ready: float  # expected cards at the target on the date
    introduced_all: bool


class _World:
    """The track as the simulation holds it: parallel lists by card index, the track's cards first."""

    def __init__(
        self,
        cards: Sequence[TrackCard],
        others: Sequence[TrackCard],
        today: dt.date,
        date: dt.date,
        target: float,
        pace: Pace,
        model: MemoryModel,
        grades: GradeMix,
        uncertainty: Uncertainty,
    ) -> None:
        seen_others = [c for c in others if c.memory is not None]
        every = [*cards, *seen_others]
        self.cards = every
        self.track = len(cards)
        self.today = today
        self.date = date
        self.span = (date - today).days
        self.target = target
        self.early_below = target + EARLY_REVIEW_MARGIN
        self.model = model
        self.grades = grades
        self.uncertainty = uncertainty
        self.pace = pace
        self.law: MemoryLaw = memory_law(model.parameters, model.max_interval)
        self.seconds = [pace.seconds(c.card_id, c.kind) for c in every]
        self.log_mean = [math.log(s) - pace.log_sd(c.kind) ** 2 / 2 for s, c in zip(self.seconds, every)]
        self.log_sd = [pace.log_sd(c.kind) for c in every]
        self.early_from = [(early_review_day(c.card_id, date) - today).days for c in every]
        self.unseen = [i for i in range(self.track) if every[i].memory is None]
        self.first_cost_new = 1 + grades.first_repeat_share()
        self.recalled_repeat = grades.recalled_repeat_share()

    def candidates(self) -> list[Policy]:
        intro_days = max(1, self.span - INTRO_LEAD_DAYS)
        # over the days the learner is expected to study, leaving a day and twice the skipped days to spare
        study_days = max(1, intro_days - 1 - math.ceil(2 * intro_days * self.uncertainty.skip_rate))
        even = math.ceil(len(self.unseen) / study_days) if self.unseen else 0
        out = [Policy("even", even, True, INTRO_LEAD_DAYS), Policy("as many as fit", None, True, INTRO_LEAD_DAYS)]
        out += [Policy(f"{cap} new a day", cap, True, INTRO_LEAD_DAYS) for cap in NEW_CAPS if cap != even]
        out.append(Policy(f"baseline {BASELINE_NEW_PER_DAY} new a day", BASELINE_NEW_PER_DAY, False, 0))
        return out

    def _initial(self) -> tuple[list[float], list[float], list[int], list[int], list[int]]:
        stability = [0.0] * len(self.cards)
        difficulty = [0.0] * len(self.cards)
        state = [0] * len(self.cards)
        last = [0] * len(self.cards)
        due = [-1] * len(self.cards)  # -1: unseen
        for i, card in enumerate(self.cards):
            if card.memory is None:
                continue
            stability[i] = card.memory.stability
            difficulty[i] = card.memory.difficulty
            state[i] = card.memory.state
            last[i] = (card.memory.last_review - self.today).days
            due[i] = max(0, (card.due - self.today).days) if card.due is not None else 0
        return stability, difficulty, state, last, due

    def first_day(self, policy: Policy, budget: float) -> DayCards[str]:
        """Today's cards under `policy`: what the simulation's first day takes in every run, and the queue serves."""
        stability, _, _, last, due = self._initial()
        picked = self._fill(0, policy, budget, stability, last, due, self.unseen)
        name = self.cards

        def named(indices: tuple[int, ...]) -> tuple[str, ...]:
            return tuple(name[i].card_id for i in indices)

        return DayCards(
            named(picked.due),
            named(picked.early),
            named(picked.new),
            named(picked.other_due),
            named(picked.left_over),
            picked.seconds,
        )

    def _fill(
        self,
        day: int,
        policy: Policy,
        budget: float,
        stability: list[float],
        last: list[int],
        due: list[int],
        unseen: Sequence[int],
    ) -> DayCards[int]:
        law = self.law
        due_track = [i for _, i in sorted((due[i], i) for i in range(self.track) if 0 <= due[i] <= day)]
        due_other = [
            i for _, i in sorted((due[i], i) for i in range(self.track, len(self.cards)) if 0 <= due[i] <= day)
        ]
        early: list[tuple[float, int]] = []
        if policy.early and day >= self.span - EARLY_REVIEW_DAYS:
            for i in range(self.track):
                if due[i] > day and day >= self.early_from[i]:
                    recall = law.recall(stability[i], self.span - last[i])
                    if recall < self.early_below:
                        early.append((recall, i))
            early.sort()

        def cost(i: int) -> float:
            if due[i] < 0:
                return self.seconds[i] * self.first_cost_new
            recall = law.recall(stability[i], day - last[i])
            return self.seconds[i] * (1 + (1 - recall) + recall * self.recalled_repeat)

        new = unseen[: policy.new_on(day, self.span)]
        return day_cards(due_track, [i for _, i in early], new, due_other, cost, budget)

    def run(self, policy: Policy, budget: float, samples: int) -> _Run:
        law = self.law
        span = self.span
        minutes = [[0.0] * samples for _ in range(span)]
        demand = [[0.0] * samples for _ in range(span)]
        reviews = [0.0] * span
        early_count = [0.0] * span
        new_count = [0.0] * span
        projected = [0.0] * self.track
        means: list[float] = []
        readies: list[float] = []
        not_introduced = 0  # runs that end with cards never introduced
        first_grades = self.grades.first
        recalled_grades = self.grades.recalled
        for sample in range(samples):
            rng = random.Random(1_000_003 * (sample + 1))
            scale = math.exp(rng.gauss(self.uncertainty.log_scale_mean, self.uncertainty.log_scale_sd))
            stability, difficulty, state, last, due = self._initial()
            unseen = list(self.unseen)
            for day in range(span):
                skipped = day > 0 and rng.random() < self.uncertainty.skip_rate
                picked = self._fill(day, policy, budget, stability, last, due, unseen)
                asked = (*picked.due, *picked.early, *picked.left_over)
                demand[day][sample] = sum(self.seconds[i] for i in asked)
                if skipped:
                    continue
                spent = 0.0
                early_set = set(picked.early)
                served_new = 0
                for i in picked.cards:
                    if spent >= budget:
                        break
                    view = rng.lognormvariate(self.log_mean[i], self.log_sd[i])
                    if due[i] < 0:
                        grade = _draw(rng, first_grades)
                        memory = law.first(grade)
                        served_new += 1
                        new_count[day] += 1 / samples
                    else:
                        elapsed = day - last[i]
                        recalled = rng.random() < law.recall(stability[i] * scale, elapsed)
                        grade = _draw(rng, recalled_grades) if recalled else FORGOTTEN_GRADE
                        memory = law.review(stability[i], difficulty[i], state[i], elapsed, grade)
                        reviews[day] += 1 / samples
                        if i in early_set:
                            early_count[day] += 1 / samples
                    if grade < sm2.SAME_DAY_REPEAT_BELOW:
                        view += rng.lognormvariate(self.log_mean[i], self.log_sd[i])
                    spent += view
                    stability[i] = memory.stability
                    difficulty[i] = memory.difficulty
                    state[i] = memory.state
                    last[i] = day
                    due[i] = day + memory.interval
                unseen = unseen[served_new:]
                minutes[day][sample] = spent / 60
            total = 0.0
            ready = 0
            for i in range(self.track):
                recall = UNSEEN_RECALL if due[i] < 0 else law.recall(stability[i] * scale, span - last[i])
                projected[i] += recall / samples
                total += recall
                ready += recall >= self.target
            if unseen:
                not_introduced += 1
            means.append(total / self.track if self.track else UNSEEN_RECALL)
            readies.append(ready / self.track if self.track else 0.0)
        forecast = Forecast(
            statistics.fmean(means),
            _quantile(means, INTERVAL[0]),
            _quantile(means, INTERVAL[1]),
            statistics.fmean(readies),
            _quantile(readies, INTERVAL[0]),
        )
        return _Run(
            minutes=[statistics.fmean(m) for m in minutes],
            reviews=reviews,
            early=early_count,
            new=new_count,
            demand_p90=[_quantile(d, FITS_QUANTILE) for d in demand],
            projected={self.cards[i].card_id: projected[i] for i in range(self.track)},
            forecast=forecast,
            ready=forecast.ready_share * self.track,
            introduced_all=not_introduced <= (1 - FITS_QUANTILE) * samples,
        )

    def new_ids_by_day(self, run: _Run, first: DayCards[str]) -> list[tuple[str, ...]]:
        """Today's new cards as taken; later days' in the queue's order, as many as the runs introduce on average."""
        out: list[tuple[str, ...]] = [first.new]
        order = [self.cards[i].card_id for i in self.unseen if self.cards[i].card_id not in set(first.new)]
        dealt = 0.0
        taken = 0
        for day in range(1, self.span):
            dealt += run.new[day]
            upto = min(len(order), round(dealt))
            out.append(tuple(order[taken:upto]))
            taken = upto
        return out


def _best(world: _World, candidates: Sequence[Policy], budget: float) -> tuple[Policy, tuple[tuple[str, float], ...]]:
    """The candidate with the most cards expected at the target on the date (then the fewest minutes), and each
    candidate's expected share of cards at the target, on the same CHOICE_SAMPLES runs."""
    best: tuple[float, float, int] | None = None
    chosen = candidates[0]
    shares = []
    for order, policy in enumerate(candidates):
        run = world.run(policy, budget, CHOICE_SAMPLES)
        shares.append((policy.name, run.forecast.ready_share))
        score = (run.ready, -sum(run.minutes), -order)
        if best is None or score > best:
            best = score
            chosen = policy
    return chosen, tuple(shares)


def _minutes_needed(world: _World, target: float) -> tuple[int, float] | None:
    """The fewest minutes a day (to NEEDED_STEP) in which new cards dealt as the minutes hold reach the target
    mean recall, and the share of cards ready they give; None when a whole day would not."""
    policy = Policy("as many as fit", None, True, INTRO_LEAD_DAYS)

    def reaches(minutes: int) -> _Run | None:
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


def _reasons(run: _Run, introduced_all: bool, minutes_per_day: float, target: float, world: _World) -> list[str]:
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
    world: _World,
    cards: Sequence[TrackCard],
    others: Sequence[TrackCard],
    policy: Policy,
    budget: float,
    run: _Run,
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
    for topic in ranked[:-1]:  # leaving every topic out is no plan
        left_out.append(TopicCut(topic, len(topics[topic]), minutes_of[topic]))
        dropped = {cut.topic for cut in left_out}
        rest = [c for c in cards if c.topic not in dropped]
        smaller = _World(rest, others, today, date, target, world.pace, world.model, world.grades, world.uncertainty)
        best, _ = _best(smaller, smaller.candidates(), budget)
        trial = smaller.run(best, budget, CHOICE_SAMPLES)
        if trial.introduced_all and trial.forecast.mean >= target:
            return tuple(left_out)
    return ()


def _draw(rng: random.Random, mix: tuple[tuple[int, float], ...]) -> int:
    pick = rng.random()
    for grade, share in mix:
        pick -= share
        if pick < 0:
            return grade
    return mix[-1][0]


def _quantile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def _shares(counts: Mapping[int, int]) -> tuple[tuple[int, float], ...]:
    total = sum(counts.values())
    return tuple((grade, count / total) for grade, count in sorted(counts.items()))
