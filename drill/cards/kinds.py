"""The schema of each card kind: its own keys, their types, and an optional deeper check."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from drill.cards.model import Card

# The keys every card may carry. (name, type, required)
COMMON_FIELDS: dict[str, tuple[type | tuple[type, ...], bool]] = {
    "id": (str, True),
    "kind": (str, True),
    "topic": (str, True),
    "tags": (list, False),
    "prompt": (str, True),
    "answer": (str, True),
    "rubric": (list, False),
    "sources": (list, True),
    "follow_ups": (list, False),
}


@dataclass(frozen=True)
class KindSpec:
    """A card kind: extra keys (name -> (type, required)) and a deeper check.

    `checker` is a dotted "module:function" taking a Card and returning a list
    of messages; it is imported only when a deck of that kind is checked, so
    the loader stays light. `advisor` is the same for warnings: a card that
    works but could teach badly (the deck still loads it).
    """

    name: str
    fields: dict[str, tuple[type | tuple[type, ...], bool]] = field(default_factory=dict)
    checker: str | None = None
    advisor: str | None = None

    def check(self, card: Card) -> list[str]:
        return _call(self.checker, card)

    def advise(self, card: Card) -> list[str]:
        return _call(self.advisor, card)


def _call(dotted: str | None, card: Card) -> list[str]:
    if not dotted:
        return []
    module, _, func = dotted.partition(":")
    fn: Callable[[Card], list[str]] = getattr(importlib.import_module(module), func)
    return list(fn(card))


KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("concept"),
        KindSpec(
            "shape_trace",
            {"given": (str, True), "aliases": (dict, False), "steps": (list, True)},
            checker="drill.cards.checking:check_shape_card",
        ),
        KindSpec(
            "memory_ledger",
            {"params": (dict, True), "answers": (list, True), "ledger": (list, False)},
            checker="drill.cards.templating:check_ledger_card",
        ),
        KindSpec(
            "diagnosis",
            {"evidence": (str, True), "choices": (list, True), "correct": (str, True)},
            checker="drill.cards.checking:check_diagnosis_card",
            advisor="drill.cards.fairness:fairness_warnings",
        ),
        KindSpec(
            "kernel",
            {
                "language": (str, True),
                "starter": (str, True),
                "solution": (str, True),
                "writeup": (str, True),
                "harness": (str, True),
                "target_pct": ((int, float), True),
            },
            checker="drill.kernel.cards:check_kernel_card",
        ),
        KindSpec(
            "scenario",
            {"round": (str, True), "opening": (str, True), "params": (dict, False), "stages": (list, True)},
            checker="drill.cards.scenario_check:check_scenario_card",
        ),
    )
}


def type_name(t: type | tuple[type, ...]) -> str:
    names = {str: "text", list: "a list", dict: "a mapping", int: "an integer", float: "a number"}
    if isinstance(t, tuple):
        return "a number" if set(t) == {int, float} else " or ".join(names.get(x, x.__name__) for x in t)
    return names.get(t, t.__name__)


def describe(value: object) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false", type(None): "empty"}.get(
        type(value), type(value).__name__
    )
