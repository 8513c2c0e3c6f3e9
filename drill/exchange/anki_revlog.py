"""Anki's review log and drill's, side by side: answer buttons and grades, revlog ids and review times.

Anki answers with four buttons (ease 1-4), drill with six grades (0-5, drill.study.sm2).
The line between a lapse and a recall is the same in both: drill's pass line (3) is
Anki's Hard, as drill's FSRS ratings already say (drill.study.scheduling.GRADE_RATINGS).

    drill grade → Anki ease          Anki ease → drill grade
    0, 1, 2  → 1 Again               1 Again → 1 (wrong, familiar once shown)
    3        → 2 Hard                2 Hard  → 3 (right, hard)
    4        → 3 Good                3 Good  → 4 (right, hesitant)
    5        → 4 Easy                4 Easy  → 5 (perfect)

A review's time is its revlog id: milliseconds since the epoch. drill logs local time to
the second, so a review goes out at its second and comes back at the same second.
"""

from __future__ import annotations

import datetime as dt
import enum

GRADE_EASE: dict[int, int] = {0: 1, 1: 1, 2: 1, 3: 2, 4: 3, 5: 4}
EASE_GRADE: dict[int, int] = {1: 1, 2: 3, 3: 4, 4: 5}


class RevlogKind(enum.IntEnum):
    """revlog.type, as Anki numbers it."""

    LEARN = 0
    REVIEW = 1
    RELEARN = 2
    FILTERED = 3  # answered in a filtered deck, outside the card's schedule
    MANUAL = 4  # the learner set a due date; no answer
    RESCHEDULED = 5  # the scheduler moved the card; no answer


ANSWERED = frozenset({RevlogKind.LEARN, RevlogKind.REVIEW, RevlogKind.RELEARN, RevlogKind.FILTERED})


def revlog_id(reviewed_at: str) -> int:
    """The revlog id of a review drill logged at `reviewed_at` (local time, as drill keeps it)."""
    return int(dt.datetime.fromisoformat(reviewed_at).timestamp() * 1000)


def reviewed_at(revlog_id: int) -> str:
    """drill's reviewed_at for a revlog id: local time to the second."""
    return dt.datetime.fromtimestamp(revlog_id // 1000).isoformat(timespec="seconds")
