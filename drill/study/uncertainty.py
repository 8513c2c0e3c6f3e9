"""How sure the forecast can be about one learner: how fast they forget next to the model, and how often they skip.

- The memory model (FSRS, default or fitted parameters) predicts every review before it
  happens; the calibration tally (drill.study.calibration.Tally) keeps, per srs-benchmark
  group, how many reviews it predicted, their summed prediction and how many passed. Scaling
  every stability by one factor f moves each prediction p to (1 + x / f) ** decay, where
  (1 + x) ** decay = p. `learner_uncertainty` weighs each f on a grid by how well it explains
  the groups (binomial likelihood) times a log-normal prior (sd PRIOR_LOG_SCALE_SD around 1):
  the posterior's mean and spread of log f. A learner with few reviews keeps the prior's
  width; one whose recalls fall short of the model's gets f < 1 and a lower forecast.
  Each group's evidence is weighed by its days since the card's previous review, next to the
  log's mean (the weights sum to the reviews, so the posterior is as narrow as before): the
  forecast asks about recall after the gap from a card's last review to the date, and a
  learner whose stability grows more slowly than the model's shows it only after longer gaps,
  which a factor fitted mostly on the first days' short gaps would hide.
- `cautious_factor`: the posterior's CAUTIOUS_QUANTILE (its pessimistic end). The plan asks which
  cards need an early review with it, so a learner the log has not yet shown is not assumed to
  be the model's average one; as reviews come in the spread narrows and it meets the mean.
- The skip rate: the share of days since the learner's first review with no review at all,
  drawn toward PRIOR_SKIP_RATE by PRIOR_SKIP_DAYS days.
- How well one factor explains the log: the groups' Pearson chi-square against the model with the
  posterior's factor, over its degrees of freedom (groups of at least MIN_GROUP_REVIEWS), is the
  dispersion (quasi-binomial: about 1 when the model with the factor fits the learner). Above 1 the
  log shows a shape the factor cannot bend to: the spread the plan's runs draw the factor from is
  widened by its square root (`run_log_sd`, and the forecast's interval with it), while the early
  reviews keep the posterior's own (a wider one brings up cards whose minutes are better spent on
  new ones). When the chi-square passes the MISFIT_LEVEL quantile of its distribution (a chance of
  1 in 1000 for a learner the model fits), `fits_poorly`: the week's check says so
  (drill.study.calibration.WeekCheck.model_fits_poorly).

What this cannot know: a forgetting law of another shape than FSRS's (one factor cannot bend
the curve: it can only widen the interval and say the model fits poorly), how far one card is from
another beyond what FSRS's difficulty holds (the groups' sums cannot show one card from another),
a change in the learner's habits after today, or time the learner has but does not give (a half day
looks like a day whose queue ran out).

Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

from drill.study.calibration import Tally

PRIOR_LOG_SCALE_SD = 0.35  # log of the factor on stability: one learner next to FSRS's defaults
FITTED_LOG_SCALE_SD = 0.2  # the same once parameters were fitted to the learner
GRID_STEP = 0.05
GRID_HALF_WIDTH = 2.0
PRIOR_SKIP_RATE = 0.05
PRIOR_SKIP_DAYS = 7.0
EDGE = 1e-6  # a prediction kept this far inside 0 and 1
CAUTIOUS_QUANTILE = 0.1  # the factor the plan's early reviews assume: this quantile of the posterior
MIN_GROUP_REVIEWS = 10  # a benchmark group with fewer reviews says too little to judge the model's shape by
MIN_MISFIT_GROUPS = 3  # groups the misfit test needs
MISFIT_LEVEL = 0.999  # the chi-square quantile past which the model is said to fit the learner poorly
MAX_LOG_SCALE_SD = 1.0  # the spread added to the factor's log for a poor fit, at most


@dataclass(frozen=True)
class Uncertainty:
    """The factor on every stability as a log-normal (mean and sd of its log), and the share of days skipped."""

    log_scale_mean: float = 0.0
    log_scale_sd: float = PRIOR_LOG_SCALE_SD
    skip_rate: float = PRIOR_SKIP_RATE
    reviews: int = 0  # predicted reviews the estimate rests on
    dispersion: float = 1.0  # the groups' chi-square over its degrees of freedom, with the factor (1: it fits)
    misfit_log_sd: float = 0.0  # added to the factor's spread in the plan's runs for a shape the factor misses
    fits_poorly: bool = False  # the log's recalls depart from the model by more than chance allows

    @property
    def cautious_factor(self) -> float:
        """The factor at the posterior's CAUTIOUS_QUANTILE: lower than the mean while the log says little."""
        z = NormalDist().inv_cdf(CAUTIOUS_QUANTILE)
        return math.exp(self.log_scale_mean + z * self.log_scale_sd)

    @property
    def run_log_sd(self) -> float:
        """The spread of the factor's log the plan's runs draw from: the posterior's, widened for a poor fit."""
        return math.hypot(self.log_scale_sd, self.misfit_log_sd)


def learner_uncertainty(
    tally: Tally,
    decay: float,
    study_days: Iterable[dt.date],
    today: dt.date,
    *,
    fitted: bool = False,
) -> Uncertainty:
    """The stability factor the learner's predicted reviews show, and their skip rate before `today`.

    `decay` is FSRS's (the negative exponent, -w20); `study_days` the days with a review.
    """
    prior_sd = FITTED_LOG_SCALE_SD if fitted else PRIOR_LOG_SCALE_SD
    groups = _weighed_groups(tally)
    steps = int(GRID_HALF_WIDTH / GRID_STEP)
    grid = [i * GRID_STEP for i in range(-steps, steps + 1)]
    logs = []
    for log_f in grid:
        total = -0.5 * (log_f / prior_sd) ** 2
        factor = math.exp(log_f)
        for weight, count, mean, passed in groups:
            p = _scaled(mean, factor, decay)
            total += weight * (passed * math.log(p) + (count - passed) * math.log(1 - p))
        logs.append(total)
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    norm = sum(weights)
    mean = sum(w * g for w, g in zip(weights, grid)) / norm
    variance = sum(w * (g - mean) ** 2 for w, g in zip(weights, grid)) / norm
    fit = shape_fit(tally, math.exp(mean), decay)
    # the posterior's variance times the dispersion, less what the posterior already has
    misfit = math.sqrt(variance * max(0.0, fit.dispersion - 1))
    return Uncertainty(
        mean,
        math.sqrt(variance),
        skip_rate(study_days, today),
        tally.reviews,
        dispersion=fit.dispersion,
        misfit_log_sd=min(MAX_LOG_SCALE_SD, misfit),
        fits_poorly=fit.poor,
    )


@dataclass(frozen=True)
class ShapeFit:
    """How far the log's groups depart from the model with one factor: Pearson's chi-square and its freedom."""

    chi_square: float
    freedom: int

    @property
    def dispersion(self) -> float:
        return self.chi_square / self.freedom if self.freedom > 0 else 1.0

    @property
    def poor(self) -> bool:
        """Past the MISFIT_LEVEL quantile of the chi-square distribution (with MIN_MISFIT_GROUPS groups or more)."""
        if self.freedom < MIN_MISFIT_GROUPS - 1:
            return False
        return self.chi_square > chi_square_quantile(MISFIT_LEVEL, self.freedom)


def shape_fit(tally: Tally, factor: float, decay: float) -> ShapeFit:
    """Pearson's chi-square of the groups of MIN_GROUP_REVIEWS reviews or more, each prediction scaled by `factor`.

    One degree of freedom goes to the factor fitted on the same groups.
    """
    chi_square = 0.0
    groups = 0
    for sums in tally.groups.values():
        if sums.count < MIN_GROUP_REVIEWS:
            continue
        p = _scaled(sums.predicted / sums.count, factor, decay)
        chi_square += (sums.recalled - sums.count * p) ** 2 / (sums.count * p * (1 - p))
        groups += 1
    return ShapeFit(chi_square, groups - 1)


def chi_square_quantile(level: float, freedom: int) -> float:
    """The `level` quantile of the chi-square distribution (Wilson and Hilferty's cube-root approximation)."""
    z = NormalDist().inv_cdf(level)
    k = max(freedom, 1)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def _weighed_groups(tally: Tally) -> list[tuple[float, int, float, int]]:
    """Each benchmark group as (weight, count, mean prediction, passes), the weight its days since the previous
    review over the log's mean (so the weighed counts sum to the reviews)."""
    groups = [(key[0], g) for key, g in tally.groups.items() if g.count]
    counted = sum(g.count for _, g in groups)
    if not counted:
        return []
    mean_days = sum(days * g.count for days, g in groups) / counted
    return [(days / mean_days, g.count, g.predicted / g.count, g.recalled) for days, g in groups]


def skip_rate(study_days: Iterable[dt.date], today: dt.date) -> float:
    """The share of days from the first study day to yesterday without a review, drawn toward the prior."""
    days = {day for day in study_days if day < today}
    if not days:
        return PRIOR_SKIP_RATE
    span = (today - min(days)).days
    skipped = span - len(days)
    return (skipped + PRIOR_SKIP_RATE * PRIOR_SKIP_DAYS) / (span + PRIOR_SKIP_DAYS)


def _scaled(prediction: float, factor: float, decay: float) -> float:
    p = min(max(prediction, EDGE), 1 - EDGE)
    x = p ** (1 / decay) - 1
    scaled: float = (1 + x / factor) ** decay
    return min(max(scaled, EDGE), 1 - EDGE)
