"""What timing uses of a kit, and what it measures of a GPU: the Protocols and the record that drill.judge.measure,
drill.judge.calibration, the kits' base (drill.judge.kitbase) and the kits share, with no import of any of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Self, TypedDict

if TYPE_CHECKING:
    import torch


class Event(Protocol):
    """A GPU event: torch.cuda.Event, the CuPy kit's stand-in, or a rank's host clock on the CPU."""

    def record(self) -> None: ...

    def synchronize(self) -> None: ...

    def elapsed_time(self, end: Self) -> float: ...


class TimedKit(Protocol):
    """What drill.judge.measure uses of a kit to time a launch."""

    event_overhead_ms: float

    def event(self) -> Event: ...

    def spin(self, cycles: int) -> None: ...

    def synchronize(self) -> None: ...

    def poison_outputs(self) -> None: ...

    def flush_l2(self) -> None: ...

    def flush_ms(self) -> float: ...

    def device_bytes(self, n: int) -> int: ...

    def stream_handle(self) -> int: ...


@dataclass(frozen=True)
class ReadWork:
    """The read ceiling's work on one buffer: the kit's own read of all of it, and a streaming kernel's arguments
    (the buffer, a one-element output, the count of float4s)."""

    read_all: Callable[[], None]
    kernel_args: tuple[object, ...]


class CeilingKit(TimedKit, Protocol):
    """What measuring this GPU's copy and read ceilings uses of a kit (drill.judge.measure)."""

    name: str
    sm_count: int

    def copy_work(self, n: int) -> Callable[[], object]: ...

    def read_work(self, n: int) -> ReadWork: ...


class MatmulKit(TimedKit, Protocol):
    """What measuring the matmul ceiling uses of torch's kit."""

    device: torch.device
    generator: torch.Generator


class Calibration(TypedDict, total=False):
    """One GPU's kept figures, as saved in the JSON file (each measurement fills its own part)."""

    gbps: float  # a device-to-device copy, bytes read + written
    ms: float
    bytes: int
    reps: int
    read_gbps: float  # the fastest pure read
    read_by: str
    event_us: float  # a CUDA event pair's own cost, taken off event-timed figures
    event_pair_us: float
    event_record_us: float
    event_us_why: str
    tflops: float  # the fastest torch.matmul (with a compute-bound card only)
    tflops_by: str
    fp8_tflops: float  # the fastest torch._scaled_mm with row-wise scales (with an FP8 card only, on FP8 hardware)
    fp8_tflops_by: str
    device: str
    measured_at: str
    method: str
    baselines: dict[str, list[float]]  # "card|shape|torch VERSION": [ms, host µs] of torch's own way
