"""How the learner grades: the mix of grades of a new card's first answer and of a recalled review, from their log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from drill.study import scheduling, sm2
from drill.study.records import LoggedReview

# How the learner grades, until their log holds MIN_GRADED of each: the first answer to a
# new card (often missed: drill asks before it shows), and a recalled review (mostly good).
DEFAULT_FIRST_GRADES: tuple[tuple[int, float], ...] = ((1, 0.3), (3, 0.2), (4, 0.4), (5, 0.1))
DEFAULT_RECALLED_GRADES: tuple[tuple[int, float], ...] = ((3, 0.15), (4, 0.75), (5, 0.1))
MIN_GRADED = 30


@dataclass(frozen=True)
class GradeMix:
    """How the learner grades: (grade, probability) pairs for a new card's first answer and for a recalled review."""

    first: tuple[tuple[int, float], ...] = DEFAULT_FIRST_GRADES
    recalled: tuple[tuple[int, float], ...] = DEFAULT_RECALLED_GRADES

    def first_repeat_share(self) -> float:
        """The share of first answers graded below 4: they take a same-day repeat."""
        return sum(share for grade, share in self.first if grade < sm2.SAME_DAY_REPEAT_BELOW)

    def recalled_repeat_share(self) -> float:
        return sum(share for grade, share in self.recalled if grade < sm2.SAME_DAY_REPEAT_BELOW)


@dataclass
class GradeCounts:
    """How often each grade was given to a new card's first answer and to a recalled review (mode review or early)."""

    first: dict[int, int] = field(default_factory=dict)
    recalled: dict[int, int] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)  # the cards whose first answer is counted

    def add(self, row: LoggedReview) -> None:
        """Count one more logged review; rows come in replay order (study day, then log id)."""
        if row.mode not in ("review", scheduling.EARLY):
            return
        if row.card_id not in self.seen:
            self.seen.add(row.card_id)
            self.first[row.grade] = self.first.get(row.grade, 0) + 1
        elif row.grade >= sm2.PASSING:
            self.recalled[row.grade] = self.recalled.get(row.grade, 0) + 1

    def mix(self) -> GradeMix:
        """The learner's own grade mix; the defaults where too few are counted."""
        mix = GradeMix()
        if sum(self.first.values()) >= MIN_GRADED:
            mix = GradeMix(_shares(self.first), mix.recalled)
        if sum(self.recalled.values()) >= MIN_GRADED:
            mix = GradeMix(mix.first, _shares(self.recalled))
        return mix


def grade_mix(log: Iterable[LoggedReview]) -> GradeMix:
    """The learner's own grade mix from the reviews that reach the scheduler (mode review or early); defaults where too few."""
    counts = GradeCounts()
    for row in sorted(log, key=lambda r: (r.day, r.id)):
        counts.add(row)
    return counts.mix()


def _shares(counts: Mapping[int, int]) -> tuple[tuple[int, float], ...]:
    total = sum(counts.values())
    return tuple((grade, count / total) for grade, count in sorted(counts.items()))
