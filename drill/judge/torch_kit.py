"""Tools the card harnesses use inside the judge child: inputs, guarded outputs, checks, launches, timing.

Imported only by the judge child process (it needs torch). drill.judge.cupy_kit has the same tools
without torch, for the CUDA cards, whose harnesses use only what both kits have.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    import numpy as np

from drill.judge.kitbase import (
    GUARD_ELEMENTS as GUARD_ELEMENTS,
)
from drill.judge.kitbase import (
    HOST_CHECK_ELEMENTS as HOST_CHECK_ELEMENTS,
)
from drill.judge.kitbase import (
    OUTPUT_GUARD as OUTPUT_GUARD,
)
from drill.judge.kitbase import (
    POISON as POISON,
)
from drill.judge.kitbase import (
    Check as Check,
)
from drill.judge.kitbase import (
    CheckResult as CheckResult,
)
from drill.judge.kitbase import (
    Clocked,
    unravel,
)
from drill.judge.kitbase import (
    Launch as Launch,
)
from drill.judge.timed import Event, ReadWork
from drill.words import counted


class Kit(Clocked):
    """One per judge process. `gpu` is False under the Triton interpreter on a CPU."""

    Launch = Launch
    Check = Check
    name = "torch"

    def __init__(self, gpu: bool) -> None:
        self.torch = torch
        self.gpu = gpu
        self.device = torch.device("cuda" if gpu else "cpu")
        if gpu:
            props = torch.cuda.get_device_properties(0)
            self.sm_count = int(props.multi_processor_count)
            self.l2_bytes = int(getattr(props, "L2_cache_size", 50 * 2**20) or 50 * 2**20)
            # long enough to write a whole L2 of dirty lines back at 1 TB/s, counted at 2.5 GHz (at most)
            self._drain_cycles = int(self.l2_bytes / 1e12 * 2.5e9)
        else:
            self.sm_count = 4
            self.l2_bytes = 0
            self._drain_cycles = 0
        self.generator = torch.Generator(device=self.device)
        self.generator.seed()  # fresh inputs every run
        self._outputs: list[tuple[torch.Tensor, int]] = []
        self._flush: torch.Tensor | None = None
        self._kept: list[torch.Tensor] = []
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
        dtype: torch.dtype = torch.float32,
        whole: bool = False,
    ) -> torch.Tensor:
        """Fresh normal random values (float32 unless `dtype` says otherwise), times `scale`, plus `shift`,
        rounded to whole numbers with `whole`; the space just past the tensor holds `guard` (NaN) to
        expose over-reads."""
        n = math.prod(shape)
        extra = GUARD_ELEMENTS if guard is not None else 0
        buf = torch.empty(n + extra, dtype=dtype, device=self.device)
        buf[:n].normal_(generator=self.generator)
        if scale != 1.0:
            buf[:n].mul_(scale)
        if shift:
            buf[:n].add_(shift)
        if whole:
            buf[:n].round_()
        if extra:
            buf[n:].fill_(guard)  # type: ignore[arg-type]
        return buf[:n].view(*shape)

    def output(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """An output buffer, poisoned, with a guard zone after it that is checked after every run."""
        n = math.prod(shape)
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        self._outputs.append((buf, n))
        poison_output(buf, n)
        return buf[:n].view(*shape)

    def scratch(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.zeros(max(1, n), dtype=dtype, device=self.device)

    @staticmethod
    def zero(t: torch.Tensor) -> None:
        t.zero_()

    @staticmethod
    def copier(dst: torch.Tensor, src: torch.Tensor) -> Callable[[], object]:
        """A plain device-to-device copy of `src` into `dst` (a cudaMemcpyAsync), to be timed."""
        return lambda: dst.copy_(src)

    def copy_work(self, n: int) -> Callable[[], object]:
        """The copy ceiling's work: a copy of `n` fresh float32 values."""
        src = self.randn(n, guard=None)
        return self.copier(self.scratch(n), src)

    def read_work(self, n: int) -> ReadWork:
        """The read ceiling's work on `n` fresh float32 values (a multiple of 4)."""
        x = self.randn(n, guard=None)
        return ReadWork(lambda: self.read_all(x), self.args(x, self.scratch(1), self.int64(n // 4)))

    @staticmethod
    def read_all(a: torch.Tensor) -> None:
        """Read every element of `a` (torch's sum)."""
        a.sum()

    # -- references (float64) ---------------------------------------------------
    @staticmethod
    def float64(t: torch.Tensor) -> torch.Tensor:
        return t.double()

    @staticmethod
    def sum64(t: torch.Tensor) -> torch.Tensor:
        """The sum, accumulated in float64 (no float64 copy of `t`)."""
        return torch.sum(t, dtype=torch.float64)

    @staticmethod
    def norm64(t: torch.Tensor) -> float:
        """The Euclidean norm, accumulated in float64."""
        return float(torch.linalg.vector_norm(t, dtype=torch.float64))

    @staticmethod
    def to_torch(inputs: object) -> object:
        """The inputs as the torch baseline takes them (they are torch's already)."""
        return inputs

    def poison_outputs(self) -> None:
        for buf, n in self._outputs:
            poison_output(buf, n)

    def check_guards(self) -> str | None:
        """Words about the first output whose guard zone was written, or None."""
        for index, (buf, n) in enumerate(self._outputs):
            tail = buf[n:].cpu()  # a few kilobytes: see HOST_CHECK_ELEMENTS
            changed = (tail != guard_value(buf.dtype)).nonzero()
            if changed.numel():
                first = int(changed[0, 0])
                return (
                    f"wrote past the end of output {index + 1}: element {n + first:,} "
                    f"(the output has {n:,}), {counted(int(changed.shape[0]), 'guard element')} changed"
                )
        return None

    # -- checks -----------------------------------------------------------------
    def allclose(
        self, got: torch.Tensor, ref: torch.Tensor, *, rtol: float, atol: float, label: str = "out"
    ) -> CheckResult:
        """|got - ref| <= atol + rtol * |ref| everywhere; NaN never passes."""
        if got.numel() != ref.numel():
            return Check(False, f"{label} has {got.numel()} elements, expected {ref.numel()}")
        got64, ref64 = _as_float64(got, ref)
        diff = (got64 - ref64).abs()
        tol = atol + rtol * ref64.abs()
        bad = ~(diff <= tol)
        finite = diff[torch.isfinite(diff)]
        max_err = float(finite.max()) if finite.numel() else float("inf")
        if not bool(bad.any()):
            return Check(True, "", max_err, float(tol.max()) if tol.numel() else atol)
        return Check(False, self._describe_bad(got, got64, ref64, bad, tol, label), max_err, float(tol.max()))

    def exact(self, got: torch.Tensor, ref: torch.Tensor, label: str = "out") -> CheckResult:
        if got.numel() != ref.numel():
            return Check(False, f"{label} has {got.numel()} elements, expected {ref.numel()}")
        got64, ref64 = _as_float64(got, ref)
        bad = ~(got64 == ref64)
        if not bool(bad.any()):
            return Check(True, "", 0.0, 0.0)
        diff = (got64 - ref64).abs()
        finite = diff[torch.isfinite(diff)]
        zero = torch.zeros_like(ref64)
        return Check(
            False,
            self._describe_bad(got, got64, ref64, bad, zero, label),
            float(finite.max()) if finite.numel() else float("inf"),
            0.0,
        )

    @staticmethod
    def _describe_bad(
        got: torch.Tensor, got64: torch.Tensor, ref64: torch.Tensor, bad: torch.Tensor, tol: torch.Tensor, label: str
    ) -> str:
        count = int(bad.sum())
        flat = int(bad.nonzero()[0, 0])
        shape = tuple(got.shape)
        index = unravel(flat, shape)
        where = f"{label}[{', '.join(str(i) for i in index)}]" if shape else label
        value = float(got64[flat])
        want = float(ref64[flat])
        text = f"{count:,} of {got64.numel():,} elements wrong; first {where} = {value:.7g}, expected {want:.7g}"
        if math.isnan(value):
            text += " (NaN: never written, or computed from garbage)"
        elif float(tol[flat]) > 0:
            text += f" (tolerance {float(tol[flat]):.2g})"
        return text

    # -- launching CUDA kernels ---------------------------------------------------
    @staticmethod
    def int32(value: int) -> np.int32:
        """A kernel argument of C type `int`."""
        import numpy as np

        return np.int32(value)

    @staticmethod
    def int64(value: int) -> np.int64:
        """A kernel argument of C type `long long`."""
        import numpy as np

        return np.int64(value)

    @staticmethod
    def args(*values: object) -> tuple[object, ...]:
        """Kernel arguments: tensors become device pointers; integers must be sized first (kit.int32, kit.int64)."""
        import numpy as np

        out: list[object] = []
        for v in values:
            if isinstance(v, torch.Tensor):
                out.append(np.uint64(v.data_ptr()))
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                out.append(v)
            else:
                raise TypeError(f"give kernel scalar {v!r} a C type (kit.int32, kit.int64)")
        return tuple(out)

    # -- timing -----------------------------------------------------------------
    def synchronize(self) -> None:
        if self.gpu:
            torch.cuda.synchronize()

    @staticmethod
    def event() -> Event:
        """A CUDA event that records time: record(), synchronize(), elapsed_time(end) in ms."""
        return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]

    @staticmethod
    def spin(cycles: int) -> None:
        """Hold the GPU back for about `cycles` clock cycles (a one-thread spin kernel)."""
        torch.cuda._sleep(cycles)  # type: ignore[no-untyped-call]

    @staticmethod
    def stream_handle() -> int:
        """The stream the kit's own work goes on; the learner's CUDA kernels are launched on it too."""
        return int(torch.cuda.current_stream().cuda_stream)

    def device_bytes(self, n: int) -> int:
        """The address of `n` zeroed device bytes that live as long as the kit."""
        buf = torch.zeros(n, dtype=torch.uint8, device=self.device)
        self._kept.append(buf)
        return int(buf.data_ptr())

    def healthy(self) -> bool:
        """After a CUDA error: can this process still use the GPU? Errors like an illegal address are sticky."""
        try:
            torch.cuda.synchronize()
            return float(torch.ones(8, device="cuda").sum().item()) == 8.0
        except Exception:
            return False

    def release(self) -> None:
        """Hand cached device memory back (after a case, or an out-of-memory error)."""
        if self.gpu:
            torch.cuda.empty_cache()

    def time(
        self, fn: Callable[[], object], prepare: Callable[[], object] | None = None, *, budget_s: float = 0.2
    ) -> tuple[float, int]:
        """(median milliseconds, repetitions) of `fn`; the outputs are not poisoned."""
        m = self.measure(fn, prepare, poison=False, budget_s=budget_s)
        return m.ms, m.reps

    def _read_flush_buffer(self) -> None:
        self.read_all(self._flush_buffer())

    def _flush_buffer(self) -> torch.Tensor:
        if self._flush is None:
            size = max(2 * self.l2_bytes, 64 * 2**20)
            self._flush = torch.ones(size // 4, dtype=torch.float32, device=self.device)
        return self._flush


def guard_value(dtype: torch.dtype) -> float:
    """OUTPUT_GUARD, or the most negative finite value of a type too narrow to hold it (float16)."""
    return max(OUTPUT_GUARD, float(torch.finfo(dtype).min))


def poison_output(buf: torch.Tensor, n: int) -> None:
    """An output buffer of `n` elements and its guard zone set as a run must find them: NaN, then the guard."""
    buf[:n].fill_(POISON)
    buf[n:].fill_(guard_value(buf.dtype))


def _as_float64(got: torch.Tensor, ref: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both flattened as float64, on the host when they are small (HOST_CHECK_ELEMENTS), else on `got`'s device."""
    got = got.detach()
    ref = ref.detach()
    if got.numel() <= HOST_CHECK_ELEMENTS:
        got = got.cpu()
        ref = ref.cpu()
    return got.to(torch.float64).reshape(-1), ref.to(device=got.device, dtype=torch.float64).reshape(-1)
