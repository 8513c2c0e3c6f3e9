"""`drill calc moe-params`, `moe-a2a` and `moe-capacity`: the MoE calculators (drill.calc.moe) on the command line."""

from __future__ import annotations

import argparse

from drill.calc import checks, data
from drill.calc.arguments import (
    BYTES,
    COUNT,
    FRACTION,
    RATIO,
    SECONDS,
    Command,
    Rows,
    add_model,
    dtype,
    quantity,
    whole,
)
from drill.calc.dtypes import dtype_bytes
from drill.calc.moe import (
    is_mla,
    mla_kv_bytes_per_token,
    mla_mha_kv_bytes_per_token,
    moe_a2a_bytes,
    moe_capacity,
    moe_params,
    moe_weight_bytes_per_gpu,
)


def _params(args: argparse.Namespace) -> tuple[Rows, str]:
    model = data.model(args.model)
    counts = moe_params(model)
    size = dtype_bytes(args.dtype)
    rows: Rows = {
        "total": (counts["total"], COUNT),
        "active": (counts["active"], COUNT),
        "active_fraction": (counts["active"] / counts["total"], FRACTION),
        "routed_experts": (counts["routed_experts"], COUNT),
        "shared_experts": (counts["shared_experts"], COUNT),
        "non_routed": (counts["non_routed"], COUNT),
        "per_expert": (counts["per_expert"], COUNT),
        "weight_bytes": (counts["total"] * size, BYTES),
        "forward_flops_per_token": (2 * counts["active"], COUNT),
    }
    title = f"parameters of {model['title']} ({args.dtype} weights)"
    if args.ep is not None:
        rows["weight_bytes_per_gpu"] = (moe_weight_bytes_per_gpu(model, args.ep, args.dtype), BYTES)
        title += f", expert parallel over {args.ep} GPUs"
    if is_mla(model):
        rows["mla_kv_bytes_per_token"] = (mla_kv_bytes_per_token(model, args.dtype), BYTES)
        rows["mha_kv_bytes_per_token"] = (mla_mha_kv_bytes_per_token(model, args.dtype), BYTES)
    return rows, title


def _a2a(args: argparse.Namespace) -> tuple[Rows, str]:
    dispatch_bytes_per_element = dtype_bytes(args.dispatch_dtype)
    if args.scale_block:  # one fp32 scale (4 bytes) per block of dispatched elements
        dispatch_bytes_per_element += 4 / args.scale_block
    result = moe_a2a_bytes(
        args.tokens,
        args.hidden,
        args.top_k,
        args.ep,
        dispatch_bytes_per_element,
        dtype_bytes(args.combine_dtype),
        args.include_local,
    )
    rows: Rows = {
        "dispatch_bytes": (result["dispatch"], BYTES),
        "combine_bytes": (result["combine"], BYTES),
        "total_bytes": (result["total"], BYTES),
        "rows_sent": (result["rows"], RATIO),
    }
    if args.bandwidth is not None:
        bandwidth = checks.positive("bandwidth", args.bandwidth)
        rows["time_s"] = (result["total"] / bandwidth, SECONDS)
    where = "all rows" if args.include_local else "rows for other GPUs only"
    title = (
        f"MoE all-to-all per GPU per layer (forward): {args.tokens} tokens, hidden {args.hidden}, "
        f"top-{args.top_k}, EP {args.ep}, dispatch {args.dispatch_dtype}, combine {args.combine_dtype}, {where}"
    )
    return rows, title


def _capacity(args: argparse.Namespace) -> tuple[Rows, str]:
    capacity = moe_capacity(args.tokens, args.experts, args.capacity_factor, args.top_k)
    slots = capacity * args.experts
    rows: Rows = {
        "capacity": (capacity, COUNT),
        "slots": (slots, COUNT),
        "padding_fraction_if_even": (1 - args.tokens * args.top_k / slots, FRACTION),
    }
    if args.hidden is not None:
        rows["buffer_bytes"] = (slots * args.hidden * dtype_bytes(args.dtype), BYTES)
    title = (
        f"expert capacity: {args.tokens} tokens, {args.experts} experts, top-{args.top_k}, "
        f"capacity factor {args.capacity_factor:g}"
    )
    return rows, title


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
    p = command("moe-params", _params, "total and active parameters of an MoE model in cards/data/models.yaml")
    add_model(p, experts=True)
    p.add_argument("--dtype", type=dtype, default="bf16", help="weight dtype for the byte rows (default bf16)")
    p.add_argument("--ep", type=whole, metavar="N", help="expert-parallel GPUs: weight bytes on the fullest GPU")

    p = command("moe-a2a", _a2a, "bytes one GPU sends in an MoE layer's dispatch and combine all-to-alls")
    p.add_argument("--tokens", required=True, type=whole, metavar="T", help="tokens on this GPU")
    p.add_argument("--hidden", required=True, type=whole, metavar="H")
    p.add_argument("--top-k", required=True, type=whole, metavar="K", help="experts per token")
    p.add_argument("--ep", required=True, type=whole, metavar="N", help="expert-parallel GPUs")
    p.add_argument("--dispatch-dtype", type=dtype, default="bf16", metavar="DTYPE")
    p.add_argument("--combine-dtype", type=dtype, default="bf16", metavar="DTYPE")
    p.add_argument(
        "--scale-block", type=whole, metavar="N", help="add one fp32 scale per N dispatched elements (FP8 dispatch)"
    )
    p.add_argument("--include-local", action="store_true", help="count rows for experts on this GPU too")
    p.add_argument("--bandwidth", type=quantity, metavar="B", help="bytes per second, e.g. 50GB: adds a time row")

    p = command("moe-capacity", _capacity, "tokens per expert for a capacity factor (Switch Transformer)")
    p.add_argument("--tokens", required=True, type=whole, metavar="T", help="tokens in the routing group")
    p.add_argument("--experts", required=True, type=whole, metavar="E")
    p.add_argument("--capacity-factor", required=True, type=float, metavar="C")
    p.add_argument("--top-k", type=whole, default=1, metavar="K", help="experts per token (default 1)")
    p.add_argument("--hidden", type=whole, metavar="H", help="adds the dispatch buffer size")
    p.add_argument("--dtype", type=dtype, default="bf16")
