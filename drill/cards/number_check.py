"""Checking a typed number against a card's expected answer, with hints that name the likely slip.

The hints cover the mistakes learners make most: a GB/GiB (or KB/KiB, TB/s
and TiB/s) mix-up, a bare number where a unit was needed, a percentage typed
without its sign, and an answer off by a whole prefix (1,000 or 1,024 times).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from drill.quantities import DIMENSION_WORDS, Quantity, QuantityError, format_quantity, parse_quantity
from drill.quantities.core import BINARY_BASE, BINARY_SYMBOLS, BYTE_SYMBOLS, SI_BASE

# How far from the expected value an answer may be, relative to it, unless a card says otherwise.
DEFAULT_TOLERANCE = 0.02


@dataclass(frozen=True)
class NumberVerdict:
    ok: bool
    parsed_value: float | None
    message: str


def _close(value: float, expected: float, tolerance: float) -> bool:
    if expected == 0:
        return abs(value) <= 1e-12
    return abs(value - expected) <= tolerance * abs(expected)


def _factor_text(system: str, power: int) -> str:
    if system == "si":
        return f"1e{3 * power}" if power != 1 else "1000"
    return f"2^{10 * power}"


def check_number(text: str, expected: float, unit: str, tolerance: float = DEFAULT_TOLERANCE) -> NumberVerdict:
    """Check a typed answer against `expected` (in the base unit of `unit`) within a relative tolerance."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite non-negative number, got {tolerance!r}")
    try:
        q = parse_quantity(text, expect=unit)
    except QuantityError as e:
        return NumberVerdict(False, None, str(e))
    want = format_quantity(expected, unit)
    if q.dimension is not None and q.dimension != unit:
        return NumberVerdict(
            False,
            q.value,
            f"{q.unit or 'that'} is {DIMENSION_WORDS.get(q.dimension, q.dimension)}, "
            f"but the answer is {DIMENSION_WORDS.get(unit, unit)}",
        )
    if _close(q.value, expected, tolerance):
        note = "; a bare number is read as bytes" if unit == "bytes" and q.dimension is None else ""
        return NumberVerdict(True, q.value, f"right: {want}{note}")
    hint = _hint(q, expected, unit, tolerance)
    gave = format_quantity(q.value, unit)
    if expected != 0:
        off = (q.value - expected) / abs(expected)
        gave += f" is {abs(off):.1%} {'above' if off > 0 else 'below'} the answer"
    else:
        gave += " is not 0"
    return NumberVerdict(False, q.value, f"{hint}{gave}")


def _hint(q: Quantity, expected: float, unit: str, tolerance: float) -> str:
    return (
        _prefix_family_hint(q, expected, tolerance)
        or _bare_number_hint(q, expected, unit, tolerance)
        or _off_by_prefix_hint(q, expected, tolerance)
    )


def _prefix_family_hint(q: Quantity, expected: float, tolerance: float) -> str:
    """The GB/GiB mix-up: the same digits with the other family's prefix would be right."""
    if not (q.system and q.power):
        return ""
    si = SI_BASE**q.power
    binary = BINARY_BASE**q.power
    mantissa = q.value / (si if q.system == "si" else binary)
    other = "binary" if q.system == "si" else "si"
    alt = mantissa * (binary if other == "binary" else si)
    if not _close(alt, expected, tolerance):
        return ""
    wrote = q.unit
    meant = (BINARY_SYMBOLS if other == "binary" else BYTE_SYMBOLS)[q.power]
    if "/" in wrote:
        meant += wrote[wrote.index("/") :]
    return (
        f"you wrote {wrote} ({_factor_text(q.system, q.power)}) but the value matches "
        f"{meant} ({_factor_text(other, q.power)}); "
    )


def _bare_number_hint(q: Quantity, expected: float, unit: str, tolerance: float) -> str:
    """A number without its unit that would be right with one."""
    if q.dimension is not None or q.value == 0:
        return ""
    if unit == "bytes":
        for power in range(1, 6):
            for symbols, base in ((BYTE_SYMBOLS, SI_BASE), (BINARY_SYMBOLS, BINARY_BASE)):
                if _close(q.value * base**power, expected, tolerance):
                    return f"a bare number is read as bytes; it matches {q.value:g} {symbols[power]}: add the unit; "
    if unit == "seconds":
        for name, scale in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
            if _close(q.value * scale, expected, tolerance):
                return f"a bare number is read as seconds; it matches {q.value:g} {name}: add the unit; "
    if unit == "fraction" and _close(q.value / 100, expected, tolerance):
        return f"a fraction is expected: write {q.value / 100:g} or {q.value:g}%; "
    return ""


def _off_by_prefix_hint(q: Quantity, expected: float, tolerance: float) -> str:
    """An answer a whole number of prefixes (1,000 or 1,024 times) away from the right one."""
    if q.value == 0 or expected == 0 or (q.value > 0) != (expected > 0):
        return ""
    for base in (SI_BASE, BINARY_BASE):
        steps = round(math.log(abs(q.value / expected), base))
        if steps and _close(q.value / base**steps, expected, tolerance):
            size = f"{base ** abs(steps):,.0f}"
            return f"{size} times too {'large' if steps > 0 else 'small'}: check the prefix; "
    return ""
