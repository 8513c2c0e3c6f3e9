"""Fitting FSRS's parameters to the learner's own record (the core of `drill fsrs fit`).

The fit is the `fsrs` package's own `Optimizer` (fsrs.optimizer), which needs torch,
pandas and tqdm; drill does not need them otherwise, so they are an optional extra and
are imported only inside `fit_parameters`. Without them, FitUnavailable says what to
install (FIT_EXTRA).

The reviews that reach FSRS (drill.study.forecast.replay's rule) are split by time: the
first 80 % fit the parameters, the last 20 % (HOLDOUT) are held out. Both the default and
the fitted parameters then predict the held-out reviews from each card's whole history
before them, and the log loss of each (drill.study.calibration) says whether the fit
predicts the learner better. Below MIN_REVIEWS reviews there is too little to fit: the
fit says how many there are.

The Optimizer itself keeps the default parameters until its part holds OPTIMIZER_MIN_REVIEWS
reviews that follow an earlier one of the same card on another day (its mini-batch);
`Fitted.kept_defaults` says when that happened.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drill.study.calibration import log_loss
from drill.study.forecast import MemoryModel, replay
from drill.study.records import LoggedReview

if TYPE_CHECKING:
    import fsrs

MIN_REVIEWS = 400
HOLDOUT = 0.2  # the share of reviews, the latest, held out to judge the fit
OPTIMIZER_MIN_REVIEWS = 512  # fsrs.optimizer's mini_batch_size: fewer repeat reviews and it returns the defaults
FIT_EXTRA = "drill[fit]"
FIT_MODULES = ("torch", "pandas", "tqdm")  # what fsrs[optimizer] adds


class FitUnavailable(RuntimeError):
    """The optimizer's dependencies are missing; the message names them and the install line."""


class NotEnoughReviews(ValueError):
    """Too few reviews to fit."""


@dataclass(frozen=True)
class Fitted:
    parameters: tuple[float, ...]
    reviews: int  # reviews that reached FSRS
    fitted_on: int  # of those, the ones the optimizer saw
    held_out: int  # predicted reviews in the held-out part (the log losses are over these)
    log_loss_before: float  # default parameters, on the held-out reviews
    log_loss_after: float  # fitted parameters, on the held-out reviews
    seconds: float  # how long the fit took
    kept_defaults: bool  # the optimizer returned the defaults (too few repeat reviews in its part)

    @property
    def improved(self) -> bool:
        return self.log_loss_after < self.log_loss_before

    def as_json(self) -> dict[str, Any]:
        return {
            "parameters": list(self.parameters),
            "reviews": self.reviews,
            "fitted_on": self.fitted_on,
            "held_out": self.held_out,
            "log_loss_before": self.log_loss_before,
            "log_loss_after": self.log_loss_after,
            "seconds": round(self.seconds, 2),
            "kept_defaults": self.kept_defaults,
        }


def missing_modules() -> list[str]:
    """The optimizer's dependencies that are not installed (none imported)."""
    return [name for name in FIT_MODULES if importlib.util.find_spec(name) is None]


def fit_parameters(log: Iterable[LoggedReview], *, min_reviews: int = MIN_REVIEWS) -> Fitted:
    """FSRS parameters fitted to the first 80 % of the reviews, judged on the last 20 %.

    FitUnavailable when torch, pandas or tqdm is missing; NotEnoughReviews below
    `min_reviews` reviews that reach FSRS. Both messages are one line.
    """
    missing = missing_modules()
    if missing:
        raise FitUnavailable(
            f"fitting FSRS needs {', '.join(missing)} (the fsrs optimizer's dependencies): "
            f"pip install -e '.[fit]' in drill's folder (pip install '{FIT_EXTRA}' where drill is installed from a package)"
        )
    rows = scheduled_reviews(log)
    if len(rows) < min_reviews:
        raise NotEnoughReviews(f"{len(rows)} reviews so far; fitting FSRS needs at least {min_reviews}")
    split = len(rows) - max(1, round(len(rows) * HOLDOUT))
    cutoff = (rows[split].day, rows[split].id)

    from fsrs import Optimizer
    from fsrs.scheduler import DEFAULT_PARAMETERS

    started = time.perf_counter()
    optimizer = Optimizer(_fsrs_logs(rows[:split]))
    parameters = tuple(float(p) for p in optimizer.compute_optimal_parameters())
    seconds = time.perf_counter() - started
    before = _held_out_loss(rows, cutoff, MemoryModel())
    after = _held_out_loss(rows, cutoff, MemoryModel(parameters))
    return Fitted(
        parameters=parameters,
        reviews=len(rows),
        fitted_on=split,
        held_out=before[1],
        log_loss_before=before[0],
        log_loss_after=after[0],
        seconds=seconds,
        kept_defaults=parameters == tuple(DEFAULT_PARAMETERS),
    )


def scheduled_reviews(log: Iterable[LoggedReview]) -> list[LoggedReview]:
    """The logged reviews that reach FSRS (forecast.replay's rule), in the order they happened."""
    return replay(log).scheduled


def _held_out_loss(rows: Sequence[LoggedReview], cutoff: tuple[dt.date, int], model: MemoryModel) -> tuple[float, int]:
    """Log loss of the model's predictions of the reviews from `cutoff` on, each from the card's whole history."""
    replayed = replay(rows, model)
    held = [o for o, row in zip(replayed.outcomes, replayed.predicted) if (row.day, row.id) >= cutoff]
    loss = log_loss(held)
    if loss is None:
        raise NotEnoughReviews("no review in the last 20 % follows an earlier review of its card on another day")
    return loss, len(held)


def _fsrs_logs(rows: Sequence[LoggedReview]) -> list["fsrs.ReviewLog"]:
    """The reviews as fsrs ReviewLogs: card ids numbered, each at midnight UTC of its study day."""
    import fsrs

    from drill.study.scheduling import rating_for

    numbers: dict[str, int] = {}
    out = []
    for row in rows:
        number = numbers.setdefault(row.card_id, len(numbers) + 1)
        at = dt.datetime.combine(row.day, dt.time(), tzinfo=dt.timezone.utc)
        out.append(
            fsrs.ReviewLog(card_id=number, rating=rating_for(row.grade), review_datetime=at, review_duration=None)
        )
    return out
