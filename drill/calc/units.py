"""Byte sizes of data types, size constants, and reading sizes and counts such as "1GiB" or "7.5B"."""

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

# Bytes per element. Sub-byte types pack two elements per byte.
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,  # stored as fp32; the tensor cores read 19 of the bits
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "int8": 1,
    "fp4": 0.5,
    "int4": 0.5,
    "nf4": 0.5,
}

_ALIASES = {
    "float64": "fp64",
    "double": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
}


def dtype_name(dtype: str) -> str:
    """The canonical name of a data type ("bfloat16" -> "bf16"); ValueError if unknown."""
    if not isinstance(dtype, str):
        raise ValueError(f"dtype must be a name such as 'bf16', not {dtype!r}")
    key = dtype.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}")
    return key


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of `dtype` (bf16 -> 2, int4 -> 0.5)."""
    value = DTYPE_BYTES[dtype_name(dtype)]
    return int(value) if float(value).is_integer() else value


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
