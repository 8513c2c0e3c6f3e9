"""Reliability at scale: cluster MTBF, checkpoint size and time, and the checkpoint interval.

Failures are modelled as independent and exponential (a constant rate), the
assumption behind both Young's and Daly's intervals. Rates add, so N units
that each fail once per MTBF fail together N times as often. Times are in
any one unit (seconds on cards); the formulas do not care which.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from drill.calc import checks
from drill.calc.arguments import (
    BYTES,
    FRACTION,
    RATIO,
    SECONDS,
    Command,
    Rows,
    bandwidth,
    params_count,
    whole,
)
from drill.quantities import SECONDS_PER_DAY, SECONDS_PER_HOUR, parse_quantity

# Mixed-precision Adam: bf16 weights, then fp32 master weights, momentum and variance.
WEIGHT_BYTES = 2
OPTIMIZER_BYTES = 12


def cluster_mtbf(mtbf_one: float, units: int) -> float:
    """MTBF of `units` independent units that each fail at rate 1/mtbf_one: MTBF_one ÷ N.

    Exponential failure rates add; a synchronous job stops when any one unit
    fails, so the job sees the cluster MTBF.
    """
    mtbf = checks.positive("mtbf_one", mtbf_one)
    n = checks.count("units", units)
    return mtbf / n


def mtbf_from_failures(window: float, failures: int, units: int = 1) -> float:
    """Per-unit MTBF implied by `failures` seen in `window` on `units` units: window × N ÷ failures.

    Llama 3 (Grattafiori et al. 2024, arXiv:2407.21783, section 3.3.4):
    419 unexpected interruptions in 54 days on 16,384 H100s.
    """
    span = checks.positive("window", window)
    seen = checks.count("failures", failures)
    n = checks.count("units", units)
    return span * n / seen


def failure_probability(window: float, mtbf: float) -> float:
    """Probability of at least one failure in `window`: 1 − exp(−window ÷ MTBF) (exponential failures)."""
    span = checks.non_negative("window", window)
    mean = checks.positive("mtbf", mtbf)
    return -math.expm1(-span / mean)


def checkpoint_bytes(
    params: float, weight_bytes: float = WEIGHT_BYTES, optimizer_bytes: float = OPTIMIZER_BYTES
) -> float:
    """Bytes of a full training checkpoint: params × (weight bytes + optimizer bytes).

    Defaults: bf16 weights (2 B) plus Adam's fp32 master copy, momentum and
    variance (4 + 4 + 4 = 12 B, the ZeRO paper's K = 12), 14 B per parameter.
    Gradients are not saved: they are rebuilt by the next backward pass.
    BLOOM-176B's model card lists 329 GB of bf16 weights and 2.3 TB with
    optimizer states.
    """
    n = checks.non_negative("params", params)
    w = checks.non_negative("weight_bytes", weight_bytes)
    k = checks.non_negative("optimizer_bytes", optimizer_bytes)
    return n * (w + k)


def checkpoint_write_time(size_bytes: float, bandwidth: float) -> float:
    """Seconds to write `size_bytes` at an aggregate storage bandwidth (bytes/s): size ÷ bandwidth."""
    size = checks.non_negative("size_bytes", size_bytes)
    rate = checks.positive("bandwidth", bandwidth)
    return size / rate


def young_interval(checkpoint_time: float, mtbf: float) -> float:
    """Young's first-order optimum compute time between checkpoints: sqrt(2 × C × MTBF).

    Minimises C/T (checkpoint cost) + T/(2·MTBF) (half an interval of
    rework per failure). Young 1974, "A first order approximation to the
    optimum checkpoint interval", Communications of the ACM 17(9).
    """
    c = checks.positive("checkpoint_time", checkpoint_time)
    m = checks.positive("mtbf", mtbf)
    return math.sqrt(2 * c * m)


def daly_interval(checkpoint_time: float, mtbf: float) -> float:
    """Daly's higher-order optimum compute time between checkpoints.

    For C < 2M: sqrt(2CM) × [1 + (1/3)·sqrt(C/(2M)) + (1/9)·(C/(2M))] − C;
    for C >= 2M: M. Daly 2006, "A higher order estimate of the optimum
    checkpoint interval for restart dumps", Future Generation Computer
    Systems 22(3). His Fig. 3: M = 24 h, C = 5 min gives 117 min.
    """
    c = checks.positive("checkpoint_time", checkpoint_time)
    m = checks.positive("mtbf", mtbf)
    if c >= 2 * m:
        return m
    x = c / (2 * m)
    return math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c


def overhead_fraction(interval: float, checkpoint_time: float, mtbf: float, restart_time: float = 0.0) -> float:
    """First-order share of time lost to checkpointing and failures: C/T + (T/2 + R)/M.

    C/T: blocking checkpoint writes; per failure (one every M on average)
    half an interval of rework plus the restart R. At T = sqrt(2CM) the
    first two terms give sqrt(2C/M). Valid while C ≪ T ≪ M, as in Young's
    derivation (Young 1974).
    """
    t = checks.positive("interval", interval)
    c = checks.non_negative("checkpoint_time", checkpoint_time)
    m = checks.positive("mtbf", mtbf)
    r = checks.non_negative("restart_time", restart_time)
    return c / t + (t / 2 + r) / m


def expected_lost_time(window: float, mtbf: float, interval: float, restart_time: float = 0.0) -> float:
    """Expected time lost to failures in `window`: (window ÷ MTBF) × (interval/2 + restart).

    Each failure throws away on average half an interval of work since the
    last checkpoint, then pays the restart (detect, reschedule, reload).
    """
    span = checks.non_negative("window", window)
    m = checks.positive("mtbf", mtbf)
    t = checks.non_negative("interval", interval)
    r = checks.non_negative("restart_time", restart_time)
    return span / m * (t / 2 + r)


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "cluster_mtbf": cluster_mtbf,
    "mtbf_from_failures": mtbf_from_failures,
    "failure_probability": failure_probability,
    "checkpoint_bytes": checkpoint_bytes,
    "checkpoint_write_time": checkpoint_write_time,
    "young_interval": young_interval,
    "daly_interval": daly_interval,
    "overhead_fraction": overhead_fraction,
    "expected_lost_time": expected_lost_time,
}


_DAYS = ("d", "day", "days")


def duration(text: str) -> float:
    """A time in seconds: "300" (seconds), "5min", "24h", "54d"."""
    stripped = text.strip()
    for suffix in sorted(_DAYS, key=len, reverse=True):
        head = stripped[: -len(suffix)]
        if stripped.lower().endswith(suffix) and head.strip() and head.strip()[-1].isdigit():
            return duration(head) * SECONDS_PER_DAY
    try:
        q = parse_quantity(stripped, expect="seconds")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if q.dimension not in (None, "seconds"):
        raise argparse.ArgumentTypeError(f"not a time: {text}")
    if not math.isfinite(q.value) or q.value < 0:
        raise argparse.ArgumentTypeError(f"must be a time >= 0: {text}")
    return q.value


def _reliability(args: argparse.Namespace) -> tuple[Rows, str]:
    mtbf = cluster_mtbf(args.mtbf, args.gpus)
    rows: Rows = {"cluster_mtbf_s": (mtbf, SECONDS)}
    if args.window is not None:
        rows["failures_in_window"] = (args.window / mtbf, RATIO)
        rows["p_failure_in_window"] = (failure_probability(args.window, mtbf), FRACTION)
    if args.checkpoint_time is not None:
        c = args.checkpoint_time
    elif args.params is not None and args.bandwidth is not None:
        size = checkpoint_bytes(args.params)
        rows["checkpoint_bytes"] = (size, BYTES)
        c = checkpoint_write_time(size, args.bandwidth)
    else:
        c = None
    if c is not None and c > 0:
        if c >= 2 * mtbf:
            raise ValueError("a checkpoint takes at least two cluster MTBFs: no interval makes progress")
        young = young_interval(c, mtbf)
        daly = daly_interval(c, mtbf)
        rows.update(
            {
                "checkpoint_s": (c, SECONDS),
                "young_interval_s": (young, SECONDS),
                "daly_interval_s": (daly, SECONDS),
                "overhead_at_daly": (overhead_fraction(daly, c, mtbf, args.restart_time), FRACTION),
            }
        )
    mtbf_hours = args.mtbf / SECONDS_PER_HOUR
    title = f"reliability: {args.gpus:,} units, per-unit MTBF {mtbf_hours:,.0f} h (exponential failures)"
    return rows, title


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
    p = command(
        "reliability",
        _reliability,
        "cluster MTBF, failure odds, checkpoint size and time, Young and Daly intervals",
    )
    p.add_argument("--mtbf", required=True, type=duration, metavar="T", help="MTBF of one unit: 50000h, 2083d")
    p.add_argument("--gpus", required=True, type=whole, metavar="N", help="units that must all stay up")
    p.add_argument("--window", type=duration, metavar="T", help="a span to judge: 24h, 54d")
    p.add_argument("--params", type=params_count, metavar="P", help="parameters, for a 14 B/param checkpoint")
    p.add_argument("--bandwidth", type=bandwidth, metavar="B", help="aggregate write bandwidth: 2TB/s")
    p.add_argument("--checkpoint-time", type=duration, metavar="C", help="blocking write time, instead of P and B")
    p.add_argument("--restart-time", type=duration, default=0.0, metavar="R", help="restart cost per failure")
