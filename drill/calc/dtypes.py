"""Data types by name ("bf16", "bfloat16", "int4") and the bytes one element of each takes."""

from __future__ import annotations

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
