"""Checking a shape_trace card: the learner's shapes step by step, and the card itself for the deck check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from drill.cards.field_values import mapping, mappings
from drill.cards.model import Card
from drill.cards.shape_reading import ShapeError
from drill.cards.shapes import accepted_shapes, canonical_dim, case_matters, normalise_shape


@dataclass(frozen=True)
class StepResult:
    label: str
    expected: str
    given: str
    ok: bool


def check_shape_steps(card: Card, answers: Sequence[str]) -> list[StepResult]:
    """Each step of a shape_trace card against the learner's answer for it (missing answers are wrong).

    A step accepts its `shape` or any shape in its optional `also` list (the
    same tensor under another convention, e.g. a per-channel scale as (N)
    or (N, 1)); `expected` reports the `shape`.
    """
    aliases = mapping(card.fields.get("aliases"))
    fold = not case_matters(card)
    results = []
    for i, step in enumerate(mappings(card.fields.get("steps"))):
        expected = str(step["shape"])
        given = answers[i] if i < len(answers) else ""
        ok = False
        if given.strip():
            try:
                typed = normalise_shape(given, aliases, fold_case=fold)
                ok = any(typed == normalise_shape(s, aliases, fold_case=fold) for s in accepted_shapes(step))
            except ShapeError:
                ok = False
        results.append(StepResult(str(step["label"]), expected, given, ok))
    return results


def check_shape_card(card: Card) -> list[str]:
    """Problems of a shape_trace card beyond field presence and types."""
    problems: list[str] = []
    given = card.fields.get("given")
    if not isinstance(given, str) or not given.strip():
        problems.append("`given` must be non-empty text")
    aliases = card.fields.get("aliases") or {}
    seen: dict[str, str] = {}
    if not isinstance(aliases, dict):
        problems.append("`aliases` must map a symbol to a list of other spellings")
        aliases = {}
    for symbol, spellings in aliases.items():
        if isinstance(spellings, str):
            spellings = [spellings]
        if not isinstance(symbol, str) or not isinstance(spellings, list) or not spellings:
            problems.append(f"aliases.{symbol}: expected a symbol with a list of spellings")
            continue
        try:
            target = canonical_dim(symbol)
        except ShapeError as e:
            problems.append(f"aliases.{symbol}: {e}")
            continue
        for spelling in spellings:
            if not isinstance(spelling, str) or not spelling.strip():
                problems.append(f"aliases.{symbol}: spellings must be non-empty text, got {spelling!r}")
                continue
            try:
                canonical = canonical_dim(spelling)
            except ShapeError as e:
                problems.append(f"aliases.{symbol}: {spelling!r}: {e}")
                continue
            if canonical == target:
                problems.append(f"aliases.{symbol}: {spelling!r} is the symbol itself")
            elif canonical in seen and seen[canonical] != target:
                problems.append(f"aliases: {spelling!r} stands for both {seen[canonical]!r} and {target!r}")
            seen[canonical] = target
    steps = card.fields.get("steps")
    if not isinstance(steps, list) or not steps:
        return problems + ["`steps` needs at least one step"]
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(f"{where}: expected a mapping with `label` and `shape`")
            continue
        for key in step:
            if key not in ("label", "shape", "also"):
                problems.append(f"{where}: unknown key {key!r} (expected label, shape, also)")
        label = step.get("label")
        shape = step.get("shape")
        if not isinstance(label, str) or not label.strip():
            problems.append(f"{where}: `label` must be non-empty text")
        if not isinstance(shape, str) or not shape.strip():
            problems.append(f'{where}: `shape` must be non-empty text (quote it: "(4096)")')
            continue
        main: tuple[str, ...] | None
        try:
            main = normalise_shape(shape, aliases if not problems else None)
        except ShapeError as e:
            problems.append(f"{where}.shape: {e}")
            main = None
        if "also" in step:
            problems += _check_also(step["also"], main, where, aliases if not problems else None)
    return problems


def _check_also(
    also: object, main: tuple[str, ...] | None, where: str, aliases: Mapping[str, object] | None
) -> list[str]:
    """Problems of a step's `also` list: non-empty shape texts, readable, none a repeat of the step's shape."""
    if not isinstance(also, list) or not also:
        return [f'{where}: `also` must be a non-empty list of other accepted shapes (e.g. also: ["(N, 1)"])']
    problems: list[str] = []
    seen = {main} if main is not None else set()
    for j, other in enumerate(also):
        if not isinstance(other, str) or not other.strip():
            problems.append(f'{where}.also[{j}]: must be non-empty text (quote it: "(4096)")')
            continue
        try:
            dims = normalise_shape(other, aliases)
        except ShapeError as e:
            problems.append(f"{where}.also[{j}]: {e}")
            continue
        if dims in seen:
            problems.append(f"{where}.also[{j}]: {other!r} repeats a shape the step already accepts")
        seen.add(dims)
    return problems
