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
from dataclasses import dataclass, field
from typing import Any

BINS = 10
ROUNDED = 3  # places of a recall (and of the figures) in the JSON drill shows
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


@dataclass(frozen=True)
class CalibrationFigures:
    """Predicted recall against what happened over the learner's history, as drill shows it."""

    result: Calibration

    def as_json(self) -> dict[str, Any]:
        """The shape `drill stats --json` carries under "calibration": the non-empty bins only."""
        result = self.result
        return {
            "reviews": result.reviews,
            "log_loss": None if result.log_loss is None else _rounded(result.log_loss),
            "rmse_bins": None if result.rmse_bins is None else _rounded(result.rmse_bins),
            "bins": [
                {"predicted": _rounded(b.predicted), "actual": _rounded(b.actual), "count": b.reviews}
                for b in result.bins
                if b.reviews and b.predicted is not None and b.actual is not None
            ],
        }


def calibrate(outcomes: Iterable[Outcome]) -> Calibration:
    """The ten value bins, log loss and RMSE(bins) of `outcomes`."""
    return Tally.of(outcomes).calibration()


def value_bins(outcomes: Sequence[Outcome], bins: int = BINS) -> tuple[CalibrationBin, ...]:
    """`bins` equal-width bins of predicted recall, each with its mean prediction and pass rate."""
    return Tally.of(outcomes, bins).value_bins()


def log_loss(outcomes: Sequence[Outcome]) -> float | None:
    """Mean binary cross-entropy of the predictions, natural log; None without outcomes."""
    return Tally.of(outcomes).log_loss()


def rmse_bins(outcomes: Sequence[Outcome]) -> float | None:
    """RMSE(bins) as srs-benchmark computes it (see the module docstring); None without outcomes."""
    return Tally.of(outcomes).rmse_bins()


@dataclass
class Sums:
    """A group of outcomes as its count, the sum of its predictions and its passes."""

    count: int = 0
    predicted: float = 0.0
    recalled: int = 0

    def add(self, outcome: Outcome) -> None:
        self.count += 1
        self.predicted += outcome.predicted
        self.recalled += outcome.recalled

    def means(self) -> tuple[float, float]:
        """The mean prediction and the pass rate (the group is not empty)."""
        return self.predicted / self.count, self.recalled / self.count


@dataclass
class Tally:
    """Running sums over outcomes, in the order they came: every figure `calibrate` gives, no outcome kept.

    A replay of the review log goes on from where an earlier one stopped (drill.study.forecast.ReplayState):
    its tally goes on too. Each sum adds one outcome at a time in order, so a tally continued with later
    outcomes holds the very numbers a tally of them all would.
    """

    reviews: int = 0
    bins: list[Sums] = field(default_factory=lambda: [Sums() for _ in range(BINS)])
    loss: float = 0.0  # the sum of each outcome's log loss
    groups: dict[tuple[float, float, float], Sums] = field(default_factory=dict)  # by benchmark_bin, first seen first

    @classmethod
    def of(cls, outcomes: Iterable[Outcome], bins: int = BINS) -> "Tally":
        tally = cls(bins=[Sums() for _ in range(bins)])
        for outcome in outcomes:
            tally.add(outcome)
        return tally

    def add(self, outcome: Outcome) -> None:
        """Count one more outcome (ValueError when its prediction is not a probability)."""
        p = _probability(outcome.predicted)
        count = len(self.bins)
        self.bins[min(int(p * count), count - 1)].add(outcome)  # 1.0 belongs to the last bin
        # a prediction of exactly 0 or 1 is moved LOG_LOSS_EPS inside: a confident miss is a large loss, not infinite
        clipped = min(max(p, LOG_LOSS_EPS), 1 - LOG_LOSS_EPS)
        self.loss -= math.log(clipped) if outcome.recalled else math.log(1 - clipped)
        self.groups.setdefault(benchmark_bin(outcome), Sums()).add(outcome)
        self.reviews += 1

    def copy(self) -> "Tally":
        return Tally(
            self.reviews,
            [Sums(b.count, b.predicted, b.recalled) for b in self.bins],
            self.loss,
            {key: Sums(g.count, g.predicted, g.recalled) for key, g in self.groups.items()},
        )

    def calibration(self) -> Calibration:
        return Calibration(self.reviews, self.value_bins(), self.log_loss(), self.rmse_bins())

    def value_bins(self) -> tuple[CalibrationBin, ...]:
        count = len(self.bins)
        out = []
        for index, sums in enumerate(self.bins):
            predicted, actual = sums.means() if sums.count else (None, None)
            out.append(CalibrationBin(index / count, (index + 1) / count, sums.count, predicted, actual))
        return tuple(out)

    def log_loss(self) -> float | None:
        if not self.reviews:
            return None
        return self.loss / self.reviews

    def rmse_bins(self) -> float | None:
        if not self.reviews:
            return None
        squared = 0.0
        for group in self.groups.values():
            predicted, actual = group.means()
            squared += group.count * (actual - predicted) ** 2
        return math.sqrt(squared / self.reviews)


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


def _rounded(value: float) -> float:
    return round(value, ROUNDED)


# -- forecast against what happened, week by week --------------------------------------------------
WEEK_DAYS = 7
MIN_WEEK_REVIEWS = 20  # fewer predicted reviews in a week say too little to judge the model by
WEEK_SLACK = 0.02  # a gap this small is no news, however many reviews


@dataclass(frozen=True)
class WeekCheck:
    """The last WEEK_DAYS days' predicted reviews: the mean recall the model predicted and the share recalled."""

    reviews: int
    predicted: float | None
    recalled: float | None
    # the whole log's recalls depart from the model by more than chance allows, even with the learner's own
    # factor on every stability (drill.study.uncertainty.Uncertainty.fits_poorly): a week too quiet to judge
    # by does not hide it
    model_fits_poorly: bool = False

    @property
    def outside(self) -> bool:
        """Whether the recalls fall outside what the forecast allows: the week's (two binomial standard errors, plus
        slack), or the whole log's."""
        return self.week_outside or self.model_fits_poorly

    @property
    def week_outside(self) -> bool:
        """Whether the week's recalls fall outside the prediction by more than two binomial standard errors and slack."""
        if self.reviews < MIN_WEEK_REVIEWS or self.predicted is None or self.recalled is None:
            return False
        spread = 2 * math.sqrt(max(self.predicted * (1 - self.predicted), 0.0) / self.reviews) + WEEK_SLACK
        return abs(self.recalled - self.predicted) > spread

    def with_model_fit(self, fits_poorly: bool) -> "WeekCheck":
        """This check, saying whether the whole log shows the model fitting the learner poorly."""
        return WeekCheck(self.reviews, self.predicted, self.recalled, fits_poorly)

    def line(self) -> str:
        """One line for `drill stats`, the stats screen and `drill plan`."""
        misfit = (
            "your log's recalls depart from the model's predictions: it fits you poorly, and the forecast may be off"
        )
        fit_it = "drill fsrs fit fits it to your log"
        if self.predicted is None or self.recalled is None:
            if self.model_fits_poorly:
                return f"Forecast vs what happened (7 days): no predicted review yet; {misfit}; {fit_it}"
            return "Forecast vs what happened (7 days): no predicted review yet"
        head = (
            f"Forecast vs what happened (7 days): predicted {self.predicted:.0%} recall, "
            f"you recalled {self.recalled:.0%} of {self.reviews} reviews"
        )
        if self.week_outside:
            return f"{head}: outside the forecast, the model does not fit you yet; {fit_it}"
        if self.model_fits_poorly:
            return f"{head}; {misfit}; {fit_it}"
        if self.reviews < MIN_WEEK_REVIEWS:
            return f"{head}; too few to judge"
        return f"{head}: within the forecast"

    def as_json(self) -> dict[str, Any]:
        return {
            "reviews": self.reviews,
            "predicted": None if self.predicted is None else _rounded(self.predicted),
            "recalled": None if self.recalled is None else _rounded(self.recalled),
            "outside": self.outside,
            "model_fits_poorly": self.model_fits_poorly,
            "line": self.line(),
        }


def week_check(outcomes: Iterable[Outcome]) -> WeekCheck:
    """The check over the week's outcomes (the caller picks the reviews of the last WEEK_DAYS days)."""
    sums = Sums()
    for outcome in outcomes:
        sums.add(outcome)
    return _week_check(sums)


def week_check_of(days: Iterable[Sums]) -> WeekCheck:
    """The check over the week's outcomes summed day by day (a replay's digest keeps each day's sums)."""
    total = Sums()
    for sums in days:
        total.count += sums.count
        total.predicted += sums.predicted
        total.recalled += sums.recalled
    return _week_check(total)


def _week_check(sums: Sums) -> WeekCheck:
    if not sums.count:
        return WeekCheck(0, None, None)
    predicted, recalled = sums.means()
    return WeekCheck(sums.count, predicted, recalled)
