"""The `timing` event the judge sends, from the measurements."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from drill.judge.calibration import MATMUL_CEILING, compute_ceiling
from drill.kernel_shared.protocol import TimingEvent

if TYPE_CHECKING:
    from drill.judge.harness import Case, KernelHarness
    from drill.judge.measure import Measured


def laps(into: dict[str, float]) -> Callable[[str], None]:
    """A stopwatch: each call records the seconds since the previous one (or since it was made) under a name."""
    last = [time.perf_counter()]

    def lap(step: str) -> None:
        now = time.perf_counter()
        into[step] = now - last[0]
        last[0] = now

    return lap


def timing_event(
    name: str,
    harness: KernelHarness,
    case: Case,
    mine: Measured,
    base: tuple[float, float] | None,
    ceilings: dict[str, float],
    l2_bytes: int,
) -> TimingEvent:
    """The `timing` event: the figures, and the bytes that had to cross DRAM during the launch.

    A compute-bound card (`BOUND = "compute"` and `flops(case)` in its harness) is scored
    in TFLOPS against its measured compute ceiling (torch.matmul's, or the one its harness names:
    drill.judge.calibration.compute_ceiling); any other in GB/s against the copy ceiling.

    Outputs that fit in L2 can stay there past the end of the launch, so only
    the part of the writes beyond the L2 size must reach DRAM within it.
    """
    flops_fn = getattr(harness, "flops", None)
    flops = int(flops_fn(case)) if flops_fn is not None else 0
    compute = getattr(harness, "BOUND", "memory") == "compute"
    moved = int(harness.bytes_moved(case))
    written_fn = getattr(harness, "bytes_written", None)
    written = int(written_fn(case)) if written_fn is not None else 0
    dram = moved - written + max(0, written - l2_bytes)
    ms = mine.ms
    torch_ms = base[0] if base is not None else None  # None: timed after the verdict (a `torch_time` event)
    gbps = moved / (ms * 1e-3) / 1e9
    ceiling = ceilings["gbps"]
    tflops = flops / (ms * 1e-3) / 1e12 if flops else None
    held_to = compute_ceiling(harness) or MATMUL_CEILING
    ceiling_tflops = ceilings.get(held_to.key)
    if compute and tflops is not None:
        pct = 100.0 * tflops / ceiling_tflops if ceiling_tflops else None
    else:
        pct = 100.0 * gbps / ceiling if ceiling else None
    return {
        "event": "timing",
        "name": name,
        "ms": ms,
        "reps": mine.reps,
        "host_us": mine.host_us,
        "bytes": moved,
        "dram_bytes": dram,
        "gbps": gbps,
        "ceiling_gbps": ceiling,
        "read_ceiling_gbps": ceilings.get("read_gbps"),
        "pct_of_ceiling": pct,
        "bound": "compute" if compute else "memory",
        "flops": flops,
        "tflops": tflops,
        "ceiling_tflops": ceiling_tflops,
        "compute_ceiling": held_to.name,
        "compute_ceiling_by": held_to.by,
        "torch_tflops": flops / (torch_ms * 1e-3) / 1e12 if flops and torch_ms else None,
        "torch_ms": torch_ms,
        "torch_host_us": base[1] if base is not None else None,
        "torch_gbps": moved / (torch_ms * 1e-3) / 1e9 if torch_ms else None,
        "vs_torch": torch_ms / ms if torch_ms else None,
        "method": getattr(mine, "method", ""),
        "method_note": getattr(mine, "why", ""),
        "less_us": getattr(mine, "less_us", 0.0),
        "stray_work": getattr(mine, "stray_work", ""),
    }
