"""The sizes every collective card is checked and timed on, and the bytes its figure counts (no torch).

The all-gather, reduce-scatter and ring all-reduce harnesses share them; each
keeps its own reference, check and bus-bandwidth factor.
"""

from __future__ import annotations

from typing import Any

MIB = 2**20


def cases(world: int, gpu: bool) -> list[dict[str, Any]]:
    """Sizes no world divides (1, 3, 7), a prime-ish length, bfloat16 with its looser tolerance."""
    sizes = [("float32", 1), ("float32", 3), ("float32", 7), ("float32", 1000), ("float32", 65537)]
    sizes += [("bfloat16", 1), ("bfloat16", 1001), ("bfloat16", 65537)]
    if gpu:
        sizes += [("float32", 1000003), ("bfloat16", 1000003)]
    return [{"name": f"{dtype} n={n:,}", "dtype": dtype, "numel": n} for dtype, n in sizes]


def timing_cases(world: int, *, equal_parts: bool = False) -> list[dict[str, Any]]:
    """The scored size first (the verdict's headline), then the two smaller ones; float32.

    With `equal_parts` the whole array is cut to a multiple of the ranks, as
    NCCL's all_gather_into_tensor and reduce_scatter_tensor need.
    """
    out = []
    for mib, reps in ((256, 20), (16, 40), (1, 100)):
        numel = mib * MIB // 4
        if equal_parts:
            numel = numel // world * world
        out.append({"name": f"{mib} MiB", "dtype": "float32", "numel": numel, "reps": reps, "warmup": 3})
    return out


def bytes_moved(case: dict[str, Any]) -> int:
    """S of nccl-tests: the bytes of the whole array (count × element size; for the halves, count per rank × n)."""
    return int(case["numel"]) * (2 if case["dtype"] == "bfloat16" else 4)
