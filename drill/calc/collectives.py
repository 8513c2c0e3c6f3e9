"""Bytes each rank moves in a collective, with the bus-bandwidth factors of nccl-tests doc/PERFORMANCE.md."""

from __future__ import annotations

import math

from drill.calc import checks

OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce")
_ALIASES = {op.replace("-", ""): op for op in OPS} | {op.replace("-", "_"): op for op in OPS}


def op_name(op: str) -> str:
    """The canonical op name: 'allreduce' and 'all_reduce' mean 'all-reduce'."""
    key = str(op).strip().lower()
    key = _ALIASES.get(key, key)
    return checks.choice("op", key, OPS)


def bus_factor(gpus: int, op: str = "all-reduce") -> float:
    """busbw / algbw: 2(n-1)/n for all-reduce; (n-1)/n for reduce-scatter, all-gather, all-to-all; 1 otherwise."""
    n = checks.count("gpus", gpus)
    op = op_name(op)
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op in ("reduce-scatter", "all-gather", "all-to-all"):
        return (n - 1) / n
    return 1.0


def collective_bytes_per_rank(gpus: int, size: float, op: str = "all-reduce") -> float:
    """Bytes a rank sends, on average over the ranks, for a collective over a buffer of `size` bytes.

    `size` is the full buffer: the all-reduced tensor, the gathered output, the
    scattered input. A ring all-reduce is a reduce-scatter then an all-gather,
    hence twice (n-1)/n; in an all-to-all each rank sends n-1 of its n chunks
    straight to their owners, (n-1)/n. Broadcast and reduce run as a pipelined
    chain: every rank but the last forwards the whole buffer and the last sends
    nothing, so the average is (n-1)/n too, although nccl-tests' bus factor is 1
    (every link but one carries the whole buffer).
    """
    size = checks.non_negative("size", size)
    if op_name(op) in ("broadcast", "reduce"):
        n = checks.count("gpus", gpus)
        return (n - 1) / n * size
    return bus_factor(gpus, op) * size


def transfer_time(size_bytes: float, bytes_per_s: float) -> float:
    """Seconds to move `size_bytes` at `bytes_per_s`, ignoring latency."""
    return checks.non_negative("size_bytes", size_bytes) / checks.positive("bytes_per_s", bytes_per_s)


def ring_allreduce_time(gpus: int, size: float, bytes_per_s: float, latency: float) -> float:
    """Seconds for a ring all-reduce of `size` bytes: 2(n−1) steps of latency α, and 2(n−1)/n × size at the link rate.

    The latency-bandwidth (α-β) model of Thakur, Rabenseifner and Gropp 2005 ("Optimization of collective
    communication operations in MPICH"): a reduce-scatter then an all-gather, n−1 steps each.
    """
    n = checks.count("gpus", gpus)
    alpha = checks.non_negative("latency", latency)
    return 2 * (n - 1) * alpha + transfer_time(bus_factor(n) * size, bytes_per_s)


def tree_allreduce_time(gpus: int, size: float, bytes_per_s: float, latency: float) -> float:
    """Seconds for a pipelined (double binary) tree all-reduce: 2 ⌈log2 n⌉ steps of α, and 2 × size at the link rate.

    A reduce up the tree then a broadcast down it, each about ⌈log2 n⌉ hops deep; pipelined in chunks over two
    complementary trees, each rank sends about the whole buffer up and down (Sanders, Speck and Träff 2009,
    "Two-tree algorithms for full bandwidth broadcast, reduction and scan"; NCCL 2.4's double binary trees).
    Latency grows with log n instead of n; the bandwidth term is a little above the ring's 2(n−1)/n.
    """
    n = checks.count("gpus", gpus)
    alpha = checks.non_negative("latency", latency)
    depth = math.ceil(math.log2(n)) if n > 1 else 0
    moved = 2 * checks.non_negative("size", size) if n > 1 else 0.0
    return 2 * depth * alpha + transfer_time(moved, bytes_per_s)
