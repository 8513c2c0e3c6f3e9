"""The harnesses' tools without torch: the kit a CUDA card is judged with when CuPy is installed.

Imported only by the judge child. A CUDA card's harness needs device arrays,
random inputs, float64 references and the GPU's clock, and none of torch's
kernels; `import torch` is most of a cold judge's start (about 2 s on an
H100 host, against about 0.3 s for CuPy). So a judge whose first run is a CUDA
card judges it with this kit, and imports torch only if it must: to measure
the GPU's ceilings once, to time torch's own way of doing the card once
(both kept per GPU), or for a Triton card.

The same tools as drill.kernel.kit.Kit, with the same guarantees: inputs
fresh each run with a NaN guard after them, outputs poisoned with a guard
zone checked after every run, NaN never passes a check, results up to
HOST_CHECK_ELEMENTS compared on the host. `xp` is the array module: CuPy
here; the tests give NumPy to check the comparisons on a CPU.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from drill.kernel.kitbase import (
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

    def __init__(self, xp: Any = None) -> None:
        if xp is None:
            import cupy

            xp = cupy
        self.xp = xp
        self._device = xp is not np
        if self._device:
            props = xp.cuda.runtime.getDeviceProperties(0)
            self.sm_count = int(props["multiProcessorCount"])
            self.l2_bytes = int(props.get("l2CacheSize") or 50 * 2**20)
        else:
            self.sm_count, self.l2_bytes = 4, 0
        # long enough to write a whole L2 of dirty lines back at 1 TB/s, counted at 2.5 GHz (at most)
        self._drain_cycles = int(self.l2_bytes / 1e12 * 2.5e9)
        seed = int.from_bytes(os.urandom(7), "little")  # fresh inputs every run
        self.random = xp.random.RandomState(seed) if self._device else np.random.default_rng(seed)
        self._outputs: list[tuple[Any, int]] = []
        self._kept: list[Any] = []
        self._flush: Any = None
        self._spin: Any = None
        self.event_overhead_ms = 0.0  # set from this GPU's calibration (drill.kernel.measure.event_overhead)

    # -- inputs and outputs -----------------------------------------------------
    def begin_case(self) -> None:
        self._outputs = []

    def randn(
        self,
        *shape: int,
        scale: float = 1.0,
        shift: float = 0.0,
        guard: float | None = float("nan"),
        dtype: Any = np.float32,
        whole: bool = False,
    ) -> Any:
        """As Kit.randn: normal values times `scale` plus `shift` (rounded with `whole`), then `guard`."""
        xp = self.xp
        n = math.prod(shape)
        extra = GUARD_ELEMENTS if guard is not None else 0
        buf = xp.empty(n + extra, dtype=dtype)
        body = buf[:n]
        body[...] = self.random.standard_normal(n, dtype=np.float32).astype(dtype, copy=False)
        if scale != 1.0:
            body *= scale
        if shift:
            body += shift
        if whole:
            xp.around(body, out=body)
        if extra:
            buf[n:].fill(guard)
        return body.reshape(shape)

    def output(self, *shape: int, dtype: Any = np.float32) -> Any:
        """An output buffer, poisoned, with a guard zone after it that is checked after every run."""
        n = math.prod(shape)
        buf = self.xp.empty(n + GUARD_ELEMENTS, dtype=dtype)
        self._outputs.append((buf, n))
        self._poison(buf, n)
        return buf[:n].reshape(shape)

    def scratch(self, n: int, dtype: Any = np.float32) -> Any:
        return self.xp.zeros(max(1, n), dtype=dtype)

    @staticmethod
    def zero(a: Any) -> None:
        a.fill(0)

    def copier(self, dst: Any, src: Any) -> Any:
        """A plain device-to-device copy of `src` into `dst` (a cudaMemcpyAsync, as torch's copy_), to be timed."""
        stream = self.xp.cuda.get_current_stream()
        return lambda: dst.data.copy_from_device_async(src.data, src.nbytes, stream)

    @staticmethod
    def _poison(buf: Any, n: int) -> None:
        buf[:n].fill(POISON)
        buf[n:].fill(_guard_value(buf.dtype))

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
                    f"(the output has {n:,}), {int(changed.size)} guard element(s) changed"
                )
        return None

    def host(self, a: Any) -> Any:
        """`a` as a NumPy array on the host."""
        return self.xp.asnumpy(a) if self._device else np.asarray(a)

    # -- references (float64) and checks ---------------------------------------
    def float64(self, a: Any) -> Any:
        return a.astype(self.xp.float64)

    def sum64(self, a: Any) -> Any:
        """The sum, accumulated in float64 (no float64 copy of `a`)."""
        return self.xp.sum(a, dtype=self.xp.float64)

    def norm64(self, a: Any) -> float:
        """The Euclidean norm, its squares summed in float64."""
        return float(math.sqrt(float(self.xp.sum(self.xp.square(a), dtype=self.xp.float64))))

    def allclose(self, got: Any, ref: Any, *, rtol: float, atol: float, label: str = "out") -> CheckResult:
        """|got - ref| <= atol + rtol * |ref| everywhere; NaN never passes."""
        if got.size != ref.size:
            return Check(False, f"{label} has {got.size} elements, expected {ref.size}")
        xp, got64, ref64 = self._as_float64(got, ref)
        diff = xp.abs(got64 - ref64)
        tol = atol + rtol * xp.abs(ref64)
        bad = ~(diff <= tol)
        finite = diff[xp.isfinite(diff)]
        max_err = float(finite.max()) if finite.size else float("inf")
        top = float(tol.max()) if tol.size else atol
        if not bool(bad.any()):
            return Check(True, "", max_err, top)
        return Check(False, _describe_bad(xp, got.shape, got64, ref64, bad, tol, label), max_err, top)

    def exact(self, got: Any, ref: Any, label: str = "out") -> CheckResult:
        if got.size != ref.size:
            return Check(False, f"{label} has {got.size} elements, expected {ref.size}")
        xp, got64, ref64 = self._as_float64(got, ref)
        bad = ~(got64 == ref64)
        if not bool(bad.any()):
            return Check(True, "", 0.0, 0.0)
        diff = xp.abs(got64 - ref64)
        finite = diff[xp.isfinite(diff)]
        return Check(
            False,
            _describe_bad(xp, got.shape, got64, ref64, bad, xp.zeros_like(ref64), label),
            float(finite.max()) if finite.size else float("inf"),
            0.0,
        )

    def _as_float64(self, got: Any, ref: Any) -> tuple[Any, Any, Any]:
        """(array module, got, ref): both flattened as float64, on the host when small (HOST_CHECK_ELEMENTS)."""
        if got.size <= HOST_CHECK_ELEMENTS:
            return np, self.host(got).astype(np.float64).reshape(-1), self.host(ref).astype(np.float64).reshape(-1)
        xp = self.xp
        return xp, got.astype(xp.float64).reshape(-1), xp.asarray(ref).astype(xp.float64).reshape(-1)

    # -- launching CUDA kernels ---------------------------------------------------
    @staticmethod
    def int32(value: int) -> Any:
        return np.int32(value)

    @staticmethod
    def int64(value: int) -> Any:
        return np.int64(value)

    def args(self, *values: Any) -> tuple[Any, ...]:
        """Kernel arguments: arrays become device pointers; integers must be sized first (kit.int32, kit.int64)."""
        out: list[Any] = []
        for v in values:
            if isinstance(v, self.xp.ndarray):
                out.append(np.uint64(v.data.ptr if self._device else v.ctypes.data))
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                out.append(v)
            else:
                raise TypeError(f"give kernel scalar {v!r} a C type (kit.int32, kit.int64)")
        return tuple(out)

    def to_torch(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The inputs as torch tensors on the same memory (DLPack), for timing torch's own way once."""
        import torch.utils.dlpack

        return {
            k: torch.utils.dlpack.from_dlpack(v) if isinstance(v, self.xp.ndarray) else v for k, v in inputs.items()
        }

    # -- the GPU's clock -----------------------------------------------------------
    def synchronize(self) -> None:
        self.xp.cuda.runtime.deviceSynchronize()

    def event(self) -> Any:
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
            return float(self.xp.ones(8, dtype=np.float32).sum()) == 8.0
        except Exception:
            return False

    def release(self) -> None:
        self.xp.get_default_memory_pool().free_all_blocks()

    def _flush_buffer(self) -> Any:
        if self._flush is None:
            self._flush = self.xp.ones(max(2 * self.l2_bytes, 64 * 2**20) // 4, dtype=np.float32)
        return self._flush

    def warm(self) -> None:
        """Run each operation the checks use, small and large, right and wrong, so that CuPy compiles its
        kernels now (it keeps them on disk) and not during a learner's verdict."""
        for n in (1000, HOST_CHECK_ELEMENTS + 33):
            self.begin_case()
            x = self.randn(n)
            self.randn(n, scale=8.0, whole=True)
            out = self.output(33, n // 33)
            out[...] = x[: out.size].reshape(out.shape)
            self.check_guards()
            self.allclose(out, self.float64(out), rtol=1e-6, atol=0.0)
            self.exact(self.float64(out).T.copy(), self.float64(out).T)
            out[0, 0] = float("nan")
            self.allclose(out, self.float64(x[: out.size].reshape(out.shape)), rtol=1e-6, atol=0.0)
            self.exact(out, x[: out.size].reshape(out.shape))
            self.poison_outputs()
            self.sum64(x)
            self.norm64(x)
            self.zero(self.scratch(4))
        self.flush_ms()
        self.synchronize()
        self.release()


class _Event:
    """A CuPy event with torch's methods: record(), synchronize(), elapsed_time(end) in ms."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.event = xp.cuda.Event()

    def record(self) -> None:
        self.event.record()

    def synchronize(self) -> None:
        self.event.synchronize()

    def elapsed_time(self, end: _Event) -> float:
        return float(self.xp.cuda.get_elapsed_time(self.event, end.event))


def _guard_value(dtype: Any) -> float:
    """OUTPUT_GUARD, or the most negative finite value of a type too narrow to hold it (float16)."""
    return max(OUTPUT_GUARD, float(np.finfo(dtype).min))


def _describe_bad(xp: Any, shape: tuple[int, ...], got64: Any, ref64: Any, bad: Any, tol: Any, label: str) -> str:
    count = int(bad.sum())
    flat = int(xp.flatnonzero(bad)[0])
    index = unravel(flat, shape)
    where = f"{label}[{', '.join(str(i) for i in index)}]" if shape else label
    value, want = float(got64[flat]), float(ref64[flat])
    text = f"{count:,} of {got64.size:,} elements wrong; first {where} = {value:.7g}, expected {want:.7g}"
    if math.isnan(value):
        text += " (NaN: never written, or computed from garbage)"
    elif float(tol[flat]) > 0:
        text += f" (tolerance {float(tol[flat]):.2g})"
    return text
