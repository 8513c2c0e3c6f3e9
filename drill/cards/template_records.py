"""What rendering a parameterised card gives: its text, expected answers and ledger, or the problem that stops it."""

from __future__ import annotations

from dataclasses import dataclass


class TemplateProblem(ValueError):
    """A card template or expression that cannot be used; `where` names the part of the card."""

    def __init__(self, message: str, where: str = "") -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class ExpectedAnswer:
    label: str
    value: float
    unit: str
    tolerance: float


@dataclass(frozen=True)
class LedgerTerm:
    term: str
    formula: str
    value: float
    unit: str


@dataclass(frozen=True)
class Rendered:
    prompt: str
    answers: list[ExpectedAnswer]
    ledger: list[LedgerTerm]
    answer: str
