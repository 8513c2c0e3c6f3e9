"""Mixture-of-experts: total and active parameters, and all-to-all bytes per layer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drill.calc.arguments import Command

# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., Any]] = {}


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
