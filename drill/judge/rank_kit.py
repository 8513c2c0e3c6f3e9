"""The tools a collective card's harness uses inside one rank process: inputs, outputs, checks, torch's own collectives.

One per rank. `kit.builtin` holds torch's collectives as they were before the
learner's file was loaded (drill.judge.rank_ops.Originals): the harness's
reference and NCCL's timed collective use them; the learner's code cannot.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from drill.judge.kitbase import GUARD_ELEMENTS, Check, CheckResult, Launch, unravel
from drill.judge.rank_ops import Originals
from drill.judge.torch_kit import guard_value, poison_output

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# The unit roundoff of each type: half the gap between 1 and the next number.
UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}
TOLERANCE_SLACK = 2.0  # above the worst-case bound of a sum in any order, for the rounding of the inputs' own sum
NAN_HINT = (
    " (NaN: never written, or read before its receive completed: call wait() on the handle that irecv or "
    "batch_isend_irecv returned before reading the buffer)"
)


class RankKit:
    """What a collective harness is given as `kit` in a rank process."""

    Launch = Launch
    Check = Check

    def __init__(self, rank: int, world: int, device: torch.device, builtin: Originals) -> None:
        self.torch = torch
        self.rank = rank
        self.world = world
        self.device = device
        self.gpu = device.type == "cuda"
        self.builtin = builtin
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)  # fresh, and apart per rank
        self._outputs: list[tuple[torch.Tensor, int]] = []

    @staticmethod
    def dtype(name: str) -> torch.dtype:
        return DTYPES[name]

    # -- inputs and outputs -----------------------------------------------------------------------
    def begin_case(self) -> None:
        self._outputs = []

    def randn(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """`n` fresh normal values of this rank; NaN just past them, so an over-read poisons what it touches."""
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        buf[:n].normal_(generator=self.generator)
        buf[n:].fill_(float("nan"))
        return buf[:n]

    def output(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """An output of `n` elements, NaN until written, with a guard zone after it that is checked after every run."""
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        self._outputs.append((buf, n))
        poison_output(buf, n)
        return buf[:n]

    def poison_outputs(self) -> None:
        for buf, n in self._outputs:
            poison_output(buf, n)

    def check_guards(self) -> str | None:
        for buf, n in self._outputs:
            tail = buf[n:].cpu()
            changed = (tail != guard_value(buf.dtype)).nonzero()
            if changed.numel():
                return (
                    f"wrote past the end of the output: element {n + int(changed[0, 0]):,} "
                    f"(the output has {n:,}), {int(changed.shape[0])} guard element(s) changed"
                )
        return None

    def shards(self, n: int) -> list[tuple[int, int]]:
        """(start, length) of each rank's part of `n` elements, as torch.tensor_split cuts them: the first n % world
        parts one element longer."""
        base, extra = divmod(n, self.world)
        out = []
        start = 0
        for r in range(self.world):
            length = base + (1 if r < extra else 0)
            out.append((start, length))
            start += length
        return out

    def synchronize(self) -> None:
        if self.gpu:
            torch.cuda.synchronize(self.device)

    def event(self) -> Any:
        return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]

    # -- checks -----------------------------------------------------------------------------------
    def sum_tolerance(self, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """How far a sum over the ranks may be from the exact one, element by element.

        Adding `world` values in any order, each addition rounded to `dtype`, is
        off by at most (world - 1) · u · Σ|x| (u the unit roundoff), and storing
        the result rounds once more (u · |sum| ≤ u · Σ|x|): so world · u · Σ|x|,
        doubled. It grows with the number of ranks, and is exact for one.
        """
        return scale * (TOLERANCE_SLACK * self.world * UNIT_ROUNDOFF.get(dtype, 2.0**-8))

    def exact_sum(self, fresh: torch.Tensor) -> dict[str, torch.Tensor]:
        """The sum over the ranks of each one's `fresh` (float64, by torch's own all-reduce) and its tolerance."""
        total = fresh.double()
        self.builtin.all_reduce(total)
        scale = fresh.double().abs()
        self.builtin.all_reduce(scale)
        return {"sum": total, "tolerance": self.sum_tolerance(scale, fresh.dtype)}

    def within(self, got: torch.Tensor, ref: torch.Tensor, tol: torch.Tensor, label: str) -> CheckResult:
        """|got - ref| <= tol everywhere (ref and tol in float64); NaN never passes."""
        if got.numel() != ref.numel():
            return Check(False, f"{label} has {got.numel():,} elements, expected {ref.numel():,}")
        got64 = got.detach().reshape(-1).to(torch.float64)
        ref64 = ref.reshape(-1)
        tol64 = tol.reshape(-1)
        diff = (got64 - ref64).abs()
        bad = ~(diff <= tol64)
        finite = diff[torch.isfinite(diff)]
        if finite.numel():
            max_err = float(finite.max())
        elif diff.numel():  # every difference is NaN or infinite
            max_err = float("inf")
        else:
            max_err = 0.0
        top = float(tol64.max()) if tol64.numel() else 0.0
        if not bool(bad.any()):
            return Check(True, "", max_err, top)
        return Check(False, self._describe(got, got64, ref64, bad, tol64, label), max_err, top)

    def exact(self, got: torch.Tensor, ref: torch.Tensor, label: str) -> CheckResult:
        return self.within(got, ref, torch.zeros_like(ref), label)

    def unchanged(self, tensor: torch.Tensor, before: torch.Tensor, label: str) -> CheckResult | None:
        """None when `tensor` still holds `before`; else a failed Check saying the learner wrote to an input."""
        same = torch.equal(tensor, before) or bool(
            ((tensor == before) | (torch.isnan(tensor) & torch.isnan(before))).all()
        )
        if same:
            return None
        index = int((tensor != before).reshape(-1).nonzero()[0, 0])
        return Check(
            False,
            f"rank {self.rank} changed its {label} (element {index:,} was {float(before.reshape(-1)[index]):.7g}, "
            f"now {float(tensor.reshape(-1)[index]):.7g}); the input is read-only: work in buffers of your own",
        )

    def _describe(
        self,
        got: torch.Tensor,
        got64: torch.Tensor,
        ref64: torch.Tensor,
        bad: torch.Tensor,
        tol64: torch.Tensor,
        label: str,
    ) -> str:
        count = int(bad.sum())
        flat = int(bad.nonzero()[0, 0])
        index = unravel(flat, tuple(got.shape))
        where = f"{label}[{', '.join(str(i) for i in index)}]" if index else label
        value = float(got64[flat])
        want = float(ref64[flat])
        part = self._part_of(flat, got.numel())
        text = (
            f"rank {self.rank}: {count:,} of {got64.numel():,} elements wrong; first {where}{part} = {value:.7g}, "
            f"expected {want:.7g}"
        )
        if value != value:  # NaN
            text += NAN_HINT
        elif float(tol64[flat]) > 0:
            text += f" (tolerance {float(tol64[flat]):.2g})"
        return text

    def _part_of(self, flat: int, n: int) -> str:
        """' (in rank 2's part)': whose shard of a tensor split over the ranks an element lies in."""
        if self.world < 2 or n < self.world:
            return ""
        for r, (start, length) in enumerate(self.shards(n)):
            if start <= flat < start + length:
                return f" (in part {r} of {self.world})"
        return ""
