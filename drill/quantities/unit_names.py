"""Reading the unit after a number: every way a unit text can be understood, best reading first.

A reading is a Quantity of the number 1 in that unit: "GiB" reads as 2^30
bytes, "ms" as 0.001 seconds, "B" as a byte or as a billion. The reader of
quantities picks among the readings by the dimension the answer expects.
"""

from __future__ import annotations

import re

from drill.quantities.core import (
    BINARY_BASE,
    BINARY_SYMBOLS,
    BYTE_SYMBOLS,
    FLOP_SYMBOLS,
    SECONDS_PER_HOUR,
    SECONDS_PER_MINUTE,
    SI_BASE,
    Quantity,
)

_SI_PREFIX = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6, "z": 7, "y": 8}
_PREFIX_WORDS = {"kilo": 1, "mega": 2, "giga": 3, "tera": 4, "peta": 5, "exa": 6, "zetta": 7, "yotta": 8}
_BINARY_WORDS = {"kibi": 1, "mebi": 2, "gibi": 3, "tebi": 4, "pebi": 5, "exbi": 6, "zebi": 7, "yobi": 8}
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
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
}
# What a count may name after its number ("64 sequences", "7.5B params"): read as a count of it.
_COUNT_WORDS = (
    *("params", "parameters", "param", "tokens", "token", "toks", "tok", "elements", "elems", "ops"),
    *("sequences", "sequence", "seqs", "seq", "requests", "request", "reqs", "req", "samples", "sample"),
    *("experts", "expert", "gpus", "gpu", "layers", "layer", "steps", "step", "microbatches", "microbatch"),
)
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
    "min": SECONDS_PER_MINUTE,
    "mins": SECONDS_PER_MINUTE,
    "minute": SECONDS_PER_MINUTE,
    "minutes": SECONDS_PER_MINUTE,
    "h": SECONDS_PER_HOUR,
    "hr": SECONDS_PER_HOUR,
    "hrs": SECONDS_PER_HOUR,
    "hour": SECONDS_PER_HOUR,
    "hours": SECONDS_PER_HOUR,
}
_COMPOUND: dict[tuple[str | None, str | None], str] = {
    ("bytes", "seconds"): "bytes_per_second",
    ("flops", "seconds"): "flop_per_second",
    ("flops", "bytes"): "flop_per_byte",
}

# Units that are refused because they mean different things to different people.
AMBIGUOUS = {
    "m": "write M for million, ms for milliseconds or min for minutes",
    "G": "write GB (10^9 bytes), GiB (2^30 bytes) or B for billions",
    "g": "write GB (10^9 bytes), GiB (2^30 bytes) or B for billions",
}

_BYTES_RE = re.compile(r"(?P<p>[kmgtpezy]?)(?P<i>i?)(?:b|bytes?)", re.IGNORECASE)
_BYTES_WORD_RE = re.compile(r"(?P<w>[a-z]+?)bytes?", re.IGNORECASE)
_FLOP_RE = re.compile(r"(?P<p>[kmgtpezy]?)(?:flop|flops)", re.IGNORECASE)
_FLOP_WORD_RE = re.compile(r"(?P<w>[a-z]+?)flops?", re.IGNORECASE)


def _byte_readings(text: str) -> list[Quantity]:
    if (m := _BYTES_RE.fullmatch(text)) and not (m["i"] and not m["p"]):  # a bare "iB" is nothing
        power = _SI_PREFIX[m["p"].lower()]
        if m["i"]:
            return [Quantity(BINARY_BASE**power, "bytes", BINARY_SYMBOLS[power], "binary", power)]
        return [Quantity(SI_BASE**power, "bytes", BYTE_SYMBOLS[power], "si", power)]
    if m := _BYTES_WORD_RE.fullmatch(text):
        word = m["w"].lower()
        if word in _PREFIX_WORDS:
            p = _PREFIX_WORDS[word]
            return [Quantity(SI_BASE**p, "bytes", BYTE_SYMBOLS[p], "si", p)]
        if word in _BINARY_WORDS:
            p = _BINARY_WORDS[word]
            return [Quantity(BINARY_BASE**p, "bytes", BINARY_SYMBOLS[p], "binary", p)]
    return []


def _flop_readings(text: str) -> list[Quantity]:
    if m := _FLOP_RE.fullmatch(text):
        p = _SI_PREFIX[m["p"].lower()]
        readings = [Quantity(SI_BASE**p, "flops", FLOP_SYMBOLS[p])]
        if text.lower().endswith("flops"):
            # "TFLOPS" is often a rate; let the expected answer decide.
            readings.append(Quantity(SI_BASE**p, "flop_per_second", FLOP_SYMBOLS[p] + "/s"))
        return readings
    if (m := _FLOP_WORD_RE.fullmatch(text)) and m["w"].lower() in _PREFIX_WORDS:
        p = _PREFIX_WORDS[m["w"].lower()]
        return [Quantity(SI_BASE**p, "flops", FLOP_SYMBOLS[p])]
    return []


def _simple_unit(text: str) -> list[Quantity]:
    """Every way to read a unit without a slash."""
    if text == "":
        return [Quantity(1.0, None)]
    if text == "%":
        return [Quantity(0.01, "fraction", "%")]
    if text in ("x", "×"):  # "2.81x": a multiple, the fraction it is (2.81 = 281 %)
        return [Quantity(1.0, "fraction", "×")]
    readings = _byte_readings(text)
    if text in _COUNT_SCALE:
        readings.append(Quantity(_COUNT_SCALE[text], None, text))
    readings += _flop_readings(text)
    if text.lower() in _TIME:
        readings.append(Quantity(_TIME[text.lower()], "seconds", text.lower()))
    parts = text.split()
    if parts and parts[-1].lower() in _COUNT_WORDS and len(parts) <= 2:
        scale = 1.0 if len(parts) == 1 else _COUNT_SCALE.get(parts[0])
        if scale is not None:
            readings.append(Quantity(scale, "count", text))
    return readings


def unit_readings(text: str) -> list[Quantity]:
    """Every way to read the unit `text` ("GiB", "TB/s", "FLOP per byte", ""), best first; empty if none."""
    text = re.sub(r"\s+", " ", text.strip())
    if not re.search(r"/| per ", text):
        return _simple_unit(text)
    top, bottom = (part.strip() for part in re.split(r"\s*/\s*| per ", text, maxsplit=1))
    readings = []
    if bottom.lower() in ("byte", "bytes"):
        bottom = "B"
    for num in _simple_unit(top):
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
