"""`parse_quantity`: a typed number with an optional unit, read into the base unit of its dimension."""

from __future__ import annotations

import math
import re

from drill.quantities.core import MAX_INPUT, Quantity, QuantityError
from drill.quantities.numbers import clean, read_number
from drill.quantities.unit_names import AMBIGUOUS, unit_readings


def parse_quantity(text: str, expect: str | None = None) -> Quantity:
    """Read `text` as a number with an optional unit; `expect` (a dimension) settles ambiguous units.

    The result may still have another dimension than `expect` ("12 ms" when
    bytes are expected): the caller decides what to say about that. Raises
    QuantityError (and nothing else) for text that is not a quantity.
    """
    if not isinstance(text, str):
        raise QuantityError("expected text")
    if len(text) > MAX_INPUT:
        raise QuantityError(f"answer longer than {MAX_INPUT} characters")
    cleaned = clean(text)
    if not cleaned:
        raise QuantityError("no number given")
    number, rest = read_number(cleaned, text)
    readings = unit_readings(rest)
    if not readings and expect == "count":  # "2300 tokens/s": a count asked for as a rate is read as that count
        rate = _PER_SECOND.fullmatch(rest)
        if rate is not None:
            readings = [r for r in unit_readings(rate["count"]) if r.dimension == "count"]
    if not readings:
        why = f": {AMBIGUOUS[rest]}" if rest in AMBIGUOUS else ""
        raise QuantityError(f"unknown unit {rest!r} in {text.strip()!r}{why}")
    choice = _pick(readings, expect)
    value = number * choice.value
    if not math.isfinite(value):
        raise QuantityError(f"the number {text.strip()!r} is too large")
    return Quantity(value, choice.dimension, choice.unit, choice.system, choice.power)


_PER_SECOND = re.compile(r"(?P<count>.+?)\s*(?:/\s*s(?:ec)?|\s+per\s+s(?:ec(?:ond)?)?)", re.IGNORECASE)


def _pick(readings: list[Quantity], expect: str | None) -> Quantity:
    """The reading in the expected dimension, else a bare scale, else the first."""
    if expect is None:
        return readings[0]
    for r in readings:
        if r.dimension == expect:
            return r
    for r in readings:
        if r.dimension is None:
            return r
    return readings[0]
