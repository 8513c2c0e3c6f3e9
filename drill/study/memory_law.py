"""FSRS-6's memory arithmetic as plain floats: what the plan's simulation runs thousands of times a day.

The fsrs package (drill.study.forecast.MemoryModel) builds a Card and a datetime for every
review, about 30 microseconds each; the plan follows every card of a track through many
sampled runs of the days to the date, so it needs the same formulas without the objects.
These are the package's own (fsrs/scheduler.py: `_initial_stability`, `_initial_difficulty`,
`_next_difficulty`, `_next_recall_stability`, `_next_forget_stability`, `_short_term_stability`,
`_next_interval`, `get_card_retrievability`), with drill's settings: no learning steps, one
relearning step of a day, no fuzz, whole study days. tests/study/test_memory_law.py holds
them to the package's results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

STABILITY_MIN = 0.001  # fsrs.scheduler.STABILITY_MIN
MIN_DIFFICULTY = 1.0
MAX_DIFFICULTY = 10.0
RELEARNING = 3  # FSRS's state numbers, as drill.study.records.FSRSState keeps them
REVIEW = 2
AGAIN = 1  # FSRS's ratings
HARD = 2
GOOD = 3
EASY = 4


def rating_of(grade: int) -> int:
    """FSRS's rating of a 0-5 grade (drill.study.scheduling.GRADE_RATINGS): 0-2 Again, 3 Hard, 4 Good, 5 Easy."""
    return AGAIN if grade < 3 else grade - 1


@dataclass(frozen=True)
class Memory:
    """A card's memory after a review: stability (days), difficulty, FSRS state, and the interval to its next review."""

    stability: float
    difficulty: float
    state: int
    interval: int


class MemoryLaw:
    """FSRS-6 with one set of 21 parameters (None: the fsrs package's defaults) and drill's longest interval."""

    def __init__(self, parameters: tuple[float, ...] | None, max_interval: int) -> None:
        if parameters is None:
            from fsrs.scheduler import DEFAULT_PARAMETERS

            parameters = tuple(DEFAULT_PARAMETERS)
        self.w = parameters
        self.max_interval = max_interval
        self.decay: float = -parameters[20]
        self.factor: float = 0.9 ** (1 / self.decay) - 1
        # fsrs.Scheduler's default desired retention, 0.9, in its interval formula
        self.retention_term = (0.9 ** (1 / self.decay)) - 1

    def recall(self, stability: float, elapsed_days: float) -> float:
        """Predicted recall `elapsed_days` after the last review (get_card_retrievability)."""
        recall: float = (1 + self.factor * max(0.0, elapsed_days) / stability) ** self.decay
        return recall

    def first(self, grade: int) -> Memory:
        """A new card's memory after its first review."""
        rating = rating_of(grade)
        stability = max(self.w[rating - 1], STABILITY_MIN)
        difficulty = _clamp(self._initial_difficulty(rating))
        return Memory(stability, difficulty, REVIEW, self._interval(stability))

    def review(self, stability: float, difficulty: float, state: int, elapsed_days: int, grade: int) -> Memory:
        """The memory after a review graded `grade` `elapsed_days` whole days after the last one."""
        rating = rating_of(grade)
        w = self.w
        if elapsed_days < 1:
            increase = math.e ** (w[17] * (rating - 3 + w[18])) * stability ** -w[19]
            if rating != AGAIN:
                increase = max(increase, 1.0)
            new_stability = max(stability * increase, STABILITY_MIN)
        else:
            recall = self.recall(stability, elapsed_days)
            if rating == AGAIN:
                long_term = (
                    w[11] * difficulty ** -w[12] * (((stability + 1) ** w[13]) - 1) * math.e ** ((1 - recall) * w[14])
                )
                short_term = stability / (math.e ** (w[17] * w[18]))
                new_stability = min(long_term, short_term)
            else:
                hard_penalty = w[15] if rating == HARD else 1
                easy_bonus = w[16] if rating == EASY else 1
                new_stability = stability * (
                    1
                    + math.e ** w[8]
                    * (11 - difficulty)
                    * stability ** -w[9]
                    * (math.e ** ((1 - recall) * w[10]) - 1)
                    * hard_penalty
                    * easy_bonus
                )
            new_stability = max(new_stability, STABILITY_MIN)
        new_difficulty = self._next_difficulty(difficulty, rating)
        if rating == AGAIN:
            return Memory(new_stability, new_difficulty, RELEARNING, 1)
        if state == RELEARNING and rating == HARD:
            return Memory(new_stability, new_difficulty, RELEARNING, 1)  # the one relearning step, 1.5 days
        return Memory(new_stability, new_difficulty, REVIEW, self._interval(new_stability))

    def _initial_difficulty(self, rating: int) -> float:
        difficulty: float = self.w[4] - (math.e ** (self.w[5] * (rating - 1))) + 1
        return difficulty

    def _next_difficulty(self, difficulty: float, rating: int) -> float:
        delta = -(self.w[6] * (rating - 3))
        damped = difficulty + (10.0 - difficulty) * delta / 9.0
        reverted = self.w[7] * self._initial_difficulty(EASY) + (1 - self.w[7]) * damped
        return _clamp(reverted)

    def _interval(self, stability: float) -> int:
        interval: int = round((stability / self.factor) * self.retention_term)
        return min(max(interval, 1), self.max_interval)


@cache
def memory_law(parameters: tuple[float, ...] | None, max_interval: int) -> MemoryLaw:
    """The law for these parameters, made once."""
    return MemoryLaw(parameters, max_interval)


def _clamp(difficulty: float) -> float:
    return min(max(difficulty, MIN_DIFFICULTY), MAX_DIFFICULTY)
