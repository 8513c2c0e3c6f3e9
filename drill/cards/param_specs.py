"""A card's parameters: checking their specs and drawing values (models and GPUs by name, choices, ranges)."""

from __future__ import annotations

import keyword
import math
import random
import re
from collections.abc import Mapping

from drill.cards.field_values import items
from drill.cards.model import Card
from drill.cards.template_records import TemplateProblem

PARAM_KINDS = ("model", "gpu", "choices", "range")
MAX_PARAMS = 50  # a card with more parameters than this is a mistake, and checking it would take minutes
MAX_CHOICES = 1000
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def spec_problem(name: object, spec: object) -> str | None:
    """Why the parameter `name` with `spec` cannot be used; None when it can."""
    if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name):
        return f"parameter name {name!r} must be a plain identifier (letters, digits, _; no leading _)"
    if not isinstance(spec, dict):
        return f"params.{name}: expected a mapping such as {{choices: [...]}}, got {type(spec).__name__}"
    kinds = [k for k in spec if k in PARAM_KINDS]
    if len(kinds) != 1:
        return f"params.{name}: needs exactly one of {', '.join(PARAM_KINDS)}"
    kind = kinds[0]
    extra = set(spec) - {kind} - ({"step"} if kind == "range" else set())
    if extra:
        return f"params.{name}: unknown key {min(map(str, extra))!r}"
    values = spec[kind]
    if kind in ("model", "gpu"):
        if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
            return f"params.{name}: `{kind}` needs a non-empty list of {kind} names"
        if len(values) > MAX_CHOICES:
            return f"params.{name}: {len(values)} {kind} names; at most {MAX_CHOICES}"
    elif kind == "choices":
        if not isinstance(values, list) or not values:
            return f"params.{name}: `choices` needs a non-empty list"
        if len(values) > MAX_CHOICES:
            return f"params.{name}: {len(values)} choices; at most {MAX_CHOICES} (use a `range` for many numbers)"
        if not all(isinstance(v, (int, float, str)) for v in values):
            return f"params.{name}: choices must be numbers, text or true/false"
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return f"params.{name}: choices must be finite"
    else:
        step = spec.get("step", 1)
        if (
            not isinstance(values, list)
            or len(values) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        ):
            return f"params.{name}: `range` needs two integers [low, high]"
        if values[0] > values[1]:
            return f"params.{name}: range low {values[0]} is above high {values[1]}"
        if not isinstance(step, int) or isinstance(step, bool) or step < 1:
            return f"params.{name}: `step` must be a positive integer"
        if max(abs(values[0]), abs(values[1])) > 10**15:
            return f"params.{name}: range bounds beyond 10^15"
    return None


def card_params(card: Card) -> dict[str, dict[str, object]]:
    """The card's parameter specs; raises TemplateProblem on the first bad one."""
    params = card.fields.get("params") or {}
    if not isinstance(params, dict):
        raise TemplateProblem("`params` must be a mapping", "params")
    if len(params) > MAX_PARAMS:
        raise TemplateProblem(f"{len(params)} parameters; a card may have at most {MAX_PARAMS}", "params")
    for name, spec in params.items():
        problem = spec_problem(name, spec)
        if problem:
            raise TemplateProblem(problem, "params")
    return params


def _range(spec: Mapping[str, object]) -> tuple[int, int, int]:
    """A checked range spec's low end, high end and step."""
    bounds = [int(v) for v in items(spec["range"]) if isinstance(v, int)]
    step = spec.get("step", 1)
    return bounds[0], bounds[1], step if isinstance(step, int) else 1


def options(spec: Mapping[str, object]) -> list[object]:
    """The values worth trying in a deck check: every listed option, or both ends of a range."""
    if "range" in spec:
        low, high, step = _range(spec)
        return [low, low + step * ((high - low) // step)]
    kind = next(k for k in PARAM_KINDS if k in spec)
    return items(spec[kind])


def _draw_one(spec: Mapping[str, object], rng: random.Random) -> object:
    if "range" in spec:
        low, high, step = _range(spec)
        return low + step * rng.randrange((high - low) // step + 1)
    kind = next(k for k in PARAM_KINDS if k in spec)
    return rng.choice(items(spec[kind]))


def draw_params(card: Card, rng: random.Random) -> dict[str, object]:
    """A fresh draw of the card's parameters: plain numbers and text (models and GPUs by name)."""
    return {name: _draw_one(spec, rng) for name, spec in card_params(card).items()}
