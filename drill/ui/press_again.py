"""A command that asks before it acts: the first press warns, a second press within a few seconds acts.

Quitting with work at stake (ctrl+q with an answer typed, or mid-mock) and ending a mock early both ask
this way, with the same words and the same pause, so the learner meets one rule everywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

AGAIN_S = 4.0  # a second press within this many seconds of the warning acts


@runtime_checkable
class AsksBeforeQuit(Protocol):
    """A screen whose work a quit would cut short: `quit_warning` says what (empty when nothing is at stake)."""

    def quit_warning(self) -> str: ...


class PressAgain:
    """One command's confirmation: `confirmed` is True for a press within AGAIN_S of the warning it gave."""

    def __init__(self, key: str, verb: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = key
        self.verb = verb
        self.clock = clock
        self._warned_at = float("-inf")

    def confirmed(self, notify: Callable[..., object], risk: str) -> bool:
        """True when this press follows the warning closely enough; otherwise warn (`risk`: what acting now
        would cost, a sentence) and return False."""
        now = self.clock()
        if now - self._warned_at <= AGAIN_S:
            self._warned_at = float("-inf")
            return True
        self._warned_at = now
        notify(f"{risk} Press {self.key} again to {self.verb}.", severity="warning", timeout=AGAIN_S)
        return False
