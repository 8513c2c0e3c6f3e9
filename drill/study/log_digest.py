"""What the plan and the forecast check read from the review log besides the memories, as running sums.

A replay of the log (drill.study.forecast.ReplayState) takes every row in replay order (study
day, then log id) and keeps this digest beside each card's memory: the learner's timed views per
card (their pace), the grades of first answers and of recalled reviews (their grade mix), the
days with a review (their skip rate) and each day's predicted reviews (the week's forecast
check). Each part is a sum taken one row at a time in that order, so a digest continued with
later rows holds the very numbers a digest of the whole log does, and it never grows with the
log: one entry per card, grade or study day.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from drill.study.calibration import WEEK_DAYS, Outcome, Sums, WeekCheck, week_check_of
from drill.study.grades import GradeCounts, GradeMix
from drill.study.pace import Pace, ViewSums, pace_of, view_value
from drill.study.records import LoggedReview


@dataclass
class LogDigest:
    """Running sums over the log's rows, taken in replay order (see the module docstring)."""

    views: dict[str, ViewSums] = field(default_factory=dict)
    grades: GradeCounts = field(default_factory=GradeCounts)
    study_days: set[dt.date] = field(default_factory=set)
    predicted_by_day: dict[dt.date, Sums] = field(default_factory=dict)  # each day's predicted reviews

    def add(self, row: LoggedReview) -> None:
        """Count one more row (every row of the log, whatever its mode)."""
        self.study_days.add(row.day)
        self.grades.add(row)
        value = view_value(row)
        if value is not None:
            self.views.setdefault(row.card_id, ViewSums()).add(value)

    def add_outcome(self, day: dt.date, outcome: Outcome) -> None:
        """Count a prediction the memory model made for a review of study day `day`."""
        self.predicted_by_day.setdefault(day, Sums()).add(outcome)

    def pace(self, kind_of: Mapping[str, str]) -> Pace:
        return pace_of(self.views, kind_of)

    def grade_mix(self) -> GradeMix:
        return self.grades.mix()

    def week(self, today: dt.date) -> WeekCheck:
        """The forecast against the WEEK_DAYS days before `today`."""
        start = today - dt.timedelta(days=WEEK_DAYS)
        return week_check_of(sums for day, sums in sorted(self.predicted_by_day.items()) if start <= day < today)

    def copy(self) -> "LogDigest":
        return LogDigest(
            {card_id: ViewSums(v.count, v.total, v.squares) for card_id, v in self.views.items()},
            GradeCounts(dict(self.grades.first), dict(self.grades.recalled), set(self.grades.seen)),
            set(self.study_days),
            {day: Sums(s.count, s.predicted, s.recalled) for day, s in self.predicted_by_day.items()},
        )
