"""Reading the numbers a learner types ("2.5 GiB", "3.35 TB/s", "7B"), checking them, and showing quantities.

Every quantity lives in the base unit of its dimension: bytes, FLOPs, seconds,
bytes per second, FLOPs per second, FLOPs per byte, a plain count, or a
fraction (0.5, also typed as 50%).

Prefixes follow the usual split: KB, MB, GB, TB, PB are powers of 1000
(GB = 1e9 bytes); KiB, MiB, GiB, TiB, PiB are powers of 1024
(GiB = 2^30 bytes). Counts take K (thousand), M (million), B or bn (billion)
and T (trillion), as in "7B parameters". A trailing "B" is bytes when a byte
answer is expected and billions when a count is expected.

A number without a unit is read in the base unit of the answer: bytes for a
byte answer, seconds for a time, a plain fraction for a fraction.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# The units a card answer may declare (see docs/cards.md).
CARD_UNITS: tuple[str, ...] = (
    "bytes",
    "count",
    "flops",
    "seconds",
    "flop_per_byte",
    "fraction",
    "bytes_per_second",
    "flop_per_second",
)

_DIMENSION_WORDS = {
    "bytes": "bytes",
    "count": "a count",
    "flops": "FLOPs",
    "seconds": "a time",
    "flop_per_byte": "FLOP per byte",
    "fraction": "a fraction",
    "bytes_per_second": "bandwidth (bytes per second)",
    "flop_per_second": "throughput (FLOP per second)",
}

MAX_INPUT = 200


class QuantityError(ValueError):
    """Text that cannot be read as a number with a unit."""


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity.

    `value` is in the base unit of `dimension`; `dimension` is None for a bare
    number (possibly scaled by K/M/B/T), which fits any answer. `unit` is the
    unit as understood ("GiB", "TB/s", ""). For byte prefixes `system` is "si"
    or "binary" and `power` the prefix power (G: 3), so the GB/GiB mix-up can
    be recognised.
    """

    value: float
    dimension: str | None
    unit: str = ""
    system: str | None = None
    power: int = 0


@dataclass(frozen=True)
class NumberVerdict:
    ok: bool
    parsed_value: float | None
    message: str


# --- the number part ---------------------------------------------------------

_DECIMAL = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
_TERM = rf"(?:{_DECIMAL})(?:\s*(?:\^|\*\*)\s*[-+]?\d+)?"
_NUMBER = re.compile(rf"\s*(?P<sign>[-+])?\s*(?P<num>{_TERM}(?:\s*[x*]\s*{_TERM})*)")
_TERM_RE = re.compile(rf"(?P<base>{_DECIMAL})(?:\s*(?:\^|\*\*)\s*(?P<exp>[-+]?\d+))?")

_TRANSLATE = str.maketrans(
    {
        "\u00b5": "u",  # micro sign
        "\u03bc": "u",  # Greek mu
        "\u00d7": "x",  # multiplication sign
        "\u22c5": "*",  # dot operator
        "\u00b7": "*",  # middle dot
        "\u2212": "-",  # minus sign
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
    }
)


def _number_value(num: str) -> float:
    value = 1.0
    for term in re.split(r"\s*[x*]\s*(?=[\d.])", num):
        m = _TERM_RE.fullmatch(term.strip())
        if not m:
            raise QuantityError(f"cannot read the number {num!r}")
        base = float(m["base"].replace(",", ""))
        if m["exp"] is not None:
            exp = int(m["exp"])
            if abs(exp) > 400:
                raise QuantityError(f"the number {num!r} is too large")
            try:
                base = base**exp
            except (OverflowError, ZeroDivisionError) as e:
                raise QuantityError(f"cannot read the number {num!r}: {e}") from None
        value *= base
    if not math.isfinite(value):
        raise QuantityError(f"the number {num!r} is too large")
    return value


# --- the unit part -----------------------------------------------------------

_SI_PREFIX = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_PREFIX_WORDS = {"kilo": 1, "mega": 2, "giga": 3, "tera": 4, "peta": 5, "exa": 6}
_BINARY_WORDS = {"kibi": 1, "mebi": 2, "gibi": 3, "tebi": 4, "pebi": 5, "exbi": 6}
_COUNT_SCALE = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "B": 1e9,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "T": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}
_COUNT_WORDS = ("params", "parameters", "param", "tokens", "token", "elements", "elems", "ops")
_TIME = {
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "ms": 1e-3,
    "msec": 1e-3,
    "millisecond": 1e-3,
    "milliseconds": 1e-3,
    "us": 1e-6,
    "usec": 1e-6,
    "microsecond": 1e-6,
    "microseconds": 1e-6,
    "ns": 1e-9,
    "nsec": 1e-9,
    "nanosecond": 1e-9,
    "nanoseconds": 1e-9,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}
_COMPOUND = {
    ("bytes", "seconds"): "bytes_per_second",
    ("flops", "seconds"): "flop_per_second",
    ("flops", "bytes"): "flop_per_byte",
}

_BYTES_RE = re.compile(r"(?P<p>[kmgtpe]?)(?P<i>i?)(?:b|bytes?)", re.IGNORECASE)
_BYTES_WORD_RE = re.compile(r"(?P<w>[a-z]+?)bytes?", re.IGNORECASE)
_FLOP_RE = re.compile(r"(?P<p>[kmgtpe]?)(?:flop|flops)", re.IGNORECASE)
_FLOP_WORD_RE = re.compile(r"(?P<w>[a-z]+?)flops?", re.IGNORECASE)

_BYTE_SYMBOL = ["B", "KB", "MB", "GB", "TB", "PB", "EB"]
_BINARY_SYMBOL = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
_FLOP_SYMBOL = ["FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"]


def _simple_unit(text: str) -> list[Quantity]:
    """Every way to read a unit without a slash: its size in base units, its dimension, best reading first."""
    readings: list[Quantity] = []
    if text == "":
        return [Quantity(1.0, None)]
    if text == "%":
        return [Quantity(0.01, "fraction", "%")]
    if text in _COUNT_SCALE:
        readings.append(Quantity(_COUNT_SCALE[text], None, text))
    low = text.lower()
    if (m := _BYTES_RE.fullmatch(text)) and not (m["i"] and not m["p"]):  # a bare "iB" is nothing
        power = _SI_PREFIX[m["p"].lower()]
        if m["i"]:
            readings.insert(0, Quantity(1024.0**power, "bytes", _BINARY_SYMBOL[power], "binary", power))
        else:
            readings.insert(0, Quantity(1000.0**power, "bytes", _BYTE_SYMBOL[power], "si", power))
    elif m := _BYTES_WORD_RE.fullmatch(text):
        word = m["w"].lower()
        if word in _PREFIX_WORDS:
            p = _PREFIX_WORDS[word]
            readings.append(Quantity(1000.0**p, "bytes", _BYTE_SYMBOL[p], "si", p))
        elif word in _BINARY_WORDS:
            p = _BINARY_WORDS[word]
            readings.append(Quantity(1024.0**p, "bytes", _BINARY_SYMBOL[p], "binary", p))
    if m := _FLOP_RE.fullmatch(text):
        p = _SI_PREFIX[m["p"].lower()]
        readings.append(Quantity(1000.0**p, "flops", _FLOP_SYMBOL[p]))
        if low.endswith("flops"):
            # "TFLOPS" is often a rate; let the expected answer decide.
            readings.append(Quantity(1000.0**p, "flop_per_second", _FLOP_SYMBOL[p] + "/s"))
    elif (m := _FLOP_WORD_RE.fullmatch(text)) and m["w"].lower() in _PREFIX_WORDS:
        p = _PREFIX_WORDS[m["w"].lower()]
        readings.append(Quantity(1000.0**p, "flops", _FLOP_SYMBOL[p]))
    if low in _TIME:
        readings.append(Quantity(_TIME[low], "seconds", low))
    parts = text.split()
    if parts and parts[-1].lower() in _COUNT_WORDS and len(parts) <= 2:
        scale = 1.0 if len(parts) == 1 else _COUNT_SCALE.get(parts[0])
        if scale is not None:
            readings.append(Quantity(scale, "count", text))
    return readings


def _unit_readings(text: str) -> list[Quantity]:
    text = re.sub(r"\s+", " ", text.strip())
    if not re.search(r"/| per ", text):
        return _simple_unit(text)
    top, bottom = (part.strip() for part in re.split(r"\s*/\s*| per ", text, maxsplit=1))
    readings = []
    if bottom.lower() in ("byte", "bytes"):
        bottom = "B"
    for num in _simple_unit(top.strip()):
        for den in _simple_unit(bottom):
            if den.dimension not in ("seconds", "bytes") or (num.dimension, den.dimension) not in _COMPOUND:
                continue
            readings.append(
                Quantity(
                    num.value / den.value,
                    _COMPOUND[(num.dimension, den.dimension)],
                    f"{num.unit}/{den.unit}",
                    num.system,
                    num.power,
                )
            )
    return readings


def parse_quantity(text: str, expect: str | None = None) -> Quantity:
    """Read `text` as a number with an optional unit; `expect` (a card unit) settles ambiguous units.

    Raises QuantityError (and nothing else) for text that is not a quantity.
    """
    if not isinstance(text, str):
        raise QuantityError("expected text")
    if len(text) > MAX_INPUT:
        raise QuantityError(f"answer longer than {MAX_INPUT} characters")
    cleaned = text.translate(_TRANSLATE).replace("**", "^").strip()
    if not cleaned:
        raise QuantityError("no number given")
    m = _NUMBER.match(cleaned)
    if not m or not m["num"]:
        raise QuantityError(f"cannot read {text.strip()!r} as a number (e.g. 2.5 GiB, 2.7e9, 320 KiB, 50%)")
    if re.match(r"[\d,.]", cleaned[m.end() :].lstrip()):
        raise QuantityError(
            f"cannot read {text.strip()!r}: use a point for decimals and commas only between thousands (1,024.5)"
        )
    number = _number_value(m["num"])
    if m["sign"] == "-":
        number = -number
    rest = cleaned[m.end() :].strip()
    readings = _unit_readings(rest)
    if not readings:
        raise QuantityError(f"unknown unit {rest!r} in {text.strip()!r}")
    choice = _pick(readings, expect)
    value = number * choice.value
    if not math.isfinite(value):
        raise QuantityError(f"the number {text.strip()!r} is too large")
    return Quantity(value, choice.dimension, choice.unit, choice.system, choice.power)


def _pick(readings: list[Quantity], expect: str | None) -> Quantity:
    if expect is None:
        return readings[0]
    for r in readings:
        if r.dimension == expect:
            return r
    for r in readings:
        if r.dimension is None:
            return r
    return readings[0]


# --- checking ----------------------------------------------------------------


def _close(value: float, expected: float, tolerance: float) -> bool:
    if expected == 0:
        return abs(value) <= 1e-12
    return abs(value - expected) <= tolerance * abs(expected)


def _factor_text(system: str, power: int) -> str:
    if system == "si":
        return f"1e{3 * power}" if power != 1 else "1000"
    return f"2^{10 * power}"


def check_number(text: str, expected: float, unit: str, tolerance: float = 0.02) -> NumberVerdict:
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
            f"{q.unit or 'that'} is {_DIMENSION_WORDS.get(q.dimension, q.dimension)}, "
            f"but the answer is {_DIMENSION_WORDS.get(unit, unit)}",
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
    if q.system and q.power:
        si, binary = 1000.0**q.power, 1024.0**q.power
        mantissa = q.value / (si if q.system == "si" else binary)
        other = "binary" if q.system == "si" else "si"
        alt = mantissa * (binary if other == "binary" else si)
        if _close(alt, expected, tolerance):
            wrote = q.unit
            meant = (_BINARY_SYMBOL if other == "binary" else _BYTE_SYMBOL)[q.power]
            if "/" in wrote:
                meant += wrote[wrote.index("/") :]
            return (
                f"you wrote {wrote} ({_factor_text(q.system, q.power)}) but the value matches "
                f"{meant} ({_factor_text(other, q.power)}); "
            )
    if q.dimension is None and q.value != 0:
        if unit == "bytes":
            for power in range(1, 6):
                for symbols, base in ((_BYTE_SYMBOL, 1000.0), (_BINARY_SYMBOL, 1024.0)):
                    if _close(q.value * base**power, expected, tolerance):
                        return f"a bare number is read as bytes; it matches {q.value:g} {symbols[power]}: add the unit; "
        if unit == "seconds":
            for name, scale in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
                if _close(q.value * scale, expected, tolerance):
                    return f"a bare number is read as seconds; it matches {q.value:g} {name}: add the unit; "
        if unit == "fraction" and _close(q.value / 100, expected, tolerance):
            return f"a fraction is expected: write {q.value / 100:g} or {q.value:g}%; "
    if q.value != 0 and expected != 0 and (q.value > 0) == (expected > 0):
        for base in (1000.0, 1024.0):
            steps = round(math.log(abs(q.value / expected), base))
            if steps and _close(q.value / base**steps, expected, tolerance):
                size = f"{base**abs(steps):,.0f}"
                return f"{size} times too {'large' if steps > 0 else 'small'}: check the prefix; "
    return ""


# --- formatting ----------------------------------------------------------------


def _sig(x: float, digits: int) -> str:
    """`x` to `digits` significant digits, without an exponent."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    rounded = float(f"{x:.{digits}g}")
    decimals = max(digits - 1 - math.floor(math.log10(abs(rounded))), 0)
    return f"{rounded:.{decimals}f}"


def _scaled(value: float, base: float, symbols: list[str], digits: int, suffix: str = "") -> str:
    power = 0
    mag = abs(value)
    while power < len(symbols) - 1 and (
        mag >= base ** (power + 1) or float(f"{mag / base**power:.{digits}g}") >= base
    ):
        power += 1
    return f"{_sig(value / base**power, digits)} {symbols[power]}{suffix}"


def format_quantity(value: float, unit: str, *, digits: int = 3, alternate: bool = True) -> str:
    """Show a value of a card unit for reading: "2.68 GB (2.50 GiB)", "3.35 TB/s", "12.5 ms", "6.74 billion".

    With `alternate=False` only the first form is given; every form here reads
    back through `parse_quantity(..., expect=unit)`.
    """
    if not math.isfinite(value):
        return f"{value} {unit}"
    if unit == "bytes":
        si = _scaled(value, 1000.0, _BYTE_SYMBOL, digits)
        if abs(value) < 1000 or not alternate:
            return si
        return f"{si} ({_scaled(value, 1024.0, _BINARY_SYMBOL, digits)})"
    if unit == "bytes_per_second":
        return _scaled(value, 1000.0, _BYTE_SYMBOL, digits, "/s")
    if unit == "flops":
        return _scaled(value, 1000.0, _FLOP_SYMBOL, digits)
    if unit == "flop_per_second":
        return _scaled(value, 1000.0, _FLOP_SYMBOL, digits, "/s")
    if unit == "flop_per_byte":
        return f"{_sig(value, digits)} FLOP/B"
    if unit == "fraction":
        return f"{_sig(value * 100, digits)}%"
    if unit == "seconds":
        mag = abs(value)
        for name, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
            if mag == 0 or float(f"{mag / scale:.{digits}g}") >= 1:
                return f"{_sig(value / scale, digits)} {name}"
        return f"{_sig(value / 1e-9, digits)} ns"
    if unit == "count":
        mag = abs(value)
        for word, scale in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
            if float(f"{mag / scale:.{digits}g}") >= 1:
                return f"{_sig(value / scale, digits)} {word}"
        if value == int(value):
            return f"{int(value):,}"
        return _sig(value, digits)
    return f"{_sig(value, digits)} {unit}"
