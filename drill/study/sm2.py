"""SM-2 scheduling (SuperMemo, 1990) as a pure function of state, grade and day.

The rule, as P. A. Wozniak published it in 1990 (https://super-memory.com/english/ol/sm2.htm):

- a new item has an E-Factor (EF) of 2.5 (START_EF);
- a grade of 3 or more is a repetition: the EF becomes
  EF + (0.1 - (5 - q) * (0.08 + (5 - q) * 0.02)), never below 1.3, and the interval is
  1 day after the first repetition, 6 after the second, then the last interval times EF,
  a fraction rounded up;
- a grade below 3 starts the repetitions again (next interval 1 day) without changing
  the EF;
- an item graded below 4 comes back the same day until it scores 4 or more; those
  same-day repeats change nothing here (drill.study.scheduling logs them as "repeat").

What drill adds to the 1990 text, which leaves these open:

- an interval never passes a maximum (`max_interval`, 36,500 days by default, as Anki's
  maximum interval): the text sets no bound, and thirteen perfect grades in a row give
  an interval of about 8,000 years;
- the next review is `interval` days after this one (`days_after`; the card keeps that date as its
  `CardState.due`), and a date that would pass the last the calendar holds (9999-12-31) is that date;
- the interval after a repetition is the last one times the EF as this grade leaves it
  (the text gives the two steps without an order), and the product is rounded to 9
  decimals before it is rounded up, so that 10 x 2.5 stays 25 despite binary fractions.

Earlier versions of drill also lowered the EF on a grade below 3; grades 4, 0, 4, 4, 4, 4
then gave intervals 1, 1, 1, 6, 11, 19 days against the published 1, 1, 1, 6, 15, 38.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace

MIN_EF = 1.3
START_EF = 2.5  # a new item's E-Factor
PASSING = 3  # a grade below this restarts the repetitions
SAME_DAY_REPEAT_BELOW = 4  # a grade below this brings the card back in the same session
DEFAULT_MAX_INTERVAL = 36500  # days: Anki's default maximum interval (about 100 years)

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
    """What SM-2 keeps of a card; its next review is `interval` days after the last (the card's due date)."""

    repetitions: int = 0
    ef: float = START_EF
    interval: int = 0


def next_ef(ef: float, grade: int) -> float:
    miss = 5 - grade
    return max(MIN_EF, ef + 0.1 - miss * (0.08 + miss * 0.02))


def days_after(day: dt.date, days: int) -> dt.date:
    """`day` plus `days`, or the last date there is (9999-12-31) when the sum would pass it."""
    if days > (dt.date.max - day).days:
        return dt.date.max
    return day + dt.timedelta(days=days)


def check_max_interval(max_interval: int) -> int:
    """A maximum interval in whole days, 1 or more; ValueError otherwise."""
    if not isinstance(max_interval, int) or isinstance(max_interval, bool) or max_interval < 1:
        raise ValueError(f"the maximum interval must be a whole number of days, 1 or more (got {max_interval!r})")
    return max_interval


def review(state: SM2State, grade: int, today: dt.date, max_interval: int = DEFAULT_MAX_INTERVAL) -> SM2State:
    """The state after one graded review on `today`, no interval longer than `max_interval` days. No clock, no I/O.

    The next review is due `days_after(today, result.interval)`.
    """
    if not isinstance(grade, int) or isinstance(grade, bool) or not 0 <= grade <= 5:
        raise ValueError(f"grade must be an integer 0-5, got {grade!r}")
    check_max_interval(max_interval)
    if grade < PASSING:
        return replace(state, repetitions=0, interval=1)
    ef = next_ef(state.ef, grade)
    repetitions = state.repetitions + 1
    if repetitions == 1:
        interval = 1
    elif repetitions == 2:
        interval = 6
    else:
        # the last interval capped first: one imported from elsewhere may be too large for a float
        interval = math.ceil(round(min(state.interval, max_interval) * ef, 9))
    interval = min(interval, max_interval)
    return replace(state, repetitions=repetitions, ef=ef, interval=interval)


# One word each, for the grade bar of an 80-column terminal.
SHORT_MEANINGS = {0: "blackout", 1: "wrong", 2: "almost", 3: "hard", 4: "good", 5: "perfect"}
