"""Calibration of predicted recall against what happened: ten bins, log loss and RMSE(bins).

Each `Outcome` is one review the memory model predicted: the probability of recall it
gave just before the review, and whether the learner passed.

- The ten bins split predictions by value (0-0.1, ..., 0.9-1.0) and set each bin's mean
  prediction beside its pass rate: what the stats screen draws.
- Log loss (binary cross-entropy) is the mean of -(y ln p + (1 - y) ln(1 - p)); lower is
  better. A prediction of exactly 0 or 1 is moved LOG_LOSS_EPS inside, so one confident
  miss counts as a large loss instead of an infinite one.
- RMSE(bins) is the metric of the open spaced-repetition benchmark
  (open-spaced-repetition/srs-benchmark, README "Metrics" and `rmse_matrix` in its
  utils.py; https://github.com/open-spaced-repetition/fsrs4anki/wiki/The-Metric): reviews
  are grouped by three features, each on a logarithmic scale -- the days since the card's
  previous review, the review's number in the card's history and the card's lapses so
  far -- and within each group the mean prediction is compared with the pass rate; the
  root of the squared differences averaged with the groups' sizes as weights is the
  figure. The bins are not the ten value bins above: the benchmark groups by history so
  that a model cannot score well by being right only on average.

Pure arithmetic: no clock, no I/O, no third-party import.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

BINS = 10
LOG_LOSS_EPS = 1e-15  # the clip scikit-learn's log_loss applied before it switched to the dtype's epsilon


@dataclass(frozen=True)
class Outcome:
    """One predicted review: the recall predicted just before it and what happened."""

    predicted: float  # probability of recall, 0-1
    recalled: bool
    elapsed_days: int = 1  # days since the card's previous review
    review_number: int = 2  # this review is the card's n-th (the first has no prediction)
    lapses: int = 0  # failed reviews before this one, the card's first review not counted


@dataclass(frozen=True)
class CalibrationBin:
    """Predictions between `low` and `high` (the last bin includes 1.0)."""

    low: float
    high: float
    reviews: int
    predicted: float | None  # mean prediction; None when the bin is empty
    actual: float | None  # pass rate; None when the bin is empty

    def as_json(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "reviews": self.reviews,
            "predicted": self.predicted,
            "actual": self.actual,
        }


@dataclass(frozen=True)
class Calibration:
    """How well predicted recall matched the learner's record."""

    reviews: int
    bins: tuple[CalibrationBin, ...]
    log_loss: float | None  # None without reviews
    rmse_bins: float | None  # None without reviews

    def as_json(self) -> dict[str, Any]:
        return {
            "reviews": self.reviews,
            "log_loss": self.log_loss,
            "rmse_bins": self.rmse_bins,
            "bins": [b.as_json() for b in self.bins],
        }


def calibrate(outcomes: Iterable[Outcome]) -> Calibration:
    """The ten value bins, log loss and RMSE(bins) of `outcomes`."""
    rows = list(outcomes)
    return Calibration(len(rows), value_bins(rows), log_loss(rows), rmse_bins(rows))


def value_bins(outcomes: Sequence[Outcome], bins: int = BINS) -> tuple[CalibrationBin, ...]:
    """`bins` equal-width bins of predicted recall, each with its mean prediction and pass rate."""
    members: list[list[Outcome]] = [[] for _ in range(bins)]
    for outcome in outcomes:
        index = min(int(_probability(outcome.predicted) * bins), bins - 1)  # 1.0 belongs to the last bin
        members[index].append(outcome)
    out = []
    for index, group in enumerate(members):
        predicted = sum(o.predicted for o in group) / len(group) if group else None
        actual = sum(o.recalled for o in group) / len(group) if group else None
        out.append(CalibrationBin(index / bins, (index + 1) / bins, len(group), predicted, actual))
    return tuple(out)


def log_loss(outcomes: Sequence[Outcome]) -> float | None:
    """Mean binary cross-entropy of the predictions, natural log; None without outcomes."""
    if not outcomes:
        return None
    total = 0.0
    for outcome in outcomes:
        p = min(max(_probability(outcome.predicted), LOG_LOSS_EPS), 1 - LOG_LOSS_EPS)
        total -= math.log(p) if outcome.recalled else math.log(1 - p)
    return total / len(outcomes)


def rmse_bins(outcomes: Sequence[Outcome]) -> float | None:
    """RMSE(bins) as srs-benchmark computes it (see the module docstring); None without outcomes."""
    if not outcomes:
        return None
    groups: dict[tuple[float, float, float], list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(benchmark_bin(outcome), []).append(outcome)
    squared = 0.0
    for group in groups.values():
        predicted = sum(o.predicted for o in group) / len(group)
        actual = sum(o.recalled for o in group) / len(group)
        squared += len(group) * (actual - predicted) ** 2
    return math.sqrt(squared / len(outcomes))


def benchmark_bin(outcome: Outcome) -> tuple[float, float, float]:
    """The srs-benchmark group of a review: (days since the last review, review number, lapses), each binned."""
    # The bases and scales are the benchmark's: 2.48 * 3.62^k days, 1.99 * 1.89^k reviews, 1.65 * 1.73^k lapses.
    delta_t = round(2.48 * 3.62 ** math.floor(math.log(max(outcome.elapsed_days, 1e-6)) / math.log(3.62)), 2)
    number = float(round(1.99 * 1.89 ** math.floor(math.log(max(outcome.review_number, 1)) / math.log(1.89))))
    lapses = 0.0
    if outcome.lapses > 0:
        lapses = float(round(1.65 * 1.73 ** math.floor(math.log(outcome.lapses) / math.log(1.73))))
    return delta_t, number, lapses


def _probability(value: float) -> float:
    if not 0.0 <= value <= 1.0:  # NaN fails both comparisons too
        raise ValueError(f"a predicted recall must be between 0 and 1, got {value!r}")
    return value
