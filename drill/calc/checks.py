"""Argument checks shared by the calculators: each raises ValueError naming the argument."""

from __future__ import annotations

import math
from collections.abc import Mapping


def number(name: str, value: object, *, minimum: float = 0.0, strict: bool = False) -> float:
    """A finite real number >= minimum (> minimum when strict)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if value < minimum or (strict and value == minimum):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {minimum:g}, got {value!r}")
    return value


def positive(name: str, value: object) -> float:
    return number(name, value, strict=True)


def non_negative(name: str, value: object) -> float:
    return number(name, value)


def fraction(name: str, value: object) -> float:
    """A share of a whole (a utilisation, a load ceiling): > 0 and at most 1."""
    share = positive(name, value)
    if share > 1:
        raise ValueError(f"{name} is a fraction, at most 1, got {value!r}")
    return share


def count(name: str, value: object, *, minimum: int = 1) -> int:
    """A whole number >= minimum; floats such as 64.0 pass, 6.5 does not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def choice(name: str, value: object, options: tuple[str, ...] | list[str]) -> str:
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(str, options))}; got {value!r}")
    return str(value)


def field(mapping: Mapping[str, object], key: str, what: str = "model") -> object:
    """A key of a model or GPU mapping, with a message naming the entry when it is missing."""
    try:
        return mapping[key]
    except (KeyError, TypeError):
        label = mapping.get("name", "?") if hasattr(mapping, "get") else "?"
        raise ValueError(f"{what} {label!r} has no {key!r}") from None
