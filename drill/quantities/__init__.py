"""Quantities: reading the numbers people type ("2.5 GiB", "3.35 TB/s", "7B") and showing them.

This is the one reader of quantities in drill: `drill calc` arguments and card
answers go through the same `parse_quantity`, so a text means the same value
in both places.

Every quantity lives in the base unit of its dimension: bytes, FLOPs, seconds,
bytes per second, FLOPs per second, FLOPs per byte, a plain count, or a
fraction (0.5, also typed as 50%).

Prefixes follow the usual split: KB, MB, GB, TB, PB, EB are powers of 1000
(GB = 1e9 bytes); KiB, MiB, GiB, TiB, PiB, EiB are powers of 1024
(GiB = 2^30 bytes). Counts take k or K (thousand), M (million), B, b or bn
(billion) and T or t (trillion), as in "7B parameters". A trailing "B" is
bytes when a byte answer is expected and billions when a count is expected.
A lone "m", "G" or "g" is refused: it could be milli, minutes or million, and
GB or GiB.

A number is digits with an optional point and exponent (2.7e9); commas may
group thousands (1,024.5) and underscores may separate digits (32_768).
Powers and products are read too: 2^30, 2**30, 2.5 x 10^9, 4 * 1024.

A number without a unit is read in the base unit of the answer: bytes for a
byte answer, seconds for a time, a plain fraction for a fraction.
"""

from drill.quantities.core import (
    DIMENSION_WORDS,
    DIMENSIONS,
    MAX_INPUT,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    SECONDS_PER_MINUTE,
    Quantity,
    QuantityError,
)
from drill.quantities.formatting import format_quantity
from drill.quantities.parsing import parse_quantity

__all__ = [
    "DIMENSIONS",
    "DIMENSION_WORDS",
    "MAX_INPUT",
    "SECONDS_PER_DAY",
    "SECONDS_PER_HOUR",
    "SECONDS_PER_MINUTE",
    "Quantity",
    "QuantityError",
    "format_quantity",
    "parse_quantity",
]
