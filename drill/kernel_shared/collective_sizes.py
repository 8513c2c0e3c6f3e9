"""The sizes every collective card is checked and timed on, the bytes its figure counts, and the fewest bytes each
rank must move for it (no torch).

The all-gather, reduce-scatter and ring all-reduce harnesses share them; each
keeps its own reference, check and bus-bandwidth factor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Required, TypedDict

MIB = 2**20


class CollectiveCase(TypedDict, total=False):
    """One size a collective card is checked or timed at."""

    name: Required[str]
    dtype: Required[str]  # "float32" or "bfloat16"
    numel: Required[int]  # elements of the whole array
    reps: int  # timed calls
    warmup: int


def cases(world: int, gpu: bool) -> list[CollectiveCase]:
    """Sizes no world divides (1, 3, 7), a prime-ish length, bfloat16 with its looser tolerance."""
    sizes = [("float32", 1), ("float32", 3), ("float32", 7), ("float32", 1000), ("float32", 65537)]
    sizes += [("bfloat16", 1), ("bfloat16", 1001), ("bfloat16", 65537)]
    if gpu:
        sizes += [("float32", 1000003), ("bfloat16", 1000003)]
    return [{"name": f"{dtype} n={n:,}", "dtype": dtype, "numel": n} for dtype, n in sizes]


def timing_cases(world: int, *, equal_parts: bool = False) -> list[CollectiveCase]:
    """The scored size first (the verdict's headline), then the two smaller ones; float32.

    With `equal_parts` the whole array is cut to a multiple of the ranks, as
    NCCL's all_gather_into_tensor and reduce_scatter_tensor need.
    """
    out: list[CollectiveCase] = []
    for mib, reps in ((256, 20), (16, 40), (1, 100)):
        numel = mib * MIB // 4
        if equal_parts:
            numel = numel // world * world
        out.append({"name": f"{mib} MiB", "dtype": "float32", "numel": numel, "reps": reps, "warmup": 3})
    return out


def bytes_moved(case: CollectiveCase) -> int:
    """S of nccl-tests: the bytes of the whole array (count × element size; for the halves, count per rank × n)."""
    return int(case["numel"]) * element_bytes(str(case["dtype"]))


def element_bytes(dtype: str) -> int:
    return 2 if dtype in ("bfloat16", "float16") else 4


def shards(n: int, world: int) -> list[tuple[int, int]]:
    """(start, length) of each rank's part of `n` elements, as torch.tensor_split cuts them: the first n % world
    parts one element longer."""
    base, extra = divmod(n, world)
    out = []
    start = 0
    for r in range(world):
        length = base + (1 if r < extra else 0)
        out.append((start, length))
        start += length
    return out


@dataclass(frozen=True)
class TrafficFloor:
    """The fewest bytes a collective of one size can move, per rank each way and over all ranks together.

    Each element of a rank's contribution must leave it at least once (alone or
    added into others), and each element of its result must reach it at least
    once. An all-reduce sends every element 2(n-1) times over the n ranks at
    the least (n-1 to add it up in one place, n-1 to hand the sum to the
    others): 2(n-1)/n of the array per rank on average, which a ring meets on
    every rank and a star through rank 0 meets in all.
    """

    what: str  # "an all-reduce of 256 KiB over 3 ranks"
    sent: tuple[int, ...]  # per rank
    received: tuple[int, ...]  # per rank
    total: int  # sent by all ranks together


def all_reduce_floor(case: CollectiveCase, world: int) -> TrafficFloor:
    size = int(case["numel"]) * element_bytes(str(case["dtype"]))
    return TrafficFloor(
        f"an all-reduce of {size_words(size)} over {world} ranks",
        (size,) * world,
        (size,) * world,
        2 * (world - 1) * size,
    )


def all_gather_floor(case: CollectiveCase, world: int) -> TrafficFloor:
    """Each rank sends its own part at least once and receives every other part."""
    size = element_bytes(str(case["dtype"]))
    numel = int(case["numel"])
    parts = [length * size for _, length in shards(numel, world)]
    return TrafficFloor(
        f"an all-gather of {size_words(numel * size)} over {world} ranks",
        tuple(parts),
        tuple(numel * size - part for part in parts),
        (world - 1) * numel * size,
    )


def reduce_scatter_floor(case: CollectiveCase, world: int) -> TrafficFloor:
    """Each rank sends every element outside its part at least once and receives every element of its part."""
    size = element_bytes(str(case["dtype"]))
    numel = int(case["numel"])
    parts = [length * size for _, length in shards(numel, world)]
    return TrafficFloor(
        f"a reduce-scatter of {size_words(numel * size)} over {world} ranks",
        tuple(numel * size - part for part in parts),
        tuple(parts),
        (world - 1) * numel * size,
    )


def size_words(size: float) -> str:
    """'1.5 MiB', '256 KiB', '12 B'."""
    for unit, scale in (("GiB", 2**30), ("MiB", MIB), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"
