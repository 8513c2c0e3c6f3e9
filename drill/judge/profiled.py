"""Kernel times through torch.profiler: the judge's way where CUPTI cannot be loaded directly (`cupti`).

Imported only by the judge child; torch is imported when a profiler session is needed. The first profiler session
in a process spends seconds starting its own machinery, and can come back
without its GPU records, so a session is tried again.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch.autograd.profiler_util import FunctionEvent

LAUNCH_LABEL = "drill::timed_launch"


def profiler_times(
    fn: Callable[[], object], setup: Callable[[], None], reps: int, tries: int, why_not: str
) -> tuple[list[float] | None, bool, str]:
    """`_kernel_times` through torch.profiler, labelled ranges recorded on the GPU."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(tries):  # the first profiler session in a process can come back without its GPU records
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                setup()
                torch.cuda.synchronize()
                with record_function(LAUNCH_LABEL):
                    fn()
            torch.cuda.synchronize()
        events = prof.events()
        whole = launch_times(events, reps)
        if whole is not None:
            return whole, True, ""
    return _cpu_label_times(events, reps), False, f"{why_not}; " * bool(why_not) + _shortfall(events, reps)


def _shortfall(events: list[FunctionEvent], reps: int) -> str:
    """What the profiler gave back for the launches, when it was too little to time them."""
    from torch.autograd import DeviceType  # type: ignore[attr-defined]

    on_gpu = [e for e in events if e.device_type == DeviceType.CUDA]
    ranges = sum(1 for e in on_gpu if e.name == LAUNCH_LABEL)
    return f"of {reps} launches the profiler recorded {ranges} ranges on the GPU and {len(on_gpu) - ranges} GPU records"


def launch_times(events: list[FunctionEvent], reps: int) -> list[float] | None:
    """Per labelled launch, the summed duration (ms) of the GPU work (kernels, memsets, copies) inside it.

    The profiler records each labelled range on the GPU too; the work whose
    start falls inside a range is that launch's. (The CPU side of the label
    knows only the kernels CUPTI could tie to it, and it cannot tie a Triton
    launch: those showed no kernel time at all.) None unless most launches were seen.
    """
    from torch.autograd import DeviceType  # type: ignore[attr-defined]

    on_gpu = [e for e in events if e.device_type == DeviceType.CUDA]
    ranges = sorted((e.time_range.start, e.time_range.end) for e in on_gpu if e.name == LAUNCH_LABEL)
    work = sorted(
        (e.time_range.start, e.time_range.end - e.time_range.start) for e in on_gpu if e.name != LAUNCH_LABEL and e.name
    )
    times = []
    for start, end in ranges:
        total = sum(us for at, us in work if start <= at <= end)
        if total > 0:
            times.append(total / 1e3)
    return times if enough_launches(len(times), reps) and len(ranges) <= reps else None


def enough_launches(seen: int, reps: int) -> bool:
    """A few launches can come back without their records (now and then some are dropped): the median of
    the rest stands, as long as most launches were seen, and at least three."""
    return seen >= min(reps, max(3, (reps + 1) // 2))


def _cpu_label_times(events: list[FunctionEvent], reps: int) -> list[float] | None:
    """The device time of the kernels CUPTI tied to each label's CPU side (when the GPU side was not recorded)."""
    from torch.autograd import DeviceType  # type: ignore[attr-defined]

    times = [e.device_time_total / 1e3 for e in events if e.name == LAUNCH_LABEL and e.device_type == DeviceType.CPU]
    if len(times) != reps or statistics.median(times) <= 0:
        return None
    return times
