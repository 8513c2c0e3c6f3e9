"""Roofline: peak FLOP/s per dtype, the ridge point, and which side bounds a kernel's time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict

from drill.calc import checks
from drill.calc.dtypes import dtype_name

# dtype -> the GPU spec key of its dense tensor-core (or, for fp32, CUDA-core) peak.
PEAK_KEYS = {"bf16": "bf16_flops", "fp16": "bf16_flops", "fp8": "fp8_flops", "tf32": "tf32_flops", "fp32": "fp32_flops"}


def peak_flops(gpu: Mapping[str, object], dtype: str = "bf16") -> float:
    """Dense peak FLOP/s of `gpu` in `dtype` (fp16 runs at the bf16 rate)."""
    name = dtype_name(dtype)
    if name not in PEAK_KEYS:
        raise ValueError(f"no peak FLOP/s for dtype {dtype!r}; known: {', '.join(PEAK_KEYS)}")
    value = checks.field(gpu, PEAK_KEYS[name], "gpu")
    if value is None:
        raise ValueError(f"gpu {gpu.get('name', '?')!r} has no {name} tensor-core rate")
    return checks.positive(PEAK_KEYS[name], value)


def bandwidth(gpu: Mapping[str, object]) -> float:
    return checks.positive("hbm_bandwidth", checks.field(gpu, "hbm_bandwidth", "gpu"))


def ridge(gpu: Mapping[str, object], dtype: str = "bf16") -> float:
    """FLOP per byte at which compute time equals memory time (H100 BF16: 989e12 / 3.35e12 = 295)."""
    return peak_flops(gpu, dtype) / bandwidth(gpu)


class Roofline(TypedDict):
    """One kernel on the roofline: both times in seconds, the side that binds, FLOP per byte."""

    compute_s: float
    memory_s: float
    time_s: float
    bound: Literal["compute", "memory"]
    intensity: float


def roofline(gpu: Mapping[str, object], flops: float, bytes: float, dtype: str = "bf16") -> Roofline:
    """Compute time, memory time, the bound max of the two, and which side binds."""
    flops = checks.non_negative("flops", flops)
    traffic = checks.non_negative("bytes", bytes)
    compute_s = flops / peak_flops(gpu, dtype)
    memory_s = traffic / bandwidth(gpu)
    return {
        "compute_s": compute_s,
        "memory_s": memory_s,
        "time_s": max(compute_s, memory_s),
        "bound": "compute" if compute_s >= memory_s else "memory",
        "intensity": flops / traffic if traffic else float("inf"),
    }


def roofline_time(gpu: Mapping[str, object], flops: float, bytes: float, dtype: str = "bf16") -> float:
    """Lower bound on time: max(flops / peak, bytes / bandwidth)."""
    return roofline(gpu, flops, bytes, dtype)["time_s"]
