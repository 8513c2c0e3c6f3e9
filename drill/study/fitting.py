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

The optimizer also sees the same-day repeats of its part (a card graded below 4 comes back the same
study day), at the times they were logged: FSRS-6's same-day weights (w17-w19) learn from them, which
reviews all stamped at midnight of their study day (and without their repeats) never let them do.
`review_times` says how a logged time becomes the optimizer's.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drill.study.calibration import log_loss
from drill.study.forecast import MemoryModel, replay, replay_order
from drill.study.records import LoggedReview

if TYPE_CHECKING:
    import fsrs

MIN_REVIEWS = 400
HOLDOUT = 0.2  # the share of reviews, the latest, held out to judge the fit
OPTIMIZER_MIN_REVIEWS = 512  # fsrs.optimizer's mini_batch_size: fewer repeat reviews and it returns the defaults
FIT_EXTRA = "drill[fit]"
FIT_MODULES = ("torch", "pandas", "tqdm")  # what fsrs[optimizer] adds
REPEAT = "repeat"  # the review log's mode of a same-day repeat (scheduling.after_grade)
SAME_DAY_MOST = dt.timedelta(days=1, seconds=-1)  # the longest two reviews of one study day can be apart


class FitUnavailable(RuntimeError):
    """The optimizer's dependencies are missing; the message names them and the install line."""


class NotEnoughReviews(ValueError):
    """Too few reviews to fit."""


@dataclass(frozen=True)
class Fitted:
    parameters: tuple[float, ...]
    reviews: int  # reviews that reached FSRS
    fitted_on: int  # of those, the ones the optimizer saw
    same_day: int  # the same-day repeats the optimizer saw besides them
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
            "same_day": self.same_day,
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

    fitted = fit_rows(log, cutoff)
    started = time.perf_counter()
    optimizer = Optimizer(_fsrs_logs(fitted))
    parameters = tuple(float(p) for p in optimizer.compute_optimal_parameters())
    seconds = time.perf_counter() - started
    before = _held_out_loss(rows, cutoff, MemoryModel())
    after = _held_out_loss(rows, cutoff, MemoryModel(parameters))
    return Fitted(
        parameters=parameters,
        reviews=len(rows),
        fitted_on=split,
        same_day=len(fitted) - split,
        held_out=before[1],
        log_loss_before=before[0],
        log_loss_after=after[0],
        seconds=seconds,
        kept_defaults=parameters == tuple(DEFAULT_PARAMETERS),
    )


def scheduled_reviews(log: Iterable[LoggedReview]) -> list[LoggedReview]:
    """The logged reviews that reach FSRS (forecast.replay's rule), in the order they happened."""
    return replay(log).scheduled


def fit_rows(log: Iterable[LoggedReview], cutoff: tuple[dt.date, int]) -> list[LoggedReview]:
    """What the optimizer fits, in replay order: the reviews that reach FSRS before `cutoff` (study day, id), and
    the same-day repeats before it of cards one of those reviews introduced (a repeat answers the day's first
    grade of its card)."""
    scheduled = {row.id for row in scheduled_reviews(log)}
    seen: set[str] = set()
    out = []
    for row in sorted(log, key=replay_order):
        if replay_order(row) >= cutoff:
            break
        if row.id in scheduled:
            seen.add(row.card_id)
            out.append(row)
        elif row.mode == REPEAT and row.card_id in seen:
            out.append(row)
    return out


def review_times(rows: Sequence[LoggedReview]) -> list[dt.datetime]:
    """When each review (in replay order) happened, as the optimizer reads it: in UTC, from the log's time.

    A review without a usable time (none logged, or one outside its study day, which runs from its date's
    rollover hour to the next date's) is taken at midnight UTC of its study day. The optimizer counts
    whole days between a card's reviews by the time between them, drill by study days: 23:00 one day and
    08:00 the next are one study day apart and nine hours. So a card's reviews of a study day are moved
    later together, their spacing kept, when they would otherwise come less than the study days between
    them after the card's previous review; within a study day a time that runs backward is taken as the
    one before it, and one a whole day or more after it (beside a review without a time) as just under a day.
    """
    out = []
    last: dict[str, tuple[dt.date, dt.datetime]] = {}  # each card's study day and time of its latest review
    shifts: dict[str, dt.timedelta] = {}  # how much the card's reviews of that study day were moved later
    for row in rows:
        at = _logged_time(row)
        previous = last.get(row.card_id)
        if previous is not None:
            day, before = previous
            if row.day != day:
                earliest = before + dt.timedelta(days=(row.day - day).days)
                shifts[row.card_id] = max(dt.timedelta(0), earliest - at)
            at = max(at + shifts.get(row.card_id, dt.timedelta(0)), before)
            if row.day == day:
                at = min(at, before + SAME_DAY_MOST)
        last[row.card_id] = (row.day, at)
        out.append(at)
    return out


def _logged_time(row: LoggedReview) -> dt.datetime:
    """The review's logged time in UTC (a time without a zone is taken as UTC: only the time between reviews
    counts), or midnight UTC of its study day when it has none within that day."""
    midnight = dt.datetime.combine(row.day, dt.time(), tzinfo=dt.timezone.utc)
    try:
        at = dt.datetime.fromisoformat(row.reviewed_at.strip())
    except ValueError:
        return midnight
    if not row.day <= at.date() <= row.day + dt.timedelta(days=1):
        return midnight
    if at.tzinfo is None:
        return at.replace(tzinfo=dt.timezone.utc)
    return at.astimezone(dt.timezone.utc)


def _held_out_loss(rows: Sequence[LoggedReview], cutoff: tuple[dt.date, int], model: MemoryModel) -> tuple[float, int]:
    """Log loss of the model's predictions of the reviews from `cutoff` on, each from the card's whole history."""
    replayed = replay(rows, model)
    held = [o for o, row in zip(replayed.outcomes, replayed.predicted) if (row.day, row.id) >= cutoff]
    loss = log_loss(held)
    if loss is None:
        raise NotEnoughReviews("no review in the last 20 % follows an earlier review of its card on another day")
    return loss, len(held)


def _fsrs_logs(rows: Sequence[LoggedReview]) -> list["fsrs.ReviewLog"]:
    """The reviews (in replay order) as fsrs ReviewLogs: card ids numbered, each at its `review_times` time."""
    import fsrs

    from drill.study.scheduling import rating_for

    numbers: dict[str, int] = {}
    out = []
    for row, at in zip(rows, review_times(rows)):
        number = numbers.setdefault(row.card_id, len(numbers) + 1)
        out.append(
            fsrs.ReviewLog(card_id=number, rating=rating_for(row.grade), review_datetime=at, review_duration=None)
        )
    return out
