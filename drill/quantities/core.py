"""What a quantity is: its dimensions, the value type, and the unit symbols that reading and showing share."""

from __future__ import annotations

from dataclasses import dataclass

# Every dimension a quantity can have; card answers declare one of these as their unit.
DIMENSIONS: tuple[str, ...] = (
    "bytes",
    "count",
    "flops",
    "seconds",
    "flop_per_byte",
    "fraction",
    "bytes_per_second",
    "flop_per_second",
)

# How a dimension is named in a message ("12 ms is a time, but ...").
DIMENSION_WORDS = {
    "bytes": "bytes",
    "count": "a count",
    "flops": "FLOPs",
    "seconds": "a time",
    "flop_per_byte": "FLOP per byte",
    "fraction": "a fraction",
    "bytes_per_second": "bandwidth (bytes per second)",
    "flop_per_second": "throughput (FLOP per second)",
}

# The longest text read as a quantity.
MAX_INPUT = 200

# What one prefix step multiplies by: SI prefixes (k, M, G) by 1000, binary ones (Ki, Mi, Gi) by 1024.
SI_BASE = 1000.0
BINARY_BASE = 1024.0

# Time units in seconds.
SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0

# Symbols by prefix power: index 3 is giga, the last yotta (10^24; 2^80 for YiB).
BYTE_SYMBOLS = ["B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
BINARY_SYMBOLS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
FLOP_SYMBOLS = ["FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP", "YFLOP"]


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
