"""How sure the forecast can be about one learner: how fast they forget next to the model, and how often they skip.

- The memory model (FSRS, default or fitted parameters) predicts every review before it
  happens; the calibration tally (drill.study.calibration.Tally) keeps, per srs-benchmark
  group, how many reviews it predicted, their summed prediction and how many passed. Scaling
  every stability by one factor f moves each prediction p to (1 + x / f) ** decay, where
  (1 + x) ** decay = p. `learner_uncertainty` weighs each f on a grid by how well it explains
  the groups (binomial likelihood) times a log-normal prior (sd PRIOR_LOG_SCALE_SD around 1):
  the posterior's mean and spread of log f. A learner with few reviews keeps the prior's
  width; one whose recalls fall short of the model's gets f < 1 and a lower forecast.
- The skip rate: the share of days since the learner's first review with no review at all,
  drawn toward PRIOR_SKIP_RATE by PRIOR_SKIP_DAYS days.

What this cannot know: a forgetting law of another shape than FSRS's (one factor cannot bend
the curve), a change in the learner's habits after today, or time the learner has but does not
give (a half day looks like a day whose queue ran out).

Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass

from drill.study.calibration import Tally

PRIOR_LOG_SCALE_SD = 0.35  # log of the factor on stability: one learner next to FSRS's defaults
FITTED_LOG_SCALE_SD = 0.2  # the same once parameters were fitted to the learner
GRID_STEP = 0.05
GRID_HALF_WIDTH = 2.0
PRIOR_SKIP_RATE = 0.05
PRIOR_SKIP_DAYS = 7.0
EDGE = 1e-6  # a prediction kept this far inside 0 and 1


@dataclass(frozen=True)
class Uncertainty:
    """The factor on every stability as a log-normal (mean and sd of its log), and the share of days skipped."""

    log_scale_mean: float = 0.0
    log_scale_sd: float = PRIOR_LOG_SCALE_SD
    skip_rate: float = PRIOR_SKIP_RATE
    reviews: int = 0  # predicted reviews the estimate rests on


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
    groups = [(g.count, g.predicted / g.count, g.recalled) for g in tally.groups.values() if g.count]
    steps = int(GRID_HALF_WIDTH / GRID_STEP)
    grid = [i * GRID_STEP for i in range(-steps, steps + 1)]
    logs = []
    for log_f in grid:
        total = -0.5 * (log_f / prior_sd) ** 2
        factor = math.exp(log_f)
        for count, mean, passed in groups:
            p = _scaled(mean, factor, decay)
            total += passed * math.log(p) + (count - passed) * math.log(1 - p)
        logs.append(total)
    top = max(logs)
    weights = [math.exp(v - top) for v in logs]
    norm = sum(weights)
    mean = sum(w * g for w, g in zip(weights, grid)) / norm
    variance = sum(w * (g - mean) ** 2 for w, g in zip(weights, grid)) / norm
    return Uncertainty(mean, math.sqrt(variance), skip_rate(study_days, today), tally.reviews)


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
