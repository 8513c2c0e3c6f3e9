"""Tools the card harnesses use inside the judge child: inputs, guarded outputs, checks, launches, timing.

Imported only by the judge child process (it needs torch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

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

    run: Callable[[], Any]
    result: Callable[[], Any]
    prepare: Callable[[], Any] = lambda: None


CheckResult = Check  # the name annotations use (inside Kit, `Check` is the attribute harnesses read)


class Kit:
    """One per judge process. `gpu` is False under the Triton interpreter on a CPU."""

    Launch = Launch
    Check = Check

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
        self._flush_ms: float | None = None
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
        dtype: torch.dtype = torch.float32,
    ) -> torch.Tensor:
        """Fresh normal random values (float32 unless `dtype` says otherwise); the space just past the tensor
        holds `guard` (NaN) to expose over-reads."""
        n = math.prod(shape)
        extra = GUARD_ELEMENTS if guard is not None else 0
        buf = torch.empty(n + extra, dtype=dtype, device=self.device)
        buf[:n].normal_(generator=self.generator)
        if scale != 1.0:
            buf[:n].mul_(scale)
        if shift:
            buf[:n].add_(shift)
        if extra:
            buf[n:].fill_(guard)  # type: ignore[arg-type]
        return buf[:n].view(*shape)

    def output(self, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """An output buffer, poisoned, with a guard zone after it that is checked after every run."""
        n = math.prod(shape)
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        self._outputs.append((buf, n))
        self._poison(buf, n)
        return buf[:n].view(*shape)

    def scratch(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.zeros(max(1, n), dtype=dtype, device=self.device)

    @staticmethod
    def _poison(buf: torch.Tensor, n: int) -> None:
        buf[:n].fill_(POISON)
        buf[n:].fill_(_guard_value(buf.dtype))

    def poison_outputs(self) -> None:
        for buf, n in self._outputs:
            self._poison(buf, n)

    def check_guards(self) -> str | None:
        """Words about the first output whose guard zone was written, or None."""
        for index, (buf, n) in enumerate(self._outputs):
            tail = buf[n:].cpu()  # a few kilobytes: see HOST_CHECK_ELEMENTS
            changed = (tail != _guard_value(buf.dtype)).nonzero()
            if changed.numel():
                first = int(changed[0, 0])
                return (
                    f"wrote past the end of output {index + 1}: element {n + first:,} "
                    f"(the output has {n:,}), {int(changed.shape[0])} guard element(s) changed"
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
        index = _unravel(flat, shape)
        where = f"{label}[{', '.join(str(i) for i in index)}]" if shape else label
        value, want = float(got64[flat]), float(ref64[flat])
        text = f"{count:,} of {got64.numel():,} elements wrong; first {where} = {value:.7g}, expected {want:.7g}"
        if math.isnan(value):
            text += " (NaN: never written, or computed from garbage)"
        elif float(tol[flat]) > 0:
            text += f" (tolerance {float(tol[flat]):.2g})"
        return text

    # -- launching CUDA kernels ---------------------------------------------------
    @staticmethod
    def int32(value: int) -> Any:
        """A kernel argument of C type `int`."""
        import numpy as np

        return np.int32(value)

    @staticmethod
    def int64(value: int) -> Any:
        """A kernel argument of C type `long long`."""
        import numpy as np

        return np.int64(value)

    @staticmethod
    def args(*values: Any) -> tuple[Any, ...]:
        """Kernel arguments: tensors become device pointers; integers must be sized first (kit.int32, kit.int64)."""
        import numpy as np

        out: list[Any] = []
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

    def flush_l2(self) -> None:
        """Push the inputs out of L2 by reading a buffer twice its size, then let memory settle.

        Reading, not writing: dirty lines left in L2 would be written back
        during the timed kernel and bill it for someone else's traffic. The
        dirty lines the read evicts (the last launch's outputs) are written
        back after it; a short spin lets that finish before the next launch.
        """
        self._flush_buffer().sum()
        torch.cuda._sleep(self._drain_cycles)  # type: ignore[no-untyped-call]

    def flush_ms(self) -> float:
        """GPU milliseconds of one flush_l2 (measured once)."""
        if self._flush_ms is None:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            self.flush_l2()
            start.record()
            self.flush_l2()
            end.record()
            end.synchronize()
            self._flush_ms = start.elapsed_time(end)
        return self._flush_ms

    def measure(self, fn: Callable[[], Any], prepare: Callable[[], Any] | None = None, **options: Any) -> Any:
        """GPU time of `fn` with the host kept out of it (see drill.kernel.measure); a `Measured`."""
        from drill.kernel.measure import measure

        return measure(self, fn, prepare, **options)

    def time(
        self, fn: Callable[[], Any], prepare: Callable[[], Any] | None = None, **options: Any
    ) -> tuple[float, int]:
        """(median milliseconds, repetitions) of `fn`; the outputs are not poisoned."""
        m = self.measure(fn, prepare, poison=False, **options)
        return m.ms, m.reps

    def _flush_buffer(self) -> torch.Tensor:
        if self._flush is None:
            size = max(2 * self.l2_bytes, 64 * 2**20)
            self._flush = torch.ones(size // 4, dtype=torch.float32, device=self.device)
        return self._flush


def _guard_value(dtype: torch.dtype) -> float:
    """OUTPUT_GUARD, or the most negative finite value of a type too narrow to hold it (float16)."""
    return max(OUTPUT_GUARD, float(torch.finfo(dtype).min))


def _unravel(flat: int, shape: Sequence[int]) -> tuple[int, ...]:
    if not shape:
        return ()
    out = []
    for dim in reversed(shape):
        out.append(flat % dim)
        flat //= dim
    return tuple(reversed(out))


def _as_float64(got: torch.Tensor, ref: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Both flattened as float64, on the host when they are small (HOST_CHECK_ELEMENTS), else on `got`'s device."""
    got, ref = got.detach(), ref.detach()
    if got.numel() <= HOST_CHECK_ELEMENTS:
        got, ref = got.cpu(), ref.cpu()
    return got.to(torch.float64).reshape(-1), ref.to(device=got.device, dtype=torch.float64).reshape(-1)
