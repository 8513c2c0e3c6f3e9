"""Size constants (GB, GiB, ...) and reading sizes and counts such as "1GiB" or "7.5B" for the calculators."""

from __future__ import annotations

import math

from drill import quantities

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40


def parse_quantity(text: str | float, *, count: bool = False) -> float:
    """Read "2.5e9", "1GiB", "800 KB" or "1,024" as a number of bytes, or with `count=True` as a count.

    The text is read by drill.quantities, as card answers are. With
    `count=True` (parameters, tokens) a trailing "B" means billions, as in
    "7.5B"; otherwise it means bytes, as in "512B". A unit of another
    dimension ("3 ms", "1 GiB" for a count) is refused with a ValueError.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a quantity: {text!r}")
    if isinstance(text, (int, float)):
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"not a finite quantity: {text!r}")
        return value
    expect = "count" if count else "bytes"
    q = quantities.parse_quantity(text, expect=expect)
    if q.dimension is not None and q.dimension != expect:
        words = quantities.DIMENSION_WORDS
        raise quantities.QuantityError(f"{text.strip()!r} is {words[q.dimension]}, not {words[expect]}")
    return q.value
