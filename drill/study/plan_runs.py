"""The plan's simulated runs: one way of dealing new cards followed day by day from today to the interview date.

Each run draws the learner's answers (recalled with the model's predicted recall, its stabilities
times a factor drawn from drill.study.uncertainty, Uncertainty.run_log_sd: the posterior's spread,
widened when the log shows a shape the factor misses; graded by their mix of grades), their seconds per
view (drill.study.pace) and the days they skip, and serves each day the cards drill.study.day_cards
takes within the minutes given, in order, until the drawn seconds spend them (the session's rule).
Run k draws the same numbers whatever the way of dealing, so ways are compared on the same days.
A card comes up early in the last days when its recall on the date, with the learner's own factor
on its stability (the posterior's pessimistic end, Uncertainty.cautious_factor), is below the target
plus EARLY_REVIEW_MARGIN. In the last TOP_UP_DAYS days the minutes nothing else wants top up the track:
the cards not due, not asked in the last TOP_UP_REST_DAYS days and below the target plus TOP_UP_MARGIN on
the date (with that factor), the lowest first: the cards whose early day has not come yet, and those the
model puts just above the cut. The model can be wrong about a learner in ways no one factor shows; a card
asked a day or two before the date is recalled on it whatever the model said. A card far above the
target is left alone: a review then risks a lapse with no days left to mend it, for little to gain.
FSRS's arithmetic is drill.study.memory_law's (the fsrs package's formulas without its objects).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import statistics
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from drill.study import sm2
from drill.study.day_cards import DayCards, day_cards
from drill.study.forecast import UNSEEN_RECALL, MemoryModel, TrackCard
from drill.study.grades import GradeMix
from drill.study.memory_law import MemoryLaw, memory_law
from drill.study.pace import Pace
from drill.study.uncertainty import Uncertainty

INTRO_LEAD_DAYS = 3  # the even deal introduces every card at least this many days before the date
EARLY_REVIEW_DAYS = 5  # the days before the date in which a card below target comes up early
# Until its parameters are fitted to the learner, the model's recall can be a few points off
# for one learner: a card comes up early when its predicted recall on the date is below the target plus this.
EARLY_REVIEW_MARGIN = 0.03
TOP_UP_DAYS = 5  # the days before the date in which the minutes left over top up the track
# a card is topped up while its recall on the date (with the cautious factor) is below the target plus this: a card
# far above it is more likely lost than helped by a review a day or two before (a lapse then has no time to mend)
TOP_UP_MARGIN = 0.06
TOP_UP_REST_DAYS = 2  # a card asked this few days ago or fewer is not topped up (today and yesterday)
FORGOTTEN_GRADE = 1  # a forgotten review's grade: "wrong, familiar", FSRS's Again
BASELINE_NEW_PER_DAY = 10  # the fixed policy every plan is compared with
NEW_CAPS = (5, 10, 20, 40)  # the caps on new cards a day the planner tries beside the even deal and "all that fit"
FITS_QUANTILE = 0.9  # a day fits when its reviews fit on this quantile of the simulated days
INTERVAL = (0.1, 0.9)  # the forecast's interval: these quantiles of the runs' mean recall on the date


@dataclass(frozen=True)
class Policy:
    """How many new cards a day (and in which order), whether cards come up early in the last days, and the days
    before the date with none."""

    name: str
    new_per_day: int | None  # None: as many as the minutes hold
    early: bool
    lead_days: int
    # new cards the quickest first (the learner's expected seconds), not in the queue's order: when the minutes bind,
    # a card of a few minutes kept is as ready as one of half an hour
    quickest_first: bool = False

    def new_on(self, day: int, span: int) -> int:
        if day >= span - self.lead_days:
            return 0
        return self.new_per_day if self.new_per_day is not None else 1_000_000


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


def plan_due_day(due: dt.date | None, today: dt.date) -> int:
    """The plan's day on which a seen card is first due: a due day before today (overdue), or none known, is
    today (day 0). The kept plan's key reads due days the same way (drill.study.kept_plan)."""
    return max(0, (due - today).days) if due is not None else 0


def early_review_day(card_id: str, date: dt.date) -> dt.date:
    """The first day a card below target may come up early: one of the last EARLY_REVIEW_DAYS days, by its id.

    Spreading the cards over those days (a stable hash of the id, the same in every run)
    keeps the extra reviews from landing on one day, and leaves a card that comes up on
    the first of them a day or two to be asked again if it is forgotten.
    """
    return date - dt.timedelta(days=EARLY_REVIEW_DAYS - zlib.crc32(card_id.encode()) % EARLY_REVIEW_DAYS)


@dataclass
class Run:
    """A policy followed through some runs: per day means, the 90th percentile of the reviews asked, the forecast."""

    minutes: list[float]
    reviews: list[float]
    early: list[float]
    top_up: list[float]
    new: list[float]
    demand_p90: list[float]  # seconds
    projected: dict[str, float]
    forecast: Forecast
    ready: float  # expected cards at the target on the date
    introduced_all: bool


class PlanWorld:
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
        # how fast this learner forgets next to the model, as their log shows it, at its pessimistic end: the
        # early-review rule asks which cards will be below target for them, not for the model's average learner,
        # and while the log says little it does not assume them to be that learner
        self.learner_factor = uncertainty.cautious_factor
        self.top_up_below = target + TOP_UP_MARGIN
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
        self.unseen_quickest = sorted(self.unseen, key=lambda i: self.seconds[i])  # stable: the queue's order in a tie
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
        if self.unseen_quickest != self.unseen:
            out.append(Policy("as many as fit, quickest first", None, True, INTRO_LEAD_DAYS, quickest_first=True))
        return out

    def new_order(self, policy: Policy) -> list[int]:
        """The unseen cards in the order `policy` introduces them."""
        return list(self.unseen_quickest if policy.quickest_first else self.unseen)

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
            due[i] = plan_due_day(card.due, self.today)
        return stability, difficulty, state, last, due

    def first_day(self, policy: Policy, budget: float) -> DayCards[str]:
        """Today's cards under `policy`: what the simulation's first day takes in every run, and the queue serves."""
        stability, _, _, last, due = self._initial()
        picked = self._fill(0, policy, budget, stability, last, due, self.new_order(policy))
        name = self.cards

        def named(indices: tuple[int, ...]) -> tuple[str, ...]:
            return tuple(name[i].card_id for i in indices)

        return DayCards(
            named(picked.due),
            named(picked.early),
            named(picked.new),
            named(picked.other_due),
            named(picked.top_up),
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
        top_up: list[tuple[float, int]] = []
        early_days = day >= self.span - EARLY_REVIEW_DAYS
        if policy.early and (early_days or day >= self.span - TOP_UP_DAYS):
            for i in range(self.track):
                if due[i] <= day:  # due (or unseen): not asked ahead
                    continue
                recall = law.recall(stability[i] * self.learner_factor, self.span - last[i])
                if early_days and recall < self.early_below and day >= self.early_from[i]:
                    early.append((recall, i))
                elif day - last[i] >= TOP_UP_REST_DAYS and recall < self.top_up_below:
                    top_up.append((recall, i))
            early.sort()
            top_up.sort()

        def cost(i: int) -> float:
            if due[i] < 0:
                return self.seconds[i] * self.first_cost_new
            recall = law.recall(stability[i], day - last[i])
            return self.seconds[i] * (1 + (1 - recall) + recall * self.recalled_repeat)

        new = unseen[: policy.new_on(day, self.span)]
        return day_cards(due_track, [i for _, i in early], new, due_other, cost, budget, [i for _, i in top_up])

    def run(self, policy: Policy, budget: float, samples: int) -> Run:
        law = self.law
        span = self.span
        minutes = [[0.0] * samples for _ in range(span)]
        demand = [[0.0] * samples for _ in range(span)]
        reviews = [0.0] * span
        early_count = [0.0] * span
        top_up_count = [0.0] * span
        new_count = [0.0] * span
        projected = [0.0] * self.track
        means: list[float] = []
        readies: list[float] = []
        not_introduced = 0  # runs that end with cards never introduced
        first_grades = self.grades.first
        recalled_grades = self.grades.recalled
        for sample in range(samples):
            rng = random.Random(1_000_003 * (sample + 1))
            scale = math.exp(rng.gauss(self.uncertainty.log_scale_mean, self.uncertainty.run_log_sd))
            stability, difficulty, state, last, due = self._initial()
            unseen = self.new_order(policy)
            for day in range(span):
                skipped = day > 0 and rng.random() < self.uncertainty.skip_rate
                picked = self._fill(day, policy, budget, stability, last, due, unseen)
                asked = (*picked.due, *picked.early, *picked.left_over)
                demand[day][sample] = sum(self.seconds[i] for i in asked)
                if skipped:
                    continue
                spent = 0.0
                early_set = set(picked.early)
                top_up_set = set(picked.top_up)
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
                        elif i in top_up_set:
                            top_up_count[day] += 1 / samples
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
        return Run(
            minutes=[statistics.fmean(m) for m in minutes],
            reviews=reviews,
            early=early_count,
            top_up=top_up_count,
            new=new_count,
            demand_p90=[_quantile(d, FITS_QUANTILE) for d in demand],
            projected={self.cards[i].card_id: projected[i] for i in range(self.track)},
            forecast=forecast,
            ready=forecast.ready_share * self.track,
            introduced_all=not_introduced <= (1 - FITS_QUANTILE) * samples,
        )

    def new_ids_by_day(self, run: Run, first: DayCards[str], policy: Policy) -> list[tuple[str, ...]]:
        """Today's new cards as taken; later days' in the policy's order, as many as the runs introduce on average."""
        out: list[tuple[str, ...]] = [first.new]
        taken_today = set(first.new)
        order = [self.cards[i].card_id for i in self.new_order(policy) if self.cards[i].card_id not in taken_today]
        dealt = 0.0
        taken = 0
        for day in range(1, self.span):
            dealt += run.new[day]
            upto = min(len(order), round(dealt))
            out.append(tuple(order[taken:upto]))
            taken = upto
        return out


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
