"""Suggesting an SM-2 grade from what was checked and how long the answer took."""

from __future__ import annotations

import math

QUICK_S = 60.0
SLOW_S = 180.0


def suggest_grade(fraction_correct: float, seconds: float, *, quick_s: float = QUICK_S, slow_s: float = SLOW_S) -> int:
    """An SM-2 grade (0-5) suggested from what was checked; the learner confirms or overrides it.

    All correct within `quick_s` seconds: 5 (perfect). All correct within
    `slow_s`: 4 (correct after some thought). All correct but slower than
    `slow_s`: 3 (correct with serious difficulty). Partly correct: 3.
    Nothing correct: 1.
    """
    for name, value in (("fraction_correct", fraction_correct), ("seconds", seconds)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not 0 <= fraction_correct <= 1:
        raise ValueError(f"fraction_correct must be between 0 and 1, got {fraction_correct!r}")
    if seconds < 0 or not 0 <= quick_s <= slow_s:
        raise ValueError("seconds must be >= 0 and 0 <= quick_s <= slow_s")
    if fraction_correct >= 1 - 1e-9:
        if seconds <= quick_s:
            return 5
        return 4 if seconds <= slow_s else 3
    if fraction_correct > 1e-9:
        return 3
    return 1
