"""SM-2 scheduling (SuperMemo, 1990) as a pure function of state, grade and day."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace

MIN_EF = 1.3
PASSING = 3  # a grade below this restarts the repetitions
SAME_DAY_REPEAT_BELOW = 4  # a grade below this brings the card back in the same session

GRADE_MEANINGS = {
    0: "blackout",
    1: "wrong, familiar",
    2: "wrong, easy recall",
    3: "right, hard",
    4: "right, hesitant",
    5: "perfect",
}


@dataclass(frozen=True)
class SM2State:
    repetitions: int = 0
    ef: float = 2.5
    interval: int = 0
    due: dt.date | None = None


def next_ef(ef: float, grade: int) -> float:
    miss = 5 - grade
    return max(MIN_EF, ef + 0.1 - miss * (0.08 + miss * 0.02))


def review(state: SM2State, grade: int, today: dt.date) -> SM2State:
    """The state after one graded review on `today`. No clock, no I/O."""
    if not isinstance(grade, int) or isinstance(grade, bool) or not 0 <= grade <= 5:
        raise ValueError(f"grade must be an integer 0-5, got {grade!r}")
    ef = next_ef(state.ef, grade)
    if grade >= PASSING:
        repetitions = state.repetitions + 1
        if repetitions == 1:
            interval = 1
        elif repetitions == 2:
            interval = 6
        else:
            interval = math.ceil(round(state.interval * ef, 9))
    else:
        repetitions = 0
        interval = 1
    return replace(state, repetitions=repetitions, ef=ef, interval=interval, due=today + dt.timedelta(days=interval))


# One word each, for the grade bar of an 80-column terminal.
SHORT_MEANINGS = {0: "blackout", 1: "wrong", 2: "almost", 3: "hard", 4: "good", 5: "perfect"}
