"""Proof by simulation, through drill.api only: does the plan get learners unlike its model ready, within their minutes?

    python bench/readiness.py [--learners 6] [--days 30] [--track inference] [--jobs 2] [--quick]
        [--families abcd] [--budgets 30,120] [--seed 1] [--each]

--quick (one learner a family and budget, 8 days; under a minute on two cores) shows the bench
runs end to end; 8 days are too few for 271 cards, so its goals are not the ones to judge by.
The goals below are judged on the 30-day run (about 12 minutes with --learners 2 on two loaded
cores).

Each simulated learner studies in a data folder of their own through drill.api, as a script
or a notebook would: set the day, take the day's queue, answer each card, grade it with the
seconds it took. The plan is made as a new user's is: default seconds per card and default
FSRS parameters, learned from the log as the days go. drill schedules with FSRS
(`Learner.use_scheduler("fsrs")`, as `drill config set scheduler fsrs`).

The learners' memory and pace are the bench's, never drill's (four families):

  a  FSRS-6 with the fsrs package's defaults, each kind's default seconds every view
  b  each FSRS weight x lognormal(0, 0.3) (within FSRS's bounds), each card's stability x
     lognormal(0, 0.3), each learner's and card's seconds x lognormal(0, 0.3), every view
     x lognormal(0, 0.3)
  c  another forgetting law: exponential, recall 2 ** (-t / h) with a per-card half-life h
     (first answer: 0.5, 1, 2, 4 days for again/hard/good/easy, x lognormal(0, 0.5) per
     card), a recall multiplying h by 1.5/2.5/3.5 (x lognormal(0, 0.3) per learner), a lapse
     by 0.4; seconds as (b)
  d  (b), skipping one day in seven and giving half the minutes on 30 % of the days

A learner's own draws (pace, weights, growth, skipped days) come from their seed; each card's
(its pace, stability factor, half-life) from the seed and the card's id: a card added to the decks
leaves every learner as they were.

Each learner studies twice, the same draws each time, at each budget (30 and 120 minutes a
day): with the plan (an interview date set; the queue is the plan's, served until the minutes
are spent) and with the baseline (no date: 10 new cards a day, the same budget). A recalled card
is graded 3/4/5 (0.15/0.75/0.10), a forgotten one 1; a first answer 1/3/4/5 (0.3/0.2/0.4/0.1);
a card graded below 4 comes back the same day (the learner then knows it: graded 4).

Each learner's seed is drawn from --seed in one order over every family and budget (30 and 120, then any
other asked), so a run of some families or budgets (--families, --budgets) meets the very learners a
full run does.

Reported per family and budget: ready (true recall >= 0.9 on the date) mean and 10th
percentile, plan and baseline; minutes a day (mean, busiest day) and the largest overrun of
the budget against that day's last card; "fits" said on day one and kept (every day within
the budget and mean true recall on the date at the target), and the ready 10th percentile over
the learners it was said for beside the one over all; the forecast made 7 days before
the date (mean, interval, the week's check) against the realised mean true recall; each
learner's calibration on their own log (RMSE(bins), median and 90th percentile).

PASS/FAIL lines (exit 1 on a FAIL): plan >= baseline in ready mean and p10 on every family and
budget; no day over budget by more than one card's time; (b) at 120: p10 ready >= 90 % over
all learners (and, on a line of its own, over those the plan said fit, when it said so for some); the
7-day forecast within 0.05 of the realised mean recall on (b) and (d); (c): the interval covers
the realised recall, or the app warned (the week's check said the recalls fell outside).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill import api  # noqa: E402  (the bench's one door into drill)

READY = 0.9
BUDGETS = (30, 120)
FAMILIES = ("a", "b", "c", "d")
BASELINE_NEW_PER_DAY = 10
SPREAD = 0.3
FIRST_GRADES = ((1, 0.3), (3, 0.2), (4, 0.4), (5, 0.1))
RECALLED_GRADES = ((3, 0.15), (4, 0.75), (5, 0.10))
FORGOTTEN_GRADE = 1
REPEAT_GRADE = 4  # a same-day repeat: the answer was just shown
SKIP_SHARE = 1 / 7
HALF_DAY_SHARE = 0.3
FORECAST_DAYS_BEFORE = 7
FORECAST_GOAL = 0.05
B_READY_P10_GOAL = 0.90
START = dt.date(2026, 1, 5)
# the seconds a view of each kind takes for family (a), and the centre of the others' (drill's own defaults:
# the learner a new user's plan assumes)
KIND_SECONDS = {"concept": 60.0, "shape_trace": 90.0, "memory_ledger": 150.0, "diagnosis": 120.0, "kernel": 900.0}
# FSRS-6's defaults and bounds (fsrs.scheduler), copied: the bench's learners are not drill's model
FSRS_DEFAULTS = (
    0.212, 1.2931, 2.3065, 8.2956, 6.4133, 0.8334, 3.0194, 0.001, 1.8722, 0.1666, 0.796,
    1.4835, 0.0614, 0.2629, 1.6483, 0.6014, 1.8729, 0.5425, 0.0912, 0.0658, 0.1542,
)  # fmt: skip
FSRS_LOWER = (
    0.001, 0.001, 0.001, 0.001, 1.0, 0.001, 0.001, 0.001, 0.0, 0.0, 0.001,
    0.001, 0.001, 0.001, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.1,
)  # fmt: skip
FSRS_UPPER = (
    100.0, 100.0, 100.0, 100.0, 10.0, 4.0, 4.0, 0.75, 4.5, 0.8, 3.5,
    5.0, 0.25, 0.9, 4.0, 1.0, 6.0, 2.0, 2.0, 0.8, 0.8,
)  # fmt: skip


# -- the learners' memory ------------------------------------------------------------------------------
class FSRSMemory:
    """FSRS-6 with the learner's weights, each card's stability times its own factor; whole days."""

    def __init__(self, weights: tuple[float, ...], card_factor: dict[str, float]) -> None:
        self.w = weights
        self.decay = -weights[20]
        self.factor = 0.9 ** (1 / self.decay) - 1
        self.card_factor = card_factor
        self.cards: dict[str, tuple[float, float, dt.date]] = {}  # stability, difficulty, last review

    def recall(self, card_id: str, day: dt.date) -> float:
        known = self.cards.get(card_id)
        if known is None:
            return 0.0
        stability, _, last = known
        stability *= self.card_factor.get(card_id, 1.0)
        return (1 + self.factor * (day - last).days / stability) ** self.decay

    def review(self, card_id: str, grade: int, day: dt.date) -> None:
        w = self.w
        rating = 1 if grade < 3 else grade - 1
        known = self.cards.get(card_id)
        if known is None:
            stability = max(w[rating - 1], 0.001)
            difficulty = min(max(w[4] - math.exp(w[5] * (rating - 1)) + 1, 1.0), 10.0)
            self.cards[card_id] = (stability, difficulty, day)
            return
        stability, difficulty, last = known
        r = self.recall(card_id, day)
        if (day - last).days < 1:
            new_s = stability * max(
                math.exp(w[17] * (rating - 3 + w[18])) * stability ** -w[19], 1.0 if rating > 1 else 0
            )
        elif rating == 1:
            long_term = w[11] * difficulty ** -w[12] * ((stability + 1) ** w[13] - 1) * math.exp((1 - r) * w[14])
            new_s = min(long_term, stability / math.exp(w[17] * w[18]))
        else:
            bonus = (w[15] if rating == 2 else 1) * (w[16] if rating == 4 else 1)
            new_s = stability * (
                1 + math.exp(w[8]) * (11 - difficulty) * stability ** -w[9] * (math.exp((1 - r) * w[10]) - 1) * bonus
            )
        delta = -(w[6] * (rating - 3))
        damped = difficulty + (10 - difficulty) * delta / 9
        easy = w[4] - math.exp(w[5] * 3) + 1
        difficulty = min(max(w[7] * easy + (1 - w[7]) * damped, 1.0), 10.0)
        self.cards[card_id] = (max(new_s, 0.001), difficulty, day)


class ExponentialMemory:
    """Recall 2 ** (-t / h), each card with its own half-life h: a law FSRS's power curve does not share."""

    FIRST_HALF_LIFE = {1: 0.5, 2: 1.0, 3: 2.0, 4: 4.0}  # days, by FSRS rating of the first answer
    GROWTH = {2: 1.5, 3: 2.5, 4: 3.5}
    LAPSE = 0.4

    def __init__(self, seed: int, growth_factor: float) -> None:
        self.seed = seed
        self.growth_factor = growth_factor
        self.cards: dict[str, tuple[float, dt.date]] = {}

    def recall(self, card_id: str, day: dt.date) -> float:
        known = self.cards.get(card_id)
        if known is None:
            return 0.0
        half_life, last = known
        return 2 ** (-(day - last).days / half_life)

    def review(self, card_id: str, grade: int, day: dt.date) -> None:
        rating = 1 if grade < 3 else grade - 1
        known = self.cards.get(card_id)
        if known is None:
            half_life = self.FIRST_HALF_LIFE[rating] * math.exp(
                card_random(self.seed, card_id, "half-life").gauss(0, 0.5)
            )
        elif (day - known[1]).days < 1:
            return
        elif rating == 1:
            half_life = max(0.5, known[0] * self.LAPSE)
        else:
            half_life = known[0] * self.GROWTH[rating] * self.growth_factor
        self.cards[card_id] = (half_life, day)


# -- one learner ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    family: str
    budget: int
    planned: bool
    seed: int
    days: int
    track: str


@dataclass
class Outcome:
    family: str
    budget: int
    planned: bool
    ready: float
    minutes: list[float] = field(default_factory=list)
    overrun: float = 0.0  # the largest (minutes over the day's budget) minus that day's last card's minutes
    fits_said: bool | None = None
    realised_recall: float = 0.0
    forecast_mean: float | None = None
    forecast_low: float | None = None
    forecast_high: float | None = None
    warned: bool = False
    rmse_bins: float | None = None
    pace: float = 1.0  # the learner's seconds next to the default pace
    unready_unseen: int = 0  # cards short of READY on the date never introduced
    unready_seen: int = 0  # cards short of READY on the date that were introduced


def _pick(rng: random.Random, mix: tuple[tuple[int, float], ...]) -> int:
    return rng.choices([g for g, _ in mix], weights=[s for _, s in mix])[0]


def simulate(job: Job) -> Outcome:
    """One learner's days in a data folder of their own, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="drill-bench-") as folder:
        return _simulate_in(job, Path(folder))


def card_random(seed: int, card_id: str, what: str) -> random.Random:
    """A card's own draws for one learner: the same whatever other cards the decks hold or the order they come in."""
    return random.Random(f"{seed}:{card_id}:{what}")


def _simulate_in(job: Job, folder: Path) -> Outcome:
    rng = random.Random(job.seed)
    # what the family draws for the learner (the same for plan and baseline); each card's draws are its own, so a
    # card added to the decks leaves the learner as they were
    draws = random.Random(job.seed + 1)
    learner = api.open(folder, read_config=False)
    learner.use_scheduler("fsrs")
    cards = learner.cards(job.track)
    kind_of = {c.id: c.kind for c in cards}
    for card in learner.cards():
        kind_of.setdefault(card.id, card.kind)
    spread = 0.0 if job.family == "a" else SPREAD
    learner_pace = math.exp(draws.gauss(0, spread))
    card_seconds = {
        cid: KIND_SECONDS.get(kind, 90.0) * learner_pace * math.exp(card_random(job.seed, cid, "pace").gauss(0, spread))
        for cid, kind in kind_of.items()
    }
    memory: FSRSMemory | ExponentialMemory
    if job.family == "c":
        memory = ExponentialMemory(job.seed, math.exp(draws.gauss(0, SPREAD)))
    elif job.family == "a":
        memory = FSRSMemory(FSRS_DEFAULTS, {})
    else:
        weights = tuple(
            min(max(v * math.exp(draws.gauss(0, SPREAD)), lo), hi)
            for v, lo, hi in zip(FSRS_DEFAULTS, FSRS_LOWER, FSRS_UPPER)
        )
        memory = FSRSMemory(
            weights, {cid: math.exp(card_random(job.seed, cid, "stability").gauss(0, SPREAD)) for cid in kind_of}
        )
    skips = [job.family == "d" and draws.random() < SKIP_SHARE for _ in range(job.days)]
    halves = [job.family == "d" and draws.random() < HALF_DAY_SHARE for _ in range(job.days)]
    date = START + dt.timedelta(days=job.days)
    if job.planned:
        learner.set_interview(date, track=job.track, minutes_per_day=job.budget)
    else:
        learner.new_per_day = BASELINE_NEW_PER_DAY
    out = Outcome(job.family, job.budget, job.planned, 0.0, pace=learner_pace)
    try:
        for offset in range(job.days):
            day = START + dt.timedelta(days=offset)
            learner.set_day(day)
            if job.planned and offset == 0:
                plan = learner.plan()
                out.fits_said = plan.fits if plan is not None else None
            if job.planned and offset in (job.days - FORECAST_DAYS_BEFORE, job.days - 1):
                forecast = learner.forecast()
                if forecast is not None:
                    out.warned |= forecast.week_outside
                    if offset == job.days - FORECAST_DAYS_BEFORE:
                        out.forecast_mean = forecast.mean
                        out.forecast_low = forecast.low
                        out.forecast_high = forecast.high
            if skips[offset]:
                out.minutes.append(0.0)
                continue
            mine = job.budget / 2 if halves[offset] else job.budget  # what the learner gives today
            session = learner.start_day(budget_minutes=None if job.planned else job.budget)
            spent = 0.0
            last = 0.0
            repeated: set[str] = set()
            while (card := session.current) is not None and spent < mine * 60:
                seconds = card_seconds[card.id] * math.exp(rng.gauss(0, spread))
                if card.id in repeated:
                    grade = REPEAT_GRADE
                elif card.id not in memory.cards:
                    grade = _pick(rng, FIRST_GRADES)
                    memory.review(card.id, grade, day)
                else:
                    recalled = rng.random() < memory.recall(card.id, day)
                    grade = _pick(rng, RECALLED_GRADES) if recalled else FORGOTTEN_GRADE
                    memory.review(card.id, grade, day)
                result = session.grade(grade, seconds)
                if result.again:
                    repeated.add(card.id)
                spent += seconds
                last = seconds
            out.minutes.append(spent / 60)
            out.overrun = max(out.overrun, (spent - job.budget * 60 - last) / 60)
        recalls = [memory.recall(c.id, date) for c in cards]
        out.ready = sum(r >= READY for r in recalls) / len(recalls)
        out.unready_unseen = sum(1 for c in cards if c.id not in memory.cards)
        out.unready_seen = sum(1 for c, r in zip(cards, recalls) if r < READY and c.id in memory.cards)
        out.realised_recall = statistics.fmean(recalls)
        out.rmse_bins = learner.calibration().rmse_bins
    finally:
        learner.close()
    return out


# -- the report -------------------------------------------------------------------------------------
def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def report(outcomes: list[Outcome], learners: int, budgets: tuple[int, ...] = BUDGETS) -> bool:
    ok = True
    verdicts: list[tuple[str, bool]] = []
    for family in FAMILIES:
        for budget in budgets:
            plan = [o for o in outcomes if o.family == family and o.budget == budget and o.planned]
            base = [o for o in outcomes if o.family == family and o.budget == budget and not o.planned]
            if not plan or not base:
                continue
            print(f"family {family}, {budget} min/day, {len(plan)} learners")
            plan_ready = [o.ready for o in plan]
            base_ready = [o.ready for o in base]
            for name, group in (("plan", plan), ("baseline", base)):
                ready = [o.ready for o in group]
                means = [statistics.fmean(o.minutes) for o in group]
                peaks = [max(o.minutes) for o in group]
                print(
                    f"  {name:<8} ready mean {statistics.fmean(ready):6.1%} p10 {percentile(ready, 0.1):6.1%}; "
                    f"minutes a day mean {statistics.fmean(means):5.1f}, busiest day mean {statistics.fmean(peaks):5.1f} "
                    f"max {max(peaks):5.1f}; worst overrun past one card {max(o.overrun for o in group):+.1f} min"
                )
            said = [o for o in plan if o.fits_said]
            kept = [o for o in said if o.overrun <= 0 and o.realised_recall >= READY]
            said_ready = [o.ready for o in said]
            over_said = (
                f"ready p10 over them {percentile(said_ready, 0.1):6.1%} (over all {percentile(plan_ready, 0.1):6.1%})"
                if said
                else "no ready figure over them"
            )
            print(f"  fits said on day one {len(said)} of {len(plan)}; kept {len(kept)} of {len(said)}; {over_said}")
            forecasts = [o for o in plan if o.forecast_mean is not None]
            realised = statistics.fmean(o.realised_recall for o in plan)
            gap = None
            if forecasts:
                predicted = statistics.fmean(o.forecast_mean or 0.0 for o in forecasts)
                covered = sum(
                    1 for o in forecasts if (o.forecast_low or 0) <= o.realised_recall <= (o.forecast_high or 1)
                )
                warned = sum(1 for o in plan if o.warned)
                gap = predicted - realised
                print(
                    f"  forecast {FORECAST_DAYS_BEFORE} days before: mean {predicted:.3f} vs realised {realised:.3f} "
                    f"(gap {gap:+.3f}); interval covers {covered} of {len(forecasts)}; the app warned {warned} of {len(plan)}"
                )
            rmse = [o.rmse_bins for o in plan if o.rmse_bins is not None]
            if rmse:
                print(
                    f"  per-learner calibration RMSE(bins): median {statistics.median(rmse):.3f}, p90 {percentile(rmse, 0.9):.3f}"
                )
            verdicts.append(
                (
                    f"{family}@{budget}: plan >= baseline in ready mean and p10",
                    statistics.fmean(plan_ready) >= statistics.fmean(base_ready)
                    and percentile(plan_ready, 0.1) >= percentile(base_ready, 0.1),
                )
            )
            verdicts.append(
                (
                    f"{family}@{budget}: no day over budget by more than one card",
                    max(o.overrun for o in [*plan, *base]) <= 0,
                )
            )
            if family == "b" and budget == 120:
                verdicts.append(
                    (f"b@120: p10 ready >= {B_READY_P10_GOAL:.0%}", percentile(plan_ready, 0.1) >= B_READY_P10_GOAL)
                )
                if said and len(said) < len(plan):  # beside the goal over all, never in its place
                    verdicts.append(
                        (
                            f"b@120, the {len(said)} of {len(plan)} learners the plan said fit: "
                            f"p10 ready >= {B_READY_P10_GOAL:.0%}",
                            percentile(said_ready, 0.1) >= B_READY_P10_GOAL,
                        )
                    )
            if family in ("b", "d") and gap is not None:
                verdicts.append(
                    (f"{family}@{budget}: 7-day forecast within {FORECAST_GOAL} of realised", abs(gap) <= FORECAST_GOAL)
                )
            if family == "c":
                fine = all(
                    o.warned or (o.forecast_low or 0) <= o.realised_recall <= (o.forecast_high or 1) for o in plan
                )
                verdicts.append((f"c@{budget}: interval covers the realised recall or the app warned", fine))
    print()
    for name, passed in verdicts:
        ok &= passed
        print(f"{'PASS' if passed else 'FAIL'}  {name}")
    return ok


def learner_seeds(seed: int, learners: int, budgets: tuple[int, ...]) -> list[tuple[str, int, int]]:
    """Each learner's seed by family and budget: drawn over every family and BUDGETS (then any other budget asked)
    in one order, so a run of some families or budgets meets the very learners a full run does."""
    draws = random.Random(seed)
    every_budget = [*BUDGETS, *(b for b in budgets if b not in BUDGETS)]
    return [
        (family, budget, draws.randrange(2**31))
        for family in FAMILIES
        for budget in every_budget
        for _ in range(learners)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--learners", type=int, default=6, help="learners per family and budget")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--track", default="inference")
    parser.add_argument("--jobs", type=int, default=2, help="learners simulated at once (processes)")
    parser.add_argument("--families", default="".join(FAMILIES))
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS), help="minutes a day, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--each", action="store_true", help="also list each planned learner's outcome")
    parser.add_argument("--quick", action="store_true", help="1 learner a family and budget, 8 days")
    args = parser.parse_args()
    if args.quick:
        args.learners = 1
        args.days = 8
    started = time.perf_counter()
    budgets = tuple(int(b) for b in args.budgets.split(","))
    jobs = []
    for family, budget, seed in learner_seeds(args.seed, args.learners, budgets):
        if family in args.families and budget in budgets:
            for planned in (True, False):
                jobs.append(Job(family, budget, planned, seed, args.days, args.track))
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(simulate, jobs))
    print(
        f"{args.learners} learners per family and budget, track {args.track}, {args.days} days; "
        f"{time.perf_counter() - started:.0f} s"
    )
    if args.each:
        for job, outcome in zip(jobs, outcomes):
            if outcome.planned:
                print(
                    f"  {job.family}@{job.budget} seed {job.seed}: ready {outcome.ready:6.1%}, recall "
                    f"{outcome.realised_recall:.3f}, fits said {outcome.fits_said}, busiest day "
                    f"{max(outcome.minutes):5.1f} min, mean {statistics.fmean(outcome.minutes):5.1f}; pace "
                    f"x{outcome.pace:.2f}; short of ready: {outcome.unready_unseen} never introduced, "
                    f"{outcome.unready_seen} introduced"
                )
    sys.exit(0 if report(outcomes, args.learners, budgets) else 1)


if __name__ == "__main__":
    main()
