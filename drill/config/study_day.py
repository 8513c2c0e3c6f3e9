"""Which study day it is: one answer for the review app and every command, from --today and the rollover hour.

A study day starts at the rollover hour (drill.config.settings.rollover_hour: a flag, the settings file, the
saved setting, the default 04:00): at 02:00 on the 10th it is still the 9th. `drill --today D` makes D the study
day whatever the hour, in the app as in `drill stats`, `drill plan` and `drill mock`: the app's clock is moved by
whole days so that its study day is D while its time still runs (answer times, a mock's countdown).
"""

from __future__ import annotations

import datetime as dt
from typing import Callable

from drill.study.session import study_day

Clock = Callable[[], dt.datetime]


def study_day_of(now: dt.datetime, rollover_hour: int, chosen: dt.date | None = None) -> dt.date:
    """The study day: `chosen` (--today) when given, at any hour; else the day `now` falls in under `rollover_hour`."""
    if chosen is not None:
        return chosen
    return study_day(now, rollover_hour)


def clock_on(chosen: dt.date | None, rollover_hour: int, system: Clock = dt.datetime.now) -> Clock:
    """The system clock, moved by whole days so that its study day is `chosen` (--today); unmoved when None.

    Moved by the study day rather than the calendar date: before the rollover hour the calendar date is
    already the next day's, so a clock moved to date D would read the study day D - 1.
    """
    if chosen is None:
        return system
    shift = chosen - study_day_of(system(), rollover_hour)

    def moved() -> dt.datetime:
        return system() + shift

    return moved
