"""The learner's pace: seconds per view of a card, by kind and by card, learned from their own log.

Each timed view in the log (a review, an early review, a same-day repeat, a cram view: a mock's
do not say how long a card takes) is one observation of log seconds. A kind's pace starts at the
prior (DEFAULT_SECONDS_BY_KIND, worth PRIOR_VIEWS views) and moves to the learner's own as views
come in; a card's own pace starts at its kind's and moves to the card's own views (CARD_PRIOR_VIEWS).
Seconds vary from view to view: each kind keeps the spread of its log seconds (prior PRIOR_LOG_SD),
which the plan draws from when it judges a day on its 90th percentile rather than its mean.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from drill.study.records import LoggedReview

TIMED_MODES = ("review", "early", "repeat", "cram")  # views whose seconds say how long a card takes

# Seconds one view of a card takes, by kind, for a learner with no timed views of that kind:
# reading and answering a concept out loud, filling a shape trace, working a ledger's numbers,
# reading profiler evidence; a kernel card is an edit-and-run loop (the mock gives it 15 minutes,
# drill.mock.plan.MINUTES_BY_KIND).
DEFAULT_SECONDS_BY_KIND: dict[str, float] = {
    "concept": 60.0,
    "shape_trace": 90.0,
    "memory_ledger": 150.0,
    "diagnosis": 120.0,
    "kernel": 900.0,
}
DEFAULT_SECONDS = 90.0  # a kind not listed above
PRIOR_VIEWS = 5.0  # the prior's weight in views of a kind
CARD_PRIOR_VIEWS = 3.0  # a card's kind's pace, weighed as this many views of the card
PRIOR_LOG_SD = 0.5  # the spread of one view's log seconds before the log says
LONGEST_VIEW = 3600.0  # seconds; a view logged longer was left open, not worked on, and counts as this


@dataclass(frozen=True)
class Pace:
    """Seconds per view: each kind's (the mean of its log-normal), each card's where the log has its views."""

    kind_log_mean: Mapping[str, float] = field(default_factory=dict)
    kind_log_sd: Mapping[str, float] = field(default_factory=dict)
    card_log_mean: Mapping[str, float] = field(default_factory=dict)
    timed_views: int = 0

    def seconds(self, card_id: str, kind: str) -> float:
        """The expected seconds of one view of this card."""
        return math.exp(self._log_mean(card_id, kind) + self.log_sd(kind) ** 2 / 2)

    def kind_seconds(self, kind: str) -> float:
        """The expected seconds of one view of a card of this kind."""
        return math.exp(self._kind_log_mean(kind) + self.log_sd(kind) ** 2 / 2)

    def log_sd(self, kind: str) -> float:
        return self.kind_log_sd.get(kind, PRIOR_LOG_SD)

    def draw(self, card_id: str, kind: str, rng: random.Random) -> float:
        """One view's seconds as the learner might spend them."""
        return rng.lognormvariate(self._log_mean(card_id, kind), self.log_sd(kind))

    def _log_mean(self, card_id: str, kind: str) -> float:
        return self.card_log_mean.get(card_id, self._kind_log_mean(kind))

    def _kind_log_mean(self, kind: str) -> float:
        if kind in self.kind_log_mean:
            return self.kind_log_mean[kind]
        return _prior_log_mean(kind)

    def by_kind(self) -> dict[str, float]:
        """Expected seconds per view of every kind the prior or the log knows."""
        return {kind: self.kind_seconds(kind) for kind in {*DEFAULT_SECONDS_BY_KIND, *self.kind_log_mean}}


@dataclass
class ViewSums:
    """A card's timed views as running sums of their log seconds: how many, their sum and their sum of squares."""

    count: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.squares += value * value


def view_value(row: LoggedReview) -> float | None:
    """The log seconds one logged view tells the pace, or None when it tells none (a mock's, an untimed one)."""
    if row.mode not in TIMED_MODES or row.duration_ms <= 0:
        return None
    seconds = min(row.duration_ms / 1000, LONGEST_VIEW)
    return math.log(max(seconds, 1.0))


def views_of(log: Iterable[LoggedReview]) -> dict[str, ViewSums]:
    """Each card's timed views in `log`, summed in the order given."""
    views: dict[str, ViewSums] = {}
    for row in log:
        value = view_value(row)
        if value is not None:
            views.setdefault(row.card_id, ViewSums()).add(value)
    return views


def learned_pace(log: Iterable[LoggedReview], kind_of: Mapping[str, str]) -> Pace:
    """The pace the learner's timed views show (`kind_of` names each card's kind; other cards are left out)."""
    return pace_of(views_of(log), kind_of)


def pace_of(views: Mapping[str, ViewSums], kind_of: Mapping[str, str]) -> Pace:
    """The pace of each card's summed timed views (`kind_of` names each card's kind; other cards are left out)."""
    by_kind: dict[str, ViewSums] = {}
    for card_id, sums in views.items():
        kind = kind_of.get(card_id)
        if kind is None or not sums.count:
            continue
        into = by_kind.setdefault(kind, ViewSums())
        into.count += sums.count
        into.total += sums.total
        into.squares += sums.squares
    kind_mean: dict[str, float] = {}
    kind_sd: dict[str, float] = {}
    for kind, sums in by_kind.items():
        prior = _prior_log_mean(kind)
        count = sums.count
        mean = (PRIOR_VIEWS * prior + sums.total) / (PRIOR_VIEWS + count)
        kind_mean[kind] = mean
        # the sum of (v - mean)^2 over the kind's views, from its sums
        squares = max(0.0, sums.squares - 2 * mean * sums.total + count * mean * mean)
        kind_sd[kind] = math.sqrt((PRIOR_VIEWS * PRIOR_LOG_SD**2 + squares) / (PRIOR_VIEWS + count))
    card_mean: dict[str, float] = {}
    for card_id, sums in views.items():
        kind = kind_of.get(card_id)
        if kind is None or not sums.count:
            continue
        card_mean[card_id] = (CARD_PRIOR_VIEWS * kind_mean[kind] + sums.total) / (CARD_PRIOR_VIEWS + sums.count)
    views_counted = sum(sums.count for sums in by_kind.values())
    return Pace(kind_mean, kind_sd, card_mean, views_counted)


def _prior_log_mean(kind: str) -> float:
    """The log mean whose log-normal has the default seconds as its mean."""
    return math.log(DEFAULT_SECONDS_BY_KIND.get(kind, DEFAULT_SECONDS)) - PRIOR_LOG_SD**2 / 2
