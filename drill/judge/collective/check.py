"""The judge's side of a collective card's check: every rank's inputs drawn again from their seeds on the CPU,
the expected result computed here, and each rank's output (sent back as bytes) compared with it.

Nothing of this runs in a rank: a rank's process never holds the expected
result nor another rank's inputs, so no walk of its frames, heap or closures
can find them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

import torch

from drill.judge.collective.kit import InputKit
from drill.judge.harness import Case, CollectiveHarness, Inputs
from drill.judge.kitbase import Check, CheckResult, unravel

# The unit roundoff of each type: half the gap between 1 and the next number.
UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.bfloat16: 2.0**-8, torch.float16: 2.0**-11}
TOLERANCE_SLACK = 2.0  # above the worst-case bound of a sum in any order, for the rounding of the inputs' own sum
NAN_HINT = (
    " (NaN: never written, or read before its receive completed: call wait() on the handle that irecv or "
    "batch_isend_irecv returned before reading the buffer)"
)
CPU = torch.device("cpu")


class CheckKit(InputKit):
    """What a collective harness's `reference` and `compare` are given, in the judge: rank `rank`'s view, on the CPU."""

    def __init__(self, rank: int, world: int) -> None:
        super().__init__(rank, world, CPU)

    def sum_tolerance(self, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """How far a sum over the ranks may be from the exact one, element by element.

        Adding `world` values in any order, each addition rounded to `dtype`, is
        off by at most (world - 1) · u · Σ|x| (u the unit roundoff), and storing
        the result rounds once more (u · |sum| ≤ u · Σ|x|): so world · u · Σ|x|,
        doubled. It grows with the number of ranks, and is exact for one.
        """
        return scale * (TOLERANCE_SLACK * self.world * UNIT_ROUNDOFF.get(dtype, 2.0**-8))

    def exact_sum(self, parts: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        """The exact sum (float64) of every rank's `parts[r]`, as `expected`, and its `tolerance`."""
        total = torch.zeros(parts[0].shape, dtype=torch.float64)
        scale = torch.zeros(parts[0].shape, dtype=torch.float64)
        for part in parts:
            total += part.double()
            scale += part.double().abs()
        return {"expected": total, "tolerance": self.sum_tolerance(scale, parts[0].dtype)}

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
        """' (in part 2 of 4)': whose shard of a tensor split over the ranks an element lies in."""
        if self.world < 2 or n < self.world:
            return ""
        for r, (start, length) in enumerate(self.shards(n)):
            if start <= flat < start + length:
                return f" (in part {r} of {self.world})"
        return ""


class RankReference(TypedDict):
    """What a collective harness's `reference` gives for one rank: the values its output must hold, and how near."""

    expected: torch.Tensor
    tolerance: torch.Tensor


@dataclass
class Expected:
    """One case's expected result, per rank, with each rank's inputs and its kit (for `compare`)."""

    kits: list[CheckKit]
    inputs: list[Inputs]
    references: list[RankReference]


def expected(harness: CollectiveHarness, case: Case, seeds: list[int]) -> Expected:
    """Every rank's inputs drawn again from its seed, and the harness's expected result for each rank."""
    world = len(seeds)
    kits = [CheckKit(rank, world) for rank in range(world)]
    inputs: list[Inputs] = []
    for kit, seed in zip(kits, seeds, strict=True):
        kit.begin_case(seed)
        inputs.append(harness.make_inputs(case, kit))
    references = [cast(RankReference, r) for r in harness.reference(inputs, kits[0])]
    return Expected(kits, inputs, references)


def compare(harness: CollectiveHarness, want: Expected, rank: int, result: torch.Tensor) -> CheckResult:
    """Rank `rank`'s output (as it sent it back) against what the judge expects of it."""
    return harness.compare(result, want.references[rank], want.inputs[rank], want.kits[rank])


def compare_sampled(want: Expected, rank: int, index: torch.Tensor, values: torch.Tensor) -> CheckResult:
    """Rank `rank`'s output at `index` (a timed call's sample) against the expected values there."""
    reference = want.references[rank]
    expected_values = reference["expected"].reshape(-1)[index]
    tolerance = reference["tolerance"].reshape(-1)[index]
    return want.kits[rank].within(values, expected_values, tolerance, label="sampled output")
