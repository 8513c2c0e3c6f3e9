"""The harnesses' tools without torch: the kit a CUDA card is judged with when CuPy is installed.

Imported only by the judge child. A CUDA card's harness needs device arrays,
random inputs, float64 references and the GPU's clock, and none of torch's
kernels; `import torch` is most of a cold judge's start (about 2 s on an
H100 host, against about 0.3 s for CuPy). So a judge whose first run is a CUDA
card judges it with this kit (a GPU new to drill has its ceilings measured with
it too), and imports torch only if it must: to time torch's own way of doing
the card once, after the verdict is sent (kept per GPU), or for a Triton card.

The same tools as drill.judge.torch_kit.Kit, with the same guarantees: inputs
fresh each run with a NaN guard after them, outputs poisoned with a guard
zone checked after every run, NaN never passes a check, results up to
HOST_CHECK_ELEMENTS compared on the host. `xp` is the array module: CuPy
here; the tests give NumPy to check the comparisons on a CPU. On the device,
larger arrays are filled, summed and compared by drill's own small CUDA
module (drill.judge.cupy_ops), not CuPy's operations, each of which is
compiled the first time it is used.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from drill.judge.kitbase import (
    GUARD_ELEMENTS,
    HOST_CHECK_ELEMENTS,
    OUTPUT_GUARD,
    POISON,
    Check,
    CheckResult,
    Clocked,
    Launch,
    unravel,
)
from drill.judge.timed import ReadWork
from drill.words import counted

if TYPE_CHECKING:
    from drill.judge.cupy_ops import RawOps, Stats
    from drill.judge.cupy_types import ArrayModule, DeviceArray, DTypeLike, HostArray, RawKernel

SPIN_SOURCE = r"""
extern "C" __global__ void drill_spin(long long cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


class CupyKit(Clocked):
    """One per judge process, for CUDA cards on a GPU (see the module's words)."""

    Launch = Launch
    Check = Check
    name = "cupy"
    torch = None  # harnesses of CUDA cards use the kit's own tools; torch is the other kit's
    gpu = True

    def __init__(self, xp: ArrayModule | None = None) -> None:
        if xp is None:
            import cupy

            xp = cast("ArrayModule", cupy)
        self.xp = xp
        self._device = xp is not cast(object, np)
        self.ops: RawOps | None = None  # drill's CUDA module for large arrays (the device only)
        if self._device:
            from drill.judge.cupy_ops import RawOps

            props = xp.cuda.runtime.getDeviceProperties(0)
            self.sm_count = int(props["multiProcessorCount"])
            self.l2_bytes = int(props.get("l2CacheSize") or 50 * 2**20)
            self.ops = RawOps(xp, self.sm_count)
        else:
            self.sm_count = 4
            self.l2_bytes = 0
        # long enough to write a whole L2 of dirty lines back at 1 TB/s, counted at 2.5 GHz (at most)
        self._drain_cycles = int(self.l2_bytes / 1e12 * 2.5e9)
        seed = int.from_bytes(os.urandom(7), "little")  # fresh inputs every run
        self.random = xp.random.RandomState(seed) if self._device else np.random.default_rng(seed)
        self._seeds = np.random.default_rng(seed)  # one for each input drill's module fills
        self._outputs: list[tuple[DeviceArray, int]] = []
        self._kept: list[DeviceArray] = []
        self._flush: DeviceArray | None = None
        self._spin: RawKernel | None = None
        self._sink: DeviceArray | None = None  # where drill's read kernel would write (it never does)
        self.event_overhead_ms = 0.0  # set from this GPU's calibration (drill.judge.measure.event_overhead)

    # -- inputs and outputs -----------------------------------------------------
    def begin_case(self) -> None:
        self._outputs = []

    def randn(
        self,
        *shape: int,
        scale: float = 1.0,
        shift: float = 0.0,
        guard: float | None = float("nan"),
        dtype: DTypeLike = np.float32,
        whole: bool = False,
    ) -> DeviceArray:
        """As Kit.randn: normal values times `scale` plus `shift` (rounded with `whole`), then `guard`."""
        xp = self.xp
        n = math.prod(shape)
        extra = GUARD_ELEMENTS if guard is not None else 0
        buf = xp.empty(n + extra, dtype=dtype)
        body = buf[:n]
        seed = int(self._seeds.integers(2**63))
        if self.ops is None or not self.ops.normal(body, seed, scale, shift, whole):
            body[...] = self.random.standard_normal(n, dtype=np.float32).astype(dtype, copy=False)
            if scale != 1.0:
                body *= scale
            if shift:
                body += shift
            if whole:
                xp.around(body, out=body)
        if extra and guard is not None:
            self._fill(buf[n:], guard)
        return body.reshape(shape)

    def _fill(self, a: DeviceArray, value: float) -> None:
        if self.ops is None or not self.ops.fill(a, value):
            a.fill(value)

    def output(self, *shape: int, dtype: DTypeLike = np.float32) -> DeviceArray:
        """An output buffer, poisoned, with a guard zone after it that is checked after every run."""
        n = math.prod(shape)
        buf = self.xp.empty(n + GUARD_ELEMENTS, dtype=dtype)
        self._outputs.append((buf, n))
        self._poison(buf, n)
        return buf[:n].reshape(shape)

    def scratch(self, n: int, dtype: DTypeLike = np.float32) -> DeviceArray:
        return self.xp.zeros(max(1, n), dtype=dtype)

    def zero(self, a: DeviceArray) -> None:
        if self._device and a.flags.c_contiguous:
            a.data.memset_async(0, a.nbytes)
        else:
            a.fill(0)

    def copier(self, dst: DeviceArray, src: DeviceArray) -> Callable[[], None]:
        """A plain device-to-device copy of `src` into `dst` (a cudaMemcpyAsync, as torch's copy_), to be timed."""
        stream = self.xp.cuda.get_current_stream()
        return lambda: dst.data.copy_from_device_async(src.data, src.nbytes, stream)

    def copy_work(self, n: int) -> Callable[[], None]:
        """The copy ceiling's work: a copy of `n` fresh float32 values."""
        src = self.randn(n, guard=None)
        return self.copier(self.scratch(n), src)

    def read_work(self, n: int) -> ReadWork:
        """The read ceiling's work on `n` fresh float32 values (a multiple of 4)."""
        x = self.randn(n, guard=None)
        return ReadWork(lambda: self.read_all(x), self.args(x, self.scratch(1), self.int64(n // 4)))

    def _poison(self, buf: DeviceArray, n: int) -> None:
        self._fill(buf[:n], POISON)
        self._fill(buf[n:], _guard_value(buf.dtype))

    def poison_outputs(self) -> None:
        for buf, n in self._outputs:
            self._poison(buf, n)

    def check_guards(self) -> str | None:
        """Words about the first output whose guard zone was written, or None."""
        for index, (buf, n) in enumerate(self._outputs):
            tail = self.host(buf[n:])
            changed = np.flatnonzero(tail != _guard_value(tail.dtype))
            if changed.size:
                return (
                    f"wrote past the end of output {index + 1}: element {n + int(changed[0]):,} "
                    f"(the output has {n:,}), {counted(int(changed.size), 'guard element')} changed"
                )
        return None

    def host(self, a: DeviceArray) -> HostArray:
        """`a` as a NumPy array on the host (a transposed view is copied as it lies and turned on the host)."""
        if not self._device:
            return np.asarray(a)
        if getattr(a, "ndim", 0) == 2 and not a.flags.c_contiguous and a.flags.f_contiguous:
            return self.xp.asnumpy(a.T).T
        return self.xp.asnumpy(a)

    # -- references (float64) and checks ---------------------------------------
    def float64(self, a: DeviceArray) -> DeviceArray:
        found = self.ops.to_f64(a) if self.ops is not None else None
        return found if found is not None else a.astype(self.xp.float64)

    def sum64(self, a: DeviceArray) -> np.float64:
        """The sum, accumulated in float64 (no float64 copy of `a`), as a NumPy float64."""
        found = self.ops.sum64(a) if self.ops is not None else None
        return np.float64(found if found is not None else float(self.xp.sum(a, dtype=self.xp.float64)))

    def norm64(self, a: DeviceArray) -> float:
        """The Euclidean norm, its squares summed in float64."""
        found = self.ops.sum64(a, square=True) if self.ops is not None else None
        if found is None:
            found = float(self.xp.sum(self.xp.square(a.astype(self.xp.float64)), dtype=self.xp.float64))
        return math.sqrt(found)

    def allclose(
        self, got: DeviceArray, ref: DeviceArray, *, rtol: float, atol: float, label: str = "out"
    ) -> CheckResult:
        """|got - ref| <= atol + rtol * |ref| everywhere; NaN never passes."""
        return self._compare(got, ref, rtol, atol, False, label)

    def exact(self, got: DeviceArray, ref: DeviceArray, label: str = "out") -> CheckResult:
        return self._compare(got, ref, 0.0, 0.0, True, label)

    def _compare(
        self, got: DeviceArray, ref: DeviceArray, rtol: float, atol: float, exact: bool, label: str
    ) -> CheckResult:
        from drill.judge.cupy_ops import array_stats

        if got.size != ref.size:
            return Check(False, f"{label} has {got.size} elements, expected {ref.size}")
        stats: Stats | None = None
        if self.ops is not None and got.size > HOST_CHECK_ELEMENTS:
            stats = self.ops.compare(got, ref, rtol, atol, exact)
        if stats is None:
            stats = array_stats(*self._as_float64(got, ref), rtol, atol, exact)
        if not stats.bad:
            return Check(True, "", 0.0 if exact else stats.max_error, stats.max_tolerance)
        return Check(False, self._describe_bad(got, ref, stats, rtol, atol, exact, label), *stats[2:])

    def _describe_bad(
        self, got: DeviceArray, ref: DeviceArray, stats: Stats, rtol: float, atol: float, exact: bool, label: str
    ) -> str:
        """How many elements are wrong, and the first of them, read from the arrays themselves."""
        flat = stats.first
        value = float(self.host(got[unravel(flat, got.shape)]))
        want = float(self.host(ref[unravel(flat, ref.shape)]))
        where = f"{label}[{', '.join(str(i) for i in unravel(flat, got.shape))}]" if got.shape else label
        text = f"{stats.bad:,} of {got.size:,} elements wrong; first {where} = {value:.7g}, expected {want:.7g}"
        tol = 0.0 if exact else atol + rtol * abs(want)
        if math.isnan(value):
            text += " (NaN: never written, or computed from garbage)"
        elif tol > 0:
            text += f" (tolerance {tol:.2g})"
        return text

    def _as_float64(self, got: DeviceArray, ref: DeviceArray) -> tuple[ArrayModule, DeviceArray, DeviceArray]:
        """(array module, got, ref): both flattened as float64, on the host when small (HOST_CHECK_ELEMENTS)."""
        if got.size <= HOST_CHECK_ELEMENTS:
            got64 = self.host(got).astype(np.float64).reshape(-1)
            ref64 = self.host(ref).astype(np.float64).reshape(-1)
            # NumPy answers to the array module's names that array_stats uses
            return cast("ArrayModule", np), cast("DeviceArray", got64), cast("DeviceArray", ref64)
        xp = self.xp
        return xp, got.astype(xp.float64).reshape(-1), xp.asarray(ref).astype(xp.float64).reshape(-1)

    # -- launching CUDA kernels ---------------------------------------------------
    @staticmethod
    def int32(value: int) -> np.int32:
        return np.int32(value)

    @staticmethod
    def int64(value: int) -> np.int64:
        return np.int64(value)

    def args(self, *values: object) -> tuple[object, ...]:
        """Kernel arguments: arrays become device pointers; integers must be sized first (kit.int32, kit.int64)."""
        out: list[object] = []
        for v in values:
            if isinstance(v, self.xp.ndarray):
                out.append(np.uint64(v.data.ptr if self._device else np.asarray(v).ctypes.data))
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                out.append(v)
            else:
                raise TypeError(f"give kernel scalar {v!r} a C type (kit.int32, kit.int64)")
        return tuple(out)

    def to_torch(self, inputs: object) -> object:
        """The inputs as torch tensors on the same memory (DLPack), for timing torch's own way once."""
        import torch.utils.dlpack

        if not isinstance(inputs, dict):
            return inputs
        return {
            k: torch.utils.dlpack.from_dlpack(v) if isinstance(v, self.xp.ndarray) else v for k, v in inputs.items()
        }

    # -- the GPU's clock -----------------------------------------------------------
    def synchronize(self) -> None:
        self.xp.cuda.runtime.deviceSynchronize()

    def event(self) -> _Event:
        return _Event(self.xp)

    def spin(self, cycles: int) -> None:
        """Hold the GPU back for about `cycles` clock cycles (a one-thread spin kernel)."""
        if self._spin is None:
            self._spin = self.xp.RawKernel(SPIN_SOURCE, "drill_spin")
        self._spin((1,), (1,), (np.int64(cycles),))

    def stream_handle(self) -> int:
        return int(self.xp.cuda.get_current_stream().ptr)

    def device_bytes(self, n: int) -> int:
        buf = self.xp.zeros(n, dtype=np.uint8)
        self._kept.append(buf)
        return int(buf.data.ptr)

    def healthy(self) -> bool:
        try:
            self.synchronize()
            probe = self.xp.empty(8, dtype=np.float32)
            self._fill(probe, 1.0)
            return float(self.host(probe).sum()) == 8.0
        except Exception:
            return False

    def release(self) -> None:
        self.xp.get_default_memory_pool().free_all_blocks()

    def read_all(self, a: DeviceArray) -> None:
        if self.ops is None:
            a.sum()
            return
        if self._sink is None:
            self._sink = self.scratch(1)
        self.ops.read(a, self._sink)

    def _read_flush_buffer(self) -> None:
        self.read_all(self._flush_buffer())

    def _flush_buffer(self) -> DeviceArray:
        if self._flush is None:
            self._flush = self.xp.empty(max(2 * self.l2_bytes, 64 * 2**20) // 4, dtype=np.float32)
            self._fill(self._flush, 1.0)
        return self._flush


class _Event:
    """A CuPy event with torch's methods: record(), synchronize(), elapsed_time(end) in ms."""

    def __init__(self, xp: ArrayModule) -> None:
        self.xp = xp
        self.event = xp.cuda.Event()

    def record(self) -> None:
        self.event.record()

    def synchronize(self) -> None:
        self.event.synchronize()

    def elapsed_time(self, end: _Event) -> float:
        return float(self.xp.cuda.get_elapsed_time(self.event, end.event))


def _guard_value(dtype: DTypeLike) -> float:
    """OUTPUT_GUARD, or the most negative finite value of a type too narrow to hold it (float16)."""
    return max(OUTPUT_GUARD, float(np.finfo(np.dtype(dtype).type).min))
