"""`format_quantity`: a value shown for reading ("2.68 GB (2.50 GiB)", "3.35 TB/s", "12.5 ms", "6.74 billion")."""

from __future__ import annotations

import math

from drill.quantities.core import BINARY_BASE, BINARY_SYMBOLS, BYTE_SYMBOLS, FLOP_SYMBOLS, SI_BASE


def _sig(x: float, digits: int) -> str:
    """`x` to `digits` significant digits, without an exponent."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    rounded = float(f"{x:.{digits}g}")
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    return f"{rounded:.{decimals}f}"


def _scientific(value: float, digits: int) -> str:
    """`value` as a mantissa to `digits` significant digits and a power of ten: "6.35e27"."""
    mantissa, _, exponent = f"{value:.{digits - 1}e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def _scaled(value: float, base: float, symbols: list[str], digits: int, suffix: str = "") -> str:
    """`value` with the largest prefix that keeps its mantissa below `base`; past the last prefix, a power of ten."""
    power = 0
    mag = abs(value)
    while power < len(symbols) - 1 and (mag >= base ** (power + 1) or float(f"{mag / base**power:.{digits}g}") >= base):
        power += 1
    if float(f"{mag / base**power:.{digits}g}") >= base:  # beyond the largest prefix: "1.20e27 FLOP", not "1200 YFLOP"
        return f"{_scientific(value, digits)} {symbols[0]}{suffix}"
    return f"{_sig(value / base**power, digits)} {symbols[power]}{suffix}"


def _seconds(value: float, digits: int) -> str:
    mag = abs(value)
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if mag == 0 or float(f"{mag / scale:.{digits}g}") >= 1:
            return f"{_sig(value / scale, digits)} {name}"
    return f"{_sig(value / 1e-9, digits)} ns"


def _count(value: float, digits: int) -> str:
    """A count: "6.74 billion" with a scale word; below a million every digit of the integer part ("3,972").

    A count is never cut to fewer digits than its integer part has: 3,971.9 cut
    to three significant digits would read as an exact "3970".
    """
    mag = abs(value)
    for word, scale in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
        if float(f"{mag / scale:.{digits}g}") >= 1:
            return f"{_sig(value / scale, digits)} {word}"
    if value == int(value):
        return f"{int(value):,}"
    if mag >= 10 ** (digits - 1):  # the integer part has `digits` digits or more: keep them all
        return f"{round(value):,}"
    return _sig(value, digits)


def _fraction(value: float, digits: int) -> str:
    """A share of a whole as a percentage ("25%", "99.8%"); a ratio above one as a multiple ("2.00×", not "200%").

    As a percentage does, a multiple keeps the digits it was rounded to: 2 × 511/512 is "2.00×".
    """
    if abs(value) <= 1:
        return f"{_sig(value * 100, digits)}%"
    return f"{_sig(value, digits)}×"


def format_quantity(value: float, unit: str, *, digits: int = 3, alternate: bool = True) -> str:
    """Show a value of a dimension for reading: "2.68 GB (2.50 GiB)", "3.35 TB/s", "12.5 ms", "6.74 billion", "2.00×".

    With `alternate=False` only the first form is given; every form here reads
    back through `parse_quantity(..., expect=unit)`.
    """
    if not math.isfinite(value):
        return f"{value} {unit}"
    if unit == "bytes":
        si = _scaled(value, SI_BASE, BYTE_SYMBOLS, digits)
        if abs(value) < SI_BASE or not alternate:
            return si
        binary = _scaled(value, BINARY_BASE, BINARY_SYMBOLS, digits)
        return si if binary == si else f"{si} ({binary})"  # past both sets of prefixes both are "3.00e30 B"
    if unit == "bytes_per_second":
        return _scaled(value, SI_BASE, BYTE_SYMBOLS, digits, "/s")
    if unit == "flops":
        return _scaled(value, SI_BASE, FLOP_SYMBOLS, digits)
    if unit == "flop_per_second":
        return _scaled(value, SI_BASE, FLOP_SYMBOLS, digits, "/s")
    if unit == "flop_per_byte":
        return f"{_sig(value, digits)} FLOP/B"
    if unit == "fraction":
        return _fraction(value, digits)
    if unit == "seconds":
        return _seconds(value, digits)
    if unit == "count":
        return _count(value, digits)
    return f"{_sig(value, digits)} {unit}"
