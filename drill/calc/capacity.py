"""Serving capacity and cost: GPUs for a load at a latency target, and dollars per million tokens.

Sizing a fleet reduces to a few ratios: the token rate the traffic demands,
the token rate one replica sustains while it still meets the latency SLO, the
price of a GPU-hour (always a given, never a market quote) and the power a
GPU draws. Little's law links the arrival rate to the requests in flight.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping

from drill.calc import checks
from drill.calc.arguments import COUNT, RATIO, Command, Rows, share, whole
from drill.calc.data import as_gpu, as_model
from drill.calc.inference import decode_time_lower_bound, weight_bytes
from drill.calc.kv import kv_bytes
from drill.quantities import SECONDS_PER_HOUR
from drill.words import counted

JOULES_PER_KWH = 1000.0 * SECONDS_PER_HOUR  # a kilowatt for an hour

# Slack for a ratio that is whole in exact arithmetic (2048.0000000001 replicas is 2048).
_WHOLE_SLACK = 1e-9


def concurrency(arrival_rate: float, time_in_system: float) -> float:
    """Requests in the system on average, by Little's law: L = λ·W.

    `arrival_rate` in requests per second, `time_in_system` in seconds
    (queueing included). Holds for any stable system, whatever the arrival
    pattern. Source: Little 1961, "A Proof for the Queuing Formula
    L = λW", Operations Research 9(3).
    """
    rate = checks.non_negative("arrival_rate", arrival_rate)
    time = checks.non_negative("time_in_system", time_in_system)
    return rate * time


def gpus_for_load(
    qps: float,
    tokens_per_request: float,
    tokens_per_second: float,
    gpus_per_replica: int = 1,
    utilisation: float = 1.0,
) -> int:
    """GPUs needed to serve `qps` requests per second within the SLO.

    replicas = ceil(qps × tokens_per_request ÷ (tokens_per_second ×
    utilisation)); GPUs = replicas × gpus_per_replica. `tokens_per_second`
    is what one replica sustains *while meeting the latency SLO* (not its
    peak), and `utilisation` is the planned load ceiling (0.7 keeps 30 %
    headroom for bursts and failures). A throughput-based bound: it assumes
    the load spreads evenly over replicas.
    """
    rate = checks.non_negative("qps", qps)
    tokens = checks.non_negative("tokens_per_request", tokens_per_request)
    supply = checks.positive("tokens_per_second", tokens_per_second)
    per_replica = checks.count("gpus_per_replica", gpus_per_replica)
    ceiling = checks.fraction("utilisation", utilisation)
    needed = rate * tokens / (supply * ceiling)
    replicas = math.ceil(needed - _WHOLE_SLACK) if needed > 0 else 0
    return replicas * per_replica


def dollars_per_million_tokens(dollars_per_gpu_hour: float, tokens_per_second: float, gpus: int = 1) -> float:
    """Cost of one million tokens: price × gpus ÷ (tokens_per_second × 3600) × 1e6.

    `tokens_per_second` is the rate of the whole group of `gpus` (one replica
    of `gpus` GPUs, say) at the load it really runs at; the price is a given
    of the problem, not a quote.
    """
    price = checks.non_negative("dollars_per_gpu_hour", dollars_per_gpu_hour)
    rate = checks.positive("tokens_per_second", tokens_per_second)
    n = checks.count("gpus", gpus)
    return price * n / (rate * SECONDS_PER_HOUR) * 1e6


def energy_kwh(gpu_hours: float, watts_per_gpu: float, pue: float = 1.0) -> float:
    """Facility energy in kWh: GPU-hours × watts ÷ 1000 × PUE.

    PUE (power usage effectiveness) = facility power ÷ IT power, >= 1; it
    adds cooling and power-conversion losses. Leave it at 1 for the GPUs'
    own energy. Luccioni et al. 2022 (arXiv:2211.02001) count BLOOM's
    dynamic training energy this way: 1,082,990 GPU-hours × 400 W.
    """
    hours = checks.non_negative("gpu_hours", gpu_hours)
    watts = checks.non_negative("watts_per_gpu", watts_per_gpu)
    overhead = checks.number("pue", pue, minimum=1.0)
    return hours * watts / 1000 * overhead


def kwh_per_million_tokens(watts_per_gpu: float, tokens_per_second: float, gpus: int = 1, pue: float = 1.0) -> float:
    """Facility energy per million tokens in kWh: watts × gpus × PUE ÷ tokens_per_second × 1e6 ÷ 3.6e6.

    `tokens_per_second` is the rate of the group of `gpus` GPUs; a watt is a
    joule per second, so watts ÷ (tokens/s) is joules per token.
    """
    watts = checks.non_negative("watts_per_gpu", watts_per_gpu)
    rate = checks.positive("tokens_per_second", tokens_per_second)
    n = checks.count("gpus", gpus)
    overhead = checks.number("pue", pue, minimum=1.0)
    return watts * n * overhead / rate * 1e6 / JOULES_PER_KWH


def decode_tokens_per_second(
    model: Mapping[str, object] | str,
    gpu: Mapping[str, object] | str,
    batch: int,
    context: int,
    dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> float:
    """Upper bound on decode tokens/s of one GPU: batch ÷ the decode-step lower bound.

    Each step reads all weights once and every sequence's KV once from HBM
    (see drill.calc.inference.decode_time_lower_bound) and emits one token
    per sequence.
    """
    step = decode_time_lower_bound(as_model(model), as_gpu(gpu), batch, context, dtype, kv_dtype)
    return batch / step


def max_batch_for_tpot(
    model: Mapping[str, object] | str,
    gpu: Mapping[str, object] | str,
    context: int,
    tpot: float,
    dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> int:
    """Largest batch whose decode-step lower bound still fits a TPOT target; 0 if none does.

    floor((tpot × HBM bandwidth − weight bytes) ÷ KV bytes per sequence),
    with `context` cached tokens per sequence. The memory-traffic bound is
    optimistic, so a real engine reaches the target at a smaller batch.
    """
    m = as_model(model)
    g = as_gpu(gpu)
    tokens = checks.count("context", context)
    target = checks.positive("tpot", tpot)
    bandwidth = checks.positive("hbm_bandwidth", checks.field(g, "hbm_bandwidth", "gpu"))
    spare = target * bandwidth - weight_bytes(m, dtype)
    if spare <= 0:
        return 0
    return math.floor(spare / kv_bytes(m, tokens, 1, kv_dtype) + _WHOLE_SLACK)


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "concurrency": concurrency,
    "gpus_for_load": gpus_for_load,
    "dollars_per_million_tokens": dollars_per_million_tokens,
    "energy_kwh": energy_kwh,
    "kwh_per_million_tokens": kwh_per_million_tokens,
    "decode_tokens_per_second": decode_tokens_per_second,
    "max_batch_for_tpot": max_batch_for_tpot,
}


def _capacity(args: argparse.Namespace) -> tuple[Rows, str]:
    rate = args.tokens_per_second
    gpus = gpus_for_load(args.qps, args.tokens_per_request, rate, args.gpus_per_replica, args.utilisation)
    demand = args.qps * args.tokens_per_request
    rows: Rows = {
        "gpus": (gpus, COUNT),
        "replicas": (gpus // args.gpus_per_replica, COUNT),
        "demand_tokens_per_s": (demand, RATIO),
    }
    if demand > 0 and args.dollars_per_gpu_hour is not None:
        # the fleet is paid for whole, so the tokens it really serves carry its whole cost
        rows["dollars_per_million_tokens"] = (
            dollars_per_million_tokens(args.dollars_per_gpu_hour, demand, gpus),
            RATIO,
        )
    if demand > 0 and args.watts is not None:
        rows["kwh_per_million_tokens"] = (kwh_per_million_tokens(args.watts, demand, gpus, args.pue), RATIO)
    title = (
        f"capacity: {args.qps:g} req/s x {args.tokens_per_request:g} tokens, "
        f"{rate:g} tokens/s per replica of {counted(args.gpus_per_replica, 'GPU')} at the SLO, "
        f"utilisation ceiling {args.utilisation:g}"
    )
    return rows, title


def _number(text: str) -> float:
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0: {text}")
    return value


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
    p = command(
        "capacity",
        _capacity,
        "GPUs for a request rate at an SLO; $ and kWh per million tokens (prices and power are givens)",
    )
    p.add_argument("--qps", required=True, type=_number, metavar="R", help="requests per second")
    p.add_argument("--tokens-per-request", required=True, type=_number, metavar="T", help="tokens each request costs")
    p.add_argument(
        "--tokens-per-second",
        required=True,
        type=_number,
        metavar="X",
        help="tokens/s one replica sustains while meeting the SLO",
    )
    p.add_argument("--gpus-per-replica", type=whole, default=1, metavar="G")
    p.add_argument(
        "--utilisation", type=share, default=1.0, metavar="U", help="planned load ceiling, 0-1 or 0-100%% (default 1)"
    )
    p.add_argument("--dollars-per-gpu-hour", type=_number, metavar="P", help="a given price, not a quote")
    p.add_argument("--watts", type=_number, metavar="W", help="average draw per GPU")
    p.add_argument("--pue", type=_number, default=1.0, metavar="PUE", help="facility power / IT power (>= 1)")
