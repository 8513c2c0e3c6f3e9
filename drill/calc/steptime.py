"""Step-time arithmetic for reading a profile: time left exposed by overlap, a loader pool's batch rate, the HBM
traffic of an elementwise chain run kernel by kernel or fused, and the GPU's idle share of a step."""

from __future__ import annotations

from collections.abc import Callable

from drill.calc import checks
from drill.calc.dtypes import dtype_bytes


def exposed_time(work: float, cover: float) -> float:
    """The part of `work` (communication, input loading) that `cover` (compute it can run under) does not hide.

    max(0, work − cover): work that overlaps perfectly with compute costs nothing until it outlasts the compute;
    past that, only the excess adds to the step. Work that does not overlap at all is exposed whole (cover 0).
    """
    busy = checks.non_negative("work", work)
    hidden_under = checks.non_negative("cover", cover)
    return max(0.0, busy - hidden_under)


def loader_batch_time(seconds_per_batch: float, workers: int) -> float:
    """Seconds between batches a pool of `workers` loader processes sustains, each building whole batches.

    PyTorch's DataLoader gives each worker whole batches in turn, so the pool delivers one batch every
    seconds_per_batch ÷ workers once its prefetch queue is primed (CPU cores permitting).
    """
    per_batch = checks.non_negative("seconds_per_batch", seconds_per_batch)
    pool = checks.count("workers", workers)
    return per_batch / pool


def overlapped_step_time(compute: float, loader: float) -> float:
    """Step time when the input pipeline runs ahead of the GPU: the slower of the two, max(compute, loader)."""
    return max(checks.non_negative("compute", compute), checks.non_negative("loader", loader))


def elementwise_chain_bytes(elements: int, kernels: int, dtype: str = "bf16", fused: bool = False) -> float:
    """HBM bytes of a chain of `kernels` one-input, one-output elementwise ops over `elements` values.

    Run kernel by kernel, every op reads its input from HBM and writes its output back: 2 × kernels × elements ×
    bytes. Fused into one kernel, the intermediates stay in registers: the chain reads its input once and writes
    its result once, 2 × elements × bytes, whatever its length.
    """
    n = checks.count("elements", elements)
    ops = checks.count("kernels", kernels)
    trips = 1 if fused else ops
    return 2.0 * trips * n * dtype_bytes(dtype)


def idle_fraction(busy: float, step: float) -> float:
    """The share of a step the GPU runs no kernel: 1 − busy ÷ step (the timeline's gaps over its length)."""
    span = checks.positive("step", step)
    kernels = checks.non_negative("busy", busy)
    if kernels > span:
        raise ValueError(f"busy ({busy!r}) cannot exceed the step ({step!r})")
    return 1.0 - kernels / span


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "exposed_time": exposed_time,
    "loader_batch_time": loader_batch_time,
    "overlapped_step_time": overlapped_step_time,
    "elementwise_chain_bytes": elementwise_chain_bytes,
    "idle_fraction": idle_fraction,
}
