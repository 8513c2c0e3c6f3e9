"""`drill calc`: the calculators on the command line, as a table or as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from drill.calc import (
    activations,
    capacity,
    collectives,
    context,
    data,
    gemm,
    kv,
    moe,
    pipeline,
    reliability,
    roofline,
    zero,
)
from drill.calc.arguments import (
    BYTES,
    COUNT,
    FRACTION,
    RATIO,
    SECONDS,
    TEXT,
    TOKENS_HELP,
    Handler,
    OneLineParser,
    Rows,
    add_model,
    dtype,
    params_count,
    quantity,
    whole,
)
from drill.calc.ledger import OPTIMIZER_BYTES, training_ledger
from drill.calc.parameter_count import breakdown
from drill.calc.sizes import GB, GiB
from drill.cli import calc_moe

# --- the sub-commands: each returns (rows, title)


def _params(args: argparse.Namespace) -> tuple[Rows, str]:
    model = data.model(args.model)
    if model.get("experts") or model.get("kv_lora_rank"):  # every expert counted; active ones shown too
        counts = moe.moe_params(model)
        return {key: (value, COUNT) for key, value in counts.items()}, f"parameters of {model['title']}"
    parts = breakdown(model)
    rows: Rows = {
        "params": (parts.total, COUNT),
        "embedding": (parts.embedding, COUNT),
        "positions": (parts.positions, COUNT),
        "per_layer": (parts.per_layer, COUNT),
        "layers": (parts.layers, COUNT),
        "final_norm": (parts.final_norm, COUNT),
        "head": (parts.head, COUNT),
    }
    return rows, f"parameters of {model['title']}"


def _zero(args: argparse.Namespace) -> tuple[Rows, str]:
    terms = zero.zero_terms(args.params, args.gpus, args.stage, args.k)
    rows: Rows = {"bytes_per_gpu": (sum(terms.values()), BYTES)}
    rows.update({key: (value, BYTES) for key, value in terms.items()})
    return rows, f"ZeRO stage {args.stage}: {args.params:,.0f} params over {args.gpus} GPUs, K = {args.k:g}"


def _kv(args: argparse.Namespace) -> tuple[Rows, str]:
    model = data.model(args.model)
    per_token = kv.kv_bytes_per_token(model, args.dtype)
    total = kv.kv_bytes(model, args.tokens, args.batch, args.dtype)
    rows: Rows = {"bytes": (total, BYTES), "bytes_per_token": (per_token, BYTES)}
    return rows, f"KV cache of {model['title']}: {args.batch:,} x {args.tokens:,} tokens in {args.dtype}"


def _allreduce(args: argparse.Namespace) -> tuple[Rows, str]:
    op = collectives.op_name(args.op)
    rows: Rows = {
        "bytes_per_rank": (collectives.collective_bytes_per_rank(args.gpus, args.bytes, op), BYTES),
        "bus_factor": (collectives.bus_factor(args.gpus, op), RATIO),
    }
    return rows, f"{args.algo} {op} of {human_bytes(args.bytes)} over {args.gpus} ranks"


def _activations(args: argparse.Namespace) -> tuple[Rows, str]:
    value = activations.activation_bytes_per_layer(
        args.seq, args.batch, args.hidden, args.heads, args.tp, args.sp, args.recompute
    )
    where = f"tp={args.tp}" + (", sequence parallel" if args.sp else "")
    return {"bytes_per_layer": (value, BYTES)}, f"activations per layer ({where}, recompute {args.recompute})"


def _bubble(args: argparse.Namespace) -> tuple[Rows, str]:
    rows: Rows = {
        "fraction_of_ideal": (pipeline.bubble_fraction_of_ideal(args.stages, args.microbatches, args.chunks), FRACTION),
        "fraction_of_total": (pipeline.bubble_fraction_of_total(args.stages, args.microbatches, args.chunks), FRACTION),
    }
    return rows, f"pipeline bubble: p={args.stages}, m={args.microbatches}, v={args.chunks}"


def _roofline(args: argparse.Namespace) -> tuple[Rows, str]:
    gpu = data.gpu(args.gpu)
    if (args.flops is None) != (args.bytes is None):
        raise ValueError("give both --flops and --bytes, or neither")
    rows: Rows = {"ridge_flops_per_byte": (roofline.ridge(gpu, args.dtype), RATIO)}
    if args.flops is not None:
        result = roofline.roofline(gpu, args.flops, args.bytes, args.dtype)
        rows.update(
            {
                "time_s": (result["time_s"], SECONDS),
                "bound": (result["bound"], TEXT),
                "compute_s": (result["compute_s"], SECONDS),
                "memory_s": (result["memory_s"], SECONDS),
            }
        )
    return rows, f"roofline of {gpu['title']} in {args.dtype}"


def _ledger(args: argparse.Namespace) -> tuple[Rows, str]:
    model = data.model(args.model)
    result = training_ledger(
        model, args.seq, args.batch, args.optimizer, args.gpus, args.zero, recompute=args.recompute
    )
    rows: Rows = {
        "weights": (result["weights"], BYTES),
        "gradients": (result["grads"], BYTES),
        "optimizer": (result["optimizer"], BYTES),
        "activations": (result["activations"], BYTES),
        "total": (result["total"], BYTES),
        "params": (int(result["params"]), COUNT),
    }
    title = f"training memory per GPU of {model['title']}, {args.optimizer}, ZeRO {args.zero} over {args.gpus} GPUs"
    if args.seq is None:
        title += " (no --seq/--batch: activations left out)"
    return rows, title


# --- output

_DECIMAL = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"))
_BINARY = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def human_bytes(value: float) -> str:
    """Both readings of a size: '31.406 GB = 29.249 GiB'; GB and GiB from 1 GB up, smaller units below."""
    if value >= GB:
        return f"{value / GB:,.3f} GB = {value / GiB:,.3f} GiB"
    for (dec, dec_name), (binary, bin_name) in zip(_DECIMAL, _BINARY):
        if value >= dec:
            return f"{value / dec:,.3f} {dec_name} = {value / binary:,.3f} {bin_name}"
    return f"{value:g} B"


def _format(value: float | str, how: str) -> str:
    if isinstance(value, str):  # a word (which side bounds, a dtype): shown as it is
        return f"{value:>20}"
    if how == BYTES:
        return f"{value:>20,.0f} B  {human_bytes(value)}"
    if how == COUNT:
        return f"{value:>20,}" + (f"  ({value / 1e9:.3f} B)" if value >= 1e8 else "")
    if how == FRACTION:
        return f"{value:>20.4f}  ({value:.1%})"
    if how == SECONDS:
        return f"{value:>20.6g} s  ({value * 1e3:.4g} ms)"
    if how == RATIO:
        return f"{value:>20.4g}"
    return f"{value:>20}"


def _print(rows: Rows, title: str, as_json: bool) -> None:
    if as_json:
        payload = {key: value for key, (value, _) in rows.items()}
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    width = max(len(key) for key in rows)
    print(title)
    for key, (value, how) in rows.items():
        print(f"  {key:<{width}}  {_format(value, how)}")


# --- wiring

JSON_HELP = "print JSON for scripts"  # on `calc` and on each calculator: `drill calc --json zero ...` works too

# Modules that add their own calculators (see drill.calc.arguments): the MoE ones here, the others in drill.calc.
MODULES_WITH_COMMANDS = (calc_moe, context, gemm, capacity, reliability)


def _command(
    sub: "argparse._SubParsersAction[OneLineParser]",
    name: str,
    handler: Handler,
    help_text: str,
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(calc_handler=handler)
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP)
    return parser


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]", name: str, help_text: str) -> None:
    """Add `calc` and its calculators to the top-level `drill` sub-parsers."""
    calc = subparsers.add_parser(
        name,
        help=help_text,
        description="Calculators behind the numeric cards. Sizes accept 2.5e9, 1GiB, 800KB; counts accept 7.5B.",
    )
    calc.add_argument("--json", action="store_true", default=False, help=JSON_HELP)
    calc.set_defaults(calc_handler=None)
    sub = calc.add_subparsers(dest="calc_command", metavar="CALCULATOR", parser_class=OneLineParser)

    p = _command(sub, "params", _params, "exact parameter count of a model in cards/data/models.yaml")
    add_model(p)

    p = _command(sub, "zero", _zero, "ZeRO model-state bytes per GPU (stage 0-3)")
    p.add_argument(
        "--params", required=True, type=params_count, metavar="P", help="parameter count, e.g. 7.5e9 or 7.5B"
    )
    p.add_argument("--gpus", required=True, type=whole, metavar="N", help="data-parallel ranks")
    p.add_argument("--stage", required=True, type=int, choices=zero.STAGES)
    p.add_argument("--k", type=float, default=12, help="optimizer bytes per parameter (12 for mixed-precision Adam)")

    p = _command(sub, "kv", _kv, "KV-cache bytes of a model")
    add_model(p)
    p.add_argument("--tokens", required=True, type=whole, metavar="T", help=TOKENS_HELP)
    p.add_argument("--batch", type=whole, default=1, metavar="B", help="sequences (default 1)")
    p.add_argument("--dtype", type=dtype, default="bf16", metavar="bf16|fp16|fp8|fp32|...")

    p = _command(sub, "allreduce", _allreduce, "bytes each rank sends in a collective (nccl-tests bus factors)")
    p.add_argument("--gpus", required=True, type=whole, metavar="N")
    p.add_argument("--bytes", required=True, type=quantity, metavar="S", help="buffer size, e.g. 1GiB or 2.5e9")
    p.add_argument("--algo", choices=["ring"], default="ring")
    p.add_argument("--op", default="all-reduce", choices=collectives.OPS)

    p = _command(sub, "activations", _activations, "activation bytes per transformer layer (Korthikanti et al.)")
    p.add_argument("--seq", required=True, type=whole, metavar="s")
    p.add_argument("--batch", required=True, type=whole, metavar="b")
    p.add_argument("--hidden", required=True, type=whole, metavar="h")
    p.add_argument("--heads", required=True, type=whole, metavar="a")
    p.add_argument("--tp", type=whole, default=1, metavar="t", help="tensor-parallel size")
    p.add_argument("--sp", action="store_true", help="sequence parallel")
    p.add_argument("--recompute", choices=activations.RECOMPUTE, default="none")

    p = _command(sub, "bubble", _bubble, "pipeline bubble fractions (1F1B, interleaved with --chunks)")
    p.add_argument("--stages", required=True, type=whole, metavar="p")
    p.add_argument("--microbatches", required=True, type=whole, metavar="m")
    p.add_argument("--chunks", type=whole, default=1, metavar="v", help="model chunks per stage (interleaved)")

    p = _command(sub, "roofline", _roofline, "ridge point, and the time bound of a kernel")
    p.add_argument("--gpu", required=True, metavar="NAME")
    p.add_argument("--dtype", type=dtype, default="bf16")
    p.add_argument("--flops", type=params_count, metavar="F")
    p.add_argument("--bytes", type=quantity, metavar="B")

    p = _command(sub, "ledger", _ledger, "training memory per GPU: weights, gradients, optimizer, activations")
    add_model(p)
    p.add_argument("--optimizer", choices=sorted(OPTIMIZER_BYTES), default="adam")
    p.add_argument("--gpus", type=whole, default=1, metavar="N", help="data-parallel ranks for ZeRO")
    p.add_argument("--zero", type=int, choices=zero.STAGES, default=0, metavar="S", help="ZeRO stage 0-3")
    p.add_argument("--seq", type=whole, metavar="s")
    p.add_argument("--batch", type=whole, metavar="b", help="micro-batch per GPU")
    p.add_argument("--recompute", choices=activations.RECOMPUTE, default="none")

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        return _command(sub, name, handler, help_text)

    for module in MODULES_WITH_COMMANDS:
        module.commands(command)
    calc.set_defaults(calc_names=list(sub.choices))


def run(args: argparse.Namespace) -> int:
    """Run the chosen calculator; 0 on success, 2 with a one-line error on stderr otherwise."""
    handler = getattr(args, "calc_handler", None)
    if handler is None:
        print(
            f"drill calc: error: choose a calculator: {', '.join(getattr(args, 'calc_names', []))}",
            file=sys.stderr,
        )
        return 2
    try:
        rows, title = handler(args)
    except ValueError as exc:
        command = getattr(args, "calc_command", "")
        print(f"drill calc {command}: error: {exc}", file=sys.stderr)
        return 2
    _print(rows, title, bool(getattr(args, "json", False)))
    return 0
