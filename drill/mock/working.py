"""Reading the figures out of a learner's written working ("KV per token 160 KiB, x 32 = 5 MiB") and finding
which of a numeric card's ledger steps it shows."""

from __future__ import annotations

import re
from collections.abc import Sequence

from drill.cards.number_check import DEFAULT_TOLERANCE, check_number
from drill.cards.template_records import ExpectedAnswer, LedgerTerm
from drill.mock.grading import LedgerGrade
from drill.quantities import format_quantity

# A number (digits with , or _ between them, a decimal part, an exponent) and the unit written after it, if any.
_FIGURE = re.compile(
    r"(?<![A-Za-z0-9.])(?P<number>\d[\d,_]*(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?:\s*(?P<unit>%|[A-Za-z]+(?:/s)?))?"
)


def figures(text: str) -> list[str]:
    """Each figure written in `text`, with its unit when one follows it ("160 KiB", "32", "1.2e15 FLOP")."""
    return [m.group(0).strip() for m in _FIGURE.finditer(text)]


def shows(text: str, value: float, unit: str, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """Whether some figure of `text` is `value` (in `unit`) within `tolerance`, read with its unit or bare."""
    for figure in figures(text):
        bare = _FIGURE.match(figure)
        readings = [figure] if bare is None else [figure, bare.group("number")]
        if any(check_number(r, value, unit, tolerance).ok for r in readings):
            return True
    return False


def grade_ledger(
    answers: Sequence[ExpectedAnswer],
    given: Sequence[str],
    ledger: Sequence[LedgerTerm],
    working: str,
    prompt: str,
    step_tolerance: float = DEFAULT_TOLERANCE,
) -> LedgerGrade:
    """The final answers checked as typed, and the ledger steps the working shows (each within
    `step_tolerance`). A step whose figure the question states is no step of the learner's and is left out."""
    right = 0
    missed: list[str] = []
    for expected, text in zip(answers, given):
        if check_number(text, expected.value, expected.unit, expected.tolerance).ok:
            right += 1
        else:
            missed.append(f"{expected.label}: {format_quantity(expected.value, expected.unit)}")
    steps = tuple(t.term for t in ledger if not shows(prompt, t.value, t.unit))
    shown = tuple(t.term for t in ledger if t.term in steps and shows(working, t.value, t.unit, step_tolerance))
    first = next((i for i, t in enumerate(ledger) if t.term in steps and t.term not in shown), None)
    return LedgerGrade(right, len(answers), shown, steps, tuple(missed), first)
