"""Checking the answers of shape_trace and diagnosis cards, the deeper deck checks of both kinds, and grade suggestion.

The work is split by job:

- drill.cards.shape_reading reads a typed shape into dimensions, and
  drill.cards.shapes spells them canonically (the rules for shapes are
  written there);
- drill.cards.shape_check checks a learner's shapes step by step and a
  shape_trace card for the deck check;
- drill.cards.choices checks a diagnosis answer and a diagnosis card;
- drill.cards.grading suggests an SM-2 grade.

This module gathers the names callers import.
"""

from __future__ import annotations

from drill.cards.choices import check_choice, check_diagnosis_card
from drill.cards.grading import QUICK_S, SLOW_S, suggest_grade
from drill.cards.shape_check import StepResult, check_shape_card, check_shape_steps
from drill.cards.shape_reading import OPERAND_END, OPERAND_START, ShapeError
from drill.cards.shapes import case_matters, normalise_shape

__all__ = [
    "OPERAND_END",
    "OPERAND_START",
    "QUICK_S",
    "SLOW_S",
    "ShapeError",
    "StepResult",
    "case_matters",
    "check_choice",
    "check_diagnosis_card",
    "check_shape_card",
    "check_shape_steps",
    "echoed",
    "normalise_shape",
    "suggest_grade",
]


def echoed(answer: str) -> str:
    """A learner's answer as a verdict line shows it: trimmed, each run of spaces one space (the log keeps it as
    typed)."""
    return " ".join(answer.split())
