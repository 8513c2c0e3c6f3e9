"""The tools a collective card's harness uses: inputs drawn from the judge's seed (in a rank and in the judge alike),
and, in a rank, the outputs with their poison and guard zone.

`InputKit` is what `make_inputs` is given on both sides: in a rank it draws
that rank's inputs on its device; in the judge (drill.judge.collective.check)
it draws every rank's again on the CPU for the expected result. `RankKit` adds
what only a rank does. A rank holds no reference and, once the learner's file
is loaded, no built-in collective: `builtin` is torch's module only while NCCL's
own collective is timed, before the learner's file is read.
"""

from __future__ import annotations

import time

import torch

from drill.judge.collective.inputs import drawn
from drill.judge.kitbase import GUARD_ELEMENTS, Check, CheckResult, Launch
from drill.judge.timed import Event
from drill.judge.torch_kit import guard_value, poison_output
from drill.kernel_shared.collective_sizes import shards
from drill.words import counted

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class InputKit:
    """Inputs and outputs of one rank's case: `randn` draws from the seed the judge gave this rank for it."""

    Launch = Launch
    Check = Check

    def __init__(self, rank: int, world: int, device: torch.device) -> None:
        self.torch = torch
        self.rank = rank
        self.world = world
        self.device = device
        self.gpu = device.type == "cuda"
        self.seed = 0
        self._stream = 0
        self._outputs: list[tuple[torch.Tensor, int]] = []

    @staticmethod
    def dtype(name: str) -> torch.dtype:
        return DTYPES[name]

    def begin_case(self, seed: int) -> None:
        """A new case: inputs from `seed`, counted from the first again; no outputs yet."""
        self.seed = seed
        self._stream = 0
        self._outputs = []

    def randn(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """`n` fresh values of this rank (in (-2, 2), never zero, exact in `dtype`); NaN just past them, so an
        over-read poisons what it touches."""
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        buf[:n] = drawn(self.seed, self._stream, n, dtype, self.device)
        buf[n:].fill_(float("nan"))
        self._stream += 1
        return buf[:n]

    def output(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """An output of `n` elements, NaN until written, with a guard zone after it that is checked after every run."""
        buf = torch.empty(n + GUARD_ELEMENTS, dtype=dtype, device=self.device)
        self._outputs.append((buf, n))
        poison_output(buf, n)
        return buf[:n]

    def shards(self, n: int) -> list[tuple[int, int]]:
        """(start, length) of each rank's part of `n` elements, as torch.tensor_split cuts them."""
        return shards(n, self.world)


class HostEvent:
    """What a CUDA event does for a timed call, with the host's clock (ranks on the CPU: nothing runs after return)."""

    def __init__(self) -> None:
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: HostEvent) -> float:
        return (end.at - self.at) * 1e3


class RankKit(InputKit):
    """What a collective harness is given as `kit` in a rank process."""

    def __init__(self, rank: int, world: int, device: torch.device, builtin: object = None) -> None:
        super().__init__(rank, world, device)
        self.builtin = builtin  # torch.distributed while NCCL's own collective is timed; None from then on

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
                    f"(the output has {n:,}), {counted(int(changed.shape[0]), 'guard element')} changed"
                )
        return None

    def synchronize(self) -> None:
        if self.gpu:
            torch.cuda.synchronize(self.device)

    def event(self) -> Event:
        """A CUDA event on a GPU; on the CPU (gloo) the host's clock, read when recorded."""
        if self.gpu:
            return torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        return HostEvent()

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
