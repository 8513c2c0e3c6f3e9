"""What both judge kits share (drill.judge.torch_kit with torch, drill.judge.cupy_kit with CuPy): the guard and
poison values, a check's result and a harness's launch. Imports neither torch nor CuPy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drill.judge.timed import Event

if TYPE_CHECKING:
    from drill.judge.measure import Measured

POISON = float("nan")  # outputs start as NaN: an element the kernel never wrote cannot pass
GUARD_ELEMENTS = 4096  # sentinel elements after each guarded buffer
OUTPUT_GUARD = -7.0e33  # what the space past an output holds; a kernel that writes there changes it
# Results this small are compared on the host: a copy costs microseconds, while each GPU operation a
# check uses for the first time loads its module (10-25 ms each on a cold judge, a dozen of them per check).
HOST_CHECK_ELEMENTS = 1 << 16


@dataclass
class Check:
    ok: bool
    message: str = ""
    max_error: float | None = None
    tolerance: float | None = None


@dataclass
class Launch:
    """What a harness returns for one input set: run() launches the learner's code; prepare() is untimed set-up."""

    run: Callable[[], object]
    result: Callable[[], object]
    prepare: Callable[[], object] = lambda: None


CheckResult = Check  # the name annotations use (inside a kit, `Check` is the attribute harnesses read)


def unravel(flat: int, shape: Sequence[int]) -> tuple[int, ...]:
    if not shape:
        return ()
    out = []
    for dim in reversed(shape):
        out.append(flat % dim)
        flat //= dim
    return tuple(reversed(out))


class Clocked:
    """The L2 flush and the timing both kits do the same way, on top of each kit's own `event`, `spin` and
    `_read_flush_buffer` (a read of a device buffer of float32 ones, twice the L2, made once)."""

    l2_bytes = 0
    event_overhead_ms = 0.0  # set from this GPU's calibration (drill.judge.measure.event_overhead)
    _drain_cycles = 0
    _flush_ms: float | None = None

    def event(self) -> Event:
        raise NotImplementedError

    def spin(self, cycles: int) -> None:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def poison_outputs(self) -> None:
        raise NotImplementedError

    def device_bytes(self, n: int) -> int:
        raise NotImplementedError

    def stream_handle(self) -> int:
        raise NotImplementedError

    def _read_flush_buffer(self) -> None:
        """Read every element of the kit's flush buffer."""
        raise NotImplementedError

    def flush_l2(self) -> None:
        """Push the inputs out of L2 by reading a buffer twice its size, then let memory settle.

        Reading, not writing: dirty lines left in L2 would be written back
        during the timed kernel and bill it for someone else's traffic. The
        dirty lines the read evicts (the last launch's outputs) are written
        back after it; a short spin lets that finish before the next launch.
        """
        self._read_flush_buffer()
        self.spin(self._drain_cycles)

    def flush_ms(self) -> float:
        """GPU milliseconds of one flush_l2 (measured once)."""
        if self._flush_ms is None:
            start = self.event()
            end = self.event()
            self.flush_l2()
            start.record()
            self.flush_l2()
            end.record()
            end.synchronize()
            self._flush_ms = float(start.elapsed_time(end))
        return self._flush_ms

    def measure(
        self,
        fn: Callable[[], object],
        prepare: Callable[[], object] | None = None,
        *,
        audit: bool = False,
        poison: bool = True,
        budget_s: float = 0.2,
        min_reps: int = 5,
        max_reps: int = 100,
    ) -> Measured:
        """GPU time of `fn` with the host kept out of it (see drill.judge.measure)."""
        from drill.judge.measure import measure

        return measure(
            self,
            fn,
            prepare,
            audit=audit,
            poison=poison,
            budget_s=budget_s,
            min_reps=min_reps,
            max_reps=max_reps,
        )
