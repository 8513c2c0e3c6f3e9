"""Proof by simulation: does drill's plan get a learner ready by the interview date, and is its forecast calibrated?

    python bench/readiness.py [--learners 200] [--track inference] [--days 30] [--minutes 120] [--seed 1]

Each simulated learner's true memory follows FSRS with parameters of their own, drawn
around the fsrs package's defaults (each one times a log-normal factor, PARAMETER_SPREAD,
kept within FSRS's bounds), while drill's model keeps the defaults: the model is not told
the truth. Each learner also has their own seconds per card of each kind, drawn around
drill's defaults; the plan is told those, as drill measures them from the log.

Over one track (cards/data/tracks.yaml; the bundled decks), `--days` days to the
interview, two ways of studying:

- drill's plan (drill.study.plan.make_plan, made on the first day): its new cards each day,
  every card the queue asks (drill's FSRS scheduler with default parameters, fed the
  grades the learner gives), and in the last days the early reviews the plan's rule brings
  up (drill.study.plan.early_reviews);
- the baseline: 10 new cards a day, every card the queue asks, no early reviews.

A review is recalled with the learner's true probability (FSRS retrievability with their
parameters); a recalled card is graded hard, good or easy (RECALLED_GRADES), a forgotten one
1 (FSRS's Again); a card graded below 4 takes a second view (drill's same-day repeat). A card's
first view is graded with FIRST_GRADES. Minutes are the learner's own seconds times views.

Printed: the share of the track's cards whose true recall on the day is at least 0.9, the
minutes a day, and drill's forecast for the day (its predicted recall of each card) against
the simulated truth (a recall drawn with the true probability): RMSE(bins) as srs-benchmark
defines it (drill.study.calibration), log loss, and the mean gap to the true probability.

Goals, each with PASS/FAIL (exit 1 on a FAIL): with the plan, at least 90 % of the track's
cards at true recall >= 0.9 on the day, within the minutes given (each learner's mean
minutes a day), for the learners whose plan fits (a plan that says in advance it cannot
fit is counted apart); forecast RMSE(bins) <= 0.05.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import fsrs
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

from drill.cards.loader import load_decks
from drill.mock.plan import load_tracks
from drill.study.calibration import Outcome, calibrate
from drill.study.forecast import MemoryModel, TrackCard
from drill.study.plan import DEFAULT_SECONDS_BY_KIND, DEFAULT_TARGET, GradeMix, early_reviews, make_plan
from drill.study.records import FSRSState
from drill.study.sm2 import SAME_DAY_REPEAT_BELOW

READY = 0.9  # a card counts as ready on the day at this true recall or more
READY_SHARE_GOAL = 0.90
RMSE_BINS_GOAL = 0.05
BASELINE_NEW_PER_DAY = 10
PARAMETER_SPREAD = 0.15  # sd of the log of each true parameter's factor
SECONDS_SPREAD = 0.25  # sd of the log of each learner's seconds per kind
FIRST_GRADES = ((1, 0.3), (3, 0.2), (4, 0.4), (5, 0.1))  # a new card's first answer: (grade, probability)
RECALLED_GRADES = ((3, 0.15), (4, 0.75), (5, 0.10))  # a recalled card's grade: (grade, probability)
FORGOTTEN_GRADE = 1
START = dt.date(2026, 1, 5)


def _at(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


class TrueMemory:
    """A learner's real memory: FSRS with their own parameters, reviewed on whole days."""

    def __init__(self, parameters: tuple[float, ...]) -> None:
        self.scheduler = fsrs.Scheduler(
            parameters=parameters, learning_steps=(), relearning_steps=(), enable_fuzzing=False
        )
        self.cards: dict[str, fsrs.Card] = {}

    def recall(self, card_id: str, day: dt.date) -> float:
        card = self.cards.get(card_id)
        if card is None:
            return 0.0
        return float(self.scheduler.get_card_retrievability(card, _at(day)))

    def review(self, card_id: str, grade: int, day: dt.date) -> None:
        card = self.cards.get(card_id) or fsrs.Card(card_id=0, due=_at(day))
        rating = fsrs.Rating.Again if grade < 3 else fsrs.Rating(grade - 1)
        self.cards[card_id], _ = self.scheduler.review_card(card, rating, review_datetime=_at(day))


@dataclass
class Seen:
    """What drill knows of a card: its memory in the model, when the queue asks it, its history's length."""

    memory: FSRSState
    due: dt.date
    reviews: int = 1
    lapses: int = 0


@dataclass
class Result:
    ready_share: float
    minutes_mean: float
    minutes_peak: float
    fits: bool
    planned_readiness: float
    outcomes: list[Outcome] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)  # predicted minus true recall on the day, per card


def draw_parameters(rng: random.Random) -> tuple[float, ...]:
    out = []
    for value, low, high in zip(DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS):
        out.append(min(max(value * math.exp(rng.gauss(0, PARAMETER_SPREAD)), low), high))
    return tuple(out)


def draw_seconds(rng: random.Random) -> dict[str, float]:
    return {kind: s * math.exp(rng.gauss(0, SECONDS_SPREAD)) for kind, s in DEFAULT_SECONDS_BY_KIND.items()}


def pick(rng: random.Random, choices: tuple[tuple[int, float], ...]) -> int:
    return rng.choices([g for g, _ in choices], weights=[w for _, w in choices])[0]


def simulate(
    cards: list[TrackCard],
    parameters: tuple[float, ...],
    seconds: dict[str, float],
    *,
    days: int,
    minutes: float,
    follow_plan: bool,
    seed: int,
) -> Result:
    rng = random.Random(seed)
    model = MemoryModel()
    truth = TrueMemory(parameters)
    kind_of = {c.card_id: c.kind for c in cards}
    date = START + dt.timedelta(days=days)
    seen: dict[str, Seen] = {}
    ids = [c.card_id for c in cards]
    fits = True
    planned_readiness = float("nan")
    new_cards = [ids[i : i + BASELINE_NEW_PER_DAY] for i in range(0, BASELINE_NEW_PER_DAY * days, BASELINE_NEW_PER_DAY)]
    if follow_plan:
        # the plan is told what drill would measure from the log: the learner's seconds and grades
        grades = GradeMix(FIRST_GRADES, RECALLED_GRADES)
        plan = make_plan(
            cards,
            today=START,
            date=date,
            minutes_per_day=minutes,
            seconds_by_kind=seconds,
            model=model,
            grades=grades,
            suggest=False,
        )
        fits = plan.fits
        planned_readiness = plan.planned.overall
        new_cards = [list(d.new_cards) for d in plan.days]
    spent: list[float] = []
    for offset in range(days):
        day = START + dt.timedelta(days=offset)
        asked = [card_id for card_id, s in seen.items() if s.due <= day]
        if follow_plan:
            now = [TrackCard(cid, "", kind_of[cid], s.memory, s.due) for cid, s in seen.items()]
            asked += early_reviews(now, day, date, DEFAULT_TARGET, model)
        new = new_cards[offset]
        seconds_today = 0.0
        for card_id in asked:
            recalled = rng.random() < truth.recall(card_id, day)
            grade = pick(rng, RECALLED_GRADES) if recalled else FORGOTTEN_GRADE
            views = 1 if grade >= SAME_DAY_REPEAT_BELOW else 2
            seconds_today += views * seconds[kind_of[card_id]]
            known = seen[card_id]
            memory, due = model.review(known.memory, grade, day)
            lapse = 0 if recalled else 1
            seen[card_id] = Seen(memory, due, known.reviews + 1, known.lapses + lapse)
            truth.review(card_id, grade, day)
        for card_id in new:
            grade = pick(rng, FIRST_GRADES)
            seconds_today += (1 if grade >= SAME_DAY_REPEAT_BELOW else 2) * seconds[kind_of[card_id]]
            memory, due = model.review(None, grade, day)
            seen[card_id] = Seen(memory, due)
            truth.review(card_id, grade, day)
        spent.append(seconds_today / 60)

    ready = 0
    result = Result(0.0, statistics.mean(spent), max(spent), fits, planned_readiness)
    for card in cards:
        true_recall = truth.recall(card.card_id, date)
        ready += true_recall >= READY
        known = seen.get(card.card_id)
        if known is None:
            continue
        predicted = model.recall(known.memory, date)
        recalled = rng.random() < true_recall
        elapsed = (date - known.memory.last_review).days
        result.outcomes.append(Outcome(predicted, recalled, elapsed, known.reviews + 1, known.lapses))
        result.gaps.append(predicted - true_recall)
    result.ready_share = ready / len(cards)
    return result


def track_cards(track: str) -> list[TrackCard]:
    decks = load_decks()
    tracks = load_tracks()
    if track not in tracks:
        raise SystemExit(f"unknown track {track!r} (choose from {', '.join(tracks)})")
    topics = set(tracks[track]["topics"])
    return [TrackCard(c.id, c.topic, c.kind) for c in decks.cards.values() if c.topic in topics]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--track", default="inference")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument(
        "--minutes", type=float, default=120.0, help="minutes a day the learner gives (the plan's budget)"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    cards = track_cards(args.track)
    rng = random.Random(args.seed)
    planned: list[Result] = []
    baseline: list[Result] = []
    for learner in range(args.learners):
        parameters = draw_parameters(rng)
        seconds = draw_seconds(rng)
        seed = rng.randrange(2**32)
        common = {"days": args.days, "minutes": args.minutes, "seed": seed}
        planned.append(simulate(cards, parameters, seconds, follow_plan=True, **common))
        baseline.append(simulate(cards, parameters, seconds, follow_plan=False, **common))
    took = time.perf_counter() - started

    fitting = [r for r in planned if r.fits]
    print(
        f"{args.learners} learners, track {args.track} ({len(cards)} cards), {args.days} days, "
        f"{args.minutes:g} minutes a day given; {took:.0f} s"
    )
    print(f"plans that fit: {len(fitting)}; said in advance they cannot fit: {len(planned) - len(fitting)}")
    ok = True
    unfit = [r for r in planned if not r.fits]
    groups = (
        ("drill's plan", fitting),
        ("drill's plan that said it cannot fit, followed anyway", unfit),
        (f"baseline {BASELINE_NEW_PER_DAY} new/day", baseline),
    )
    for name, results in groups:
        if not results:
            print(f"{name}: no learner")
            continue
        shares = [r.ready_share for r in results]
        means = [r.minutes_mean for r in results]
        peaks = [r.minutes_peak for r in results]
        print(
            f"{name}: cards at true recall >= {READY:g} on the day: mean {statistics.mean(shares):.1%}, "
            f"10th percentile {percentile(shares, 0.1):.1%}; minutes a day: mean {statistics.mean(means):.0f}, "
            f"learners' mean above the budget {sum(m > args.minutes for m in means) / len(means):.0%}, "
            f"busiest day mean {statistics.mean(peaks):.0f}"
        )
    if fitting:
        share = statistics.mean(r.ready_share for r in fitting)
        within = statistics.mean(r.minutes_mean for r in fitting) <= args.minutes
        passed = share >= READY_SHARE_GOAL and within
        ok &= passed
        print(
            f"goal: with the plan >= {READY_SHARE_GOAL:.0%} of the cards ready within {args.minutes:g} minutes: "
            f"{share:.1%}, {'within' if within else 'over'} the minutes {'PASS' if passed else 'FAIL'}"
        )
        print(
            f"plan's projected readiness {statistics.mean(r.planned_readiness for r in fitting):.1%}; "
            "true mean recall on the day is in the calibration below"
        )
    else:
        print("goal: every plan said in advance that it cannot fit (counted as the plan's answer) PASS")
    for name, results in (("drill's plan", planned), ("baseline", baseline)):
        outcomes = [o for r in results for o in r.outcomes]
        gaps = [g for r in results for g in r.gaps]
        calibration = calibrate(outcomes)
        assert calibration.rmse_bins is not None and calibration.log_loss is not None
        mean_predicted = statistics.mean(o.predicted for o in outcomes)
        mean_true = mean_predicted - statistics.mean(gaps)
        rmse_ok = calibration.rmse_bins <= RMSE_BINS_GOAL
        verdict = ""
        if name == "drill's plan":
            ok &= rmse_ok
            verdict = f" (goal <= {RMSE_BINS_GOAL}) {'PASS' if rmse_ok else 'FAIL'}"
        print(
            f"forecast for the day, {name}: {calibration.reviews} cards, RMSE(bins) {calibration.rmse_bins:.4f}"
            f"{verdict}; log loss {calibration.log_loss:.4f}; mean predicted {mean_predicted:.3f} vs true "
            f"{mean_true:.3f}; mean |predicted - true| {statistics.mean(abs(g) for g in gaps):.3f}"
        )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
