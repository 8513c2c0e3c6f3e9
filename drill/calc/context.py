"""Context and sequence parallelism: communication per step, and when ring attention hides it.

Conventions shared by the functions here: `seq` is the full sequence length S
in tokens, split evenly over `cp` (ring) or `sp` (Ulysses) ranks; heads,
kv_heads and head_dim are per layer; bytes follow `dtype`; every
communication figure is what one rank *sends* in the forward pass of one
attention layer (it receives as much). Backward is not included: it moves K
and V again plus their gradients in the ring, and the mirror all-to-alls in
Ulysses.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping

from drill.calc import checks, data
from drill.calc.arguments import (
    BYTES,
    COUNT,
    RATIO,
    SECONDS,
    TEXT,
    Command,
    Rows,
    add_model,
    dtype,
    params_count,
    quantity,
    whole,
)
from drill.calc.dtypes import dtype_bytes

# FlashAttention's benchmark counts backward as 2.5 forwards (five matmuls against two).
ATTENTION_MODES: dict[str, float] = {"fwd": 1.0, "bwd": 2.5, "fwd_bwd": 3.5}


def _block(seq: object, ranks: object, what: str) -> tuple[int, int]:
    """(S, ranks) after checks; S must split evenly over the ranks."""
    s = checks.count("seq", seq)
    n = checks.count(what, ranks)
    if s % n:
        raise ValueError(f"seq must be divisible by {what}: {s} tokens over {n} ranks")
    return s, n


def attention_flops(
    seq: int, heads: int, head_dim: int, batch: int = 1, causal: bool = False, mode: str = "fwd"
) -> float:
    """FLOPs of the two attention matmuls (Q·Kᵀ and P·V) of one layer: 4·B·S²·H·Dh.

    Each matmul is 2·S²·Dh per head (a multiply and an add). A causal mask
    halves the count; `mode` "bwd" is 2.5 and "fwd_bwd" 3.5 forwards. This is
    the convention of Dao-AILab/flash-attention benchmarks/
    benchmark_flash_attention.py (`flops()`); the Ring Attention paper's
    appendix D uses the same 4·b·s²·h per layer. Projections and the MLP are
    not included.
    """
    s = checks.count("seq", seq)
    h = checks.count("heads", heads)
    d = checks.count("head_dim", head_dim)
    b = checks.count("batch", batch)
    factor = ATTENTION_MODES[checks.choice("mode", mode, tuple(ATTENTION_MODES))]
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be true or false, got {causal!r}")
    flops = 4.0 * b * s * s * h * d * factor
    return flops / 2 if causal else flops


def per_token_flops_ratio(hidden: int, seq: int, base_seq: int) -> float:
    """Training FLOPs per token at `seq` over those at `base_seq`: (6h + s) / (6h + s0).

    Ring Attention (Liu et al., arXiv:2310.01889) appendix D: a sequence costs
    (24·b·s·h² + 4·b·s²·h)·n FLOPs (linear layers with a 4h MLP, plus
    attention); per token that is proportional to 6h + s. Attention
    overtakes the linear layers once s > 6h.
    """
    h = checks.count("hidden", hidden)
    s = checks.count("seq", seq)
    s0 = checks.count("base_seq", base_seq)
    return (6 * h + s) / (6 * h + s0)


def ring_bytes_per_step(seq: int, cp: int, kv_heads: int, head_dim: int, batch: int = 1, dtype: str = "bf16") -> float:
    """Bytes one rank sends to its neighbour in one ring step: its K and V blocks, 2·B·(S/CP)·Hkv·Dh·bytes.

    With MHA (Hkv·Dh = hidden d) and bf16 this is the Ring Attention paper's
    4·c·d bytes for a block of c = S/CP tokens (arXiv:2310.01889, section 3,
    "Arithmetic Intensity Between Hosts").
    """
    s, n = _block(seq, cp, "cp")
    hkv = checks.count("kv_heads", kv_heads)
    d = checks.count("head_dim", head_dim)
    b = checks.count("batch", batch)
    return 2.0 * b * (s // n) * hkv * d * dtype_bytes(dtype)


def ring_bytes_per_rank(seq: int, cp: int, kv_heads: int, head_dim: int, batch: int = 1, dtype: str = "bf16") -> float:
    """Bytes one rank sends in the forward pass of one attention layer: (CP − 1) ring steps.

    Algorithm 1 of the Ring Attention paper sends K and V N_h − 1 times per
    layer (the last block is used where it lands). Backward is not included.
    """
    _, n = _block(seq, cp, "cp")
    return (n - 1) * ring_bytes_per_step(seq, cp, kv_heads, head_dim, batch, dtype)


def ulysses_kv_heads(kv_heads: int, sp: int) -> int:
    """K/V heads that take part in the Ulysses all-to-all over `sp` ranks.

    Each rank must end up with whole heads. With kv_heads ≥ sp they must
    divide evenly; with fewer KV heads than ranks (GQA/MQA) implementations
    repeat each KV head so that every rank gets one (the `_ExpandKVFunction`
    of the DeepSpeed/USP Ulysses code), which moves sp heads instead of
    kv_heads.
    """
    hkv = checks.count("kv_heads", kv_heads)
    n = checks.count("sp", sp)
    if hkv % n == 0:
        return hkv
    if n % hkv == 0:
        return n
    raise ValueError(f"kv_heads ({hkv}) and sp ({n}) must divide one another")


def ulysses_bytes_per_rank(
    seq: int, sp: int, heads: int, kv_heads: int, head_dim: int, batch: int = 1, dtype: str = "bf16"
) -> float:
    """Bytes one rank sends in the forward pass of one attention layer under DeepSpeed-Ulysses.

    Four all-to-alls: Q, K, V before attention and the output after. Each rank
    holds B·(S/P)·heads·Dh elements of a tensor and keeps 1/P of them, so it
    sends (P − 1)/P of its share: (P − 1)/P · B·(S/P)·(2H + 2Hkv')·Dh·bytes,
    with Hkv' from `ulysses_kv_heads`. For MHA this is (P − 1)/P times the
    paper's 4·N·h/P per link (Jacobs et al., arXiv:2309.14509, communication
    analysis: an all-to-all of M over P GPUs moves M/P per link). Query heads
    must divide by P: the head-count limit of Ulysses.
    """
    s, n = _block(seq, sp, "sp")
    h = checks.count("heads", heads)
    if h % n:
        raise ValueError(f"heads ({h}) must be divisible by sp ({n}): Ulysses gives each rank whole heads")
    hkv = ulysses_kv_heads(kv_heads, n)
    d = checks.count("head_dim", head_dim)
    b = checks.count("batch", batch)
    local_elements = b * (s // n) * (2 * h + 2 * hkv) * d
    return (n - 1) / n * local_elements * dtype_bytes(dtype)


def ring_block_compute_time(
    seq: int, cp: int, heads: int, head_dim: int, flops_per_s: float, batch: int = 1, causal: bool = False
) -> float:
    """Seconds to attend one local Q block to one K/V block of c = S/CP tokens: 4·B·c²·H·Dh / F.

    `flops_per_s` is the rate the attention kernel achieves (peak × efficiency).
    causal=True halves the work: the average block of a load-balanced
    (zig-zag or striped) causal ring.
    """
    s, n = _block(seq, cp, "cp")
    rate = checks.positive("flops_per_s", flops_per_s)
    return attention_flops(s // n, heads, head_dim, batch, causal) / rate


def ring_block_transfer_time(
    seq: int,
    cp: int,
    kv_heads: int,
    head_dim: int,
    link_bytes_per_s: float,
    batch: int = 1,
    dtype: str = "bf16",
) -> float:
    """Seconds to send one K/V block to the neighbour over a link of `link_bytes_per_s` (one direction)."""
    rate = checks.positive("link_bytes_per_s", link_bytes_per_s)
    return ring_bytes_per_step(seq, cp, kv_heads, head_dim, batch, dtype) / rate


def ring_overlap_ratio(
    seq: int,
    cp: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    flops_per_s: float,
    link_bytes_per_s: float,
    batch: int = 1,
    dtype: str = "bf16",
    causal: bool = False,
) -> float:
    """Compute time of one block over transfer time of one K/V block; ≥ 1 means the ring's sends hide.

    The overlap condition of Ring Attention (arXiv:2310.01889, section 3):
    4·d·c²/F ≥ 4·c·d/B.
    """
    compute = ring_block_compute_time(seq, cp, heads, head_dim, flops_per_s, batch, causal)
    transfer = ring_block_transfer_time(seq, cp, kv_heads, head_dim, link_bytes_per_s, batch, dtype)
    return compute / transfer


def ring_min_block_tokens(
    flops_per_s: float,
    link_bytes_per_s: float,
    heads: int = 1,
    kv_heads: int = 1,
    dtype: str = "bf16",
    causal: bool = False,
) -> float:
    """Smallest block c = S/CP (tokens) at which one block's attention covers sending its K and V.

    4·c²·H·Dh/F ≥ 2·c·Hkv·Dh·bytes/B gives c ≥ F·Hkv·bytes / (2·H·B). With MHA
    and bf16 this is the paper's c ≥ F/B (Table 2: A100 over NVLink at
    312 TFLOP/s and 300 GB/s needs about 1.0e3 tokens). Causal halves the
    compute per block, so it doubles c. Batch and head_dim cancel.
    """
    rate = checks.positive("flops_per_s", flops_per_s)
    link = checks.positive("link_bytes_per_s", link_bytes_per_s)
    h = checks.count("heads", heads)
    hkv = checks.count("kv_heads", kv_heads)
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be true or false, got {causal!r}")
    tokens = rate * hkv * dtype_bytes(dtype) / (2 * h * link)
    return 2 * tokens if causal else tokens


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "attention_flops": attention_flops,
    "per_token_flops_ratio": per_token_flops_ratio,
    "ring_bytes_per_step": ring_bytes_per_step,
    "ring_bytes_per_rank": ring_bytes_per_rank,
    "ulysses_kv_heads": ulysses_kv_heads,
    "ulysses_bytes_per_rank": ulysses_bytes_per_rank,
    "ring_block_compute_time": ring_block_compute_time,
    "ring_block_transfer_time": ring_block_transfer_time,
    "ring_overlap_ratio": ring_overlap_ratio,
    "ring_min_block_tokens": ring_min_block_tokens,
}


# --- `drill calc` sub-commands


def _heads(args: argparse.Namespace) -> tuple[int, int, int, str]:
    """(heads, kv_heads, head_dim, label) from --model, overridden by --heads/--kv-heads/--head-dim."""
    model: Mapping[str, object] = data.model(args.model) if args.model else {}
    if args.heads is None and "heads" not in model or args.head_dim is None and "head_dim" not in model:
        raise ValueError("give --model, or --heads and --head-dim")
    heads = args.heads if args.heads is not None else checks.count("heads", model["heads"])
    head_dim = args.head_dim if args.head_dim is not None else checks.count("head_dim", model["head_dim"])
    kv_heads = args.kv_heads if args.kv_heads is not None else checks.count("kv_heads", model.get("kv_heads", heads))
    label = str(model["title"]) if model else f"H={heads}, Hkv={kv_heads}, Dh={head_dim}"
    return heads, kv_heads, head_dim, label


def _shape_arguments(p: argparse.ArgumentParser) -> None:
    add_model(p, required=False, reads="heads, kv_heads, head_dim")
    p.add_argument("--heads", type=whole, metavar="H", help="query heads (overrides --model)")
    p.add_argument("--kv-heads", type=whole, metavar="Hkv", help="key/value heads (default: --heads)")
    p.add_argument("--head-dim", type=whole, metavar="Dh", help="head dimension (overrides --model)")
    p.add_argument("--batch", type=whole, default=1, metavar="B", help="sequences (default 1)")


def _attention_flops(args: argparse.Namespace) -> tuple[Rows, str]:
    heads, _, head_dim, label = _heads(args)
    per_layer = attention_flops(args.seq, heads, head_dim, args.batch, args.causal, args.mode)
    rows: Rows = {"flops_per_layer": (per_layer, RATIO)}
    if args.model:
        layers = checks.count("layers", data.model(args.model)["layers"])
        rows["flops_all_layers"] = (per_layer * layers, RATIO)
    mask = "causal" if args.causal else "full"
    return rows, f"attention matmul FLOPs ({args.mode}, {mask} mask) of {label}, {args.batch} x {args.seq} tokens"


def _cp_comm(args: argparse.Namespace) -> tuple[Rows, str]:
    heads, kv_heads, head_dim, label = _heads(args)
    per_step = ring_bytes_per_step(args.seq, args.ranks, kv_heads, head_dim, args.batch, args.dtype)
    rows: Rows = {
        "block_tokens": (args.seq // args.ranks, COUNT),
        "ring_bytes_per_step": (per_step, BYTES),
        "ring_bytes_per_layer": (per_step * (args.ranks - 1), BYTES),
    }
    try:
        ulysses = ulysses_bytes_per_rank(args.seq, args.ranks, heads, kv_heads, head_dim, args.batch, args.dtype)
    except ValueError as exc:
        rows["ulysses"] = (f"not possible: {exc}", TEXT)
    else:
        rows["ulysses_bytes_per_layer"] = (ulysses, BYTES)
        rows["ulysses_kv_heads_moved"] = (ulysses_kv_heads(kv_heads, args.ranks), COUNT)
    title = (
        f"bytes one rank sends per attention layer, forward only: {label}, "
        f"{args.batch} x {args.seq} tokens over {args.ranks} ranks in {args.dtype}"
    )
    return rows, title


def _ring_overlap(args: argparse.Namespace) -> tuple[Rows, str]:
    heads, kv_heads, head_dim, label = _heads(args)
    efficiency = checks.positive("efficiency", args.efficiency)
    if efficiency > 1:
        raise ValueError(f"efficiency is a fraction of peak, at most 1; got {efficiency:g}")
    rate = args.flops * efficiency
    compute = ring_block_compute_time(args.seq, args.cp, heads, head_dim, rate, args.batch, args.causal)
    transfer = ring_block_transfer_time(args.seq, args.cp, kv_heads, head_dim, args.link, args.batch, args.dtype)
    minimum = ring_min_block_tokens(rate, args.link, heads, kv_heads, args.dtype, args.causal)
    rows: Rows = {
        "block_tokens": (args.seq // args.cp, COUNT),
        "compute_s": (compute, SECONDS),
        "transfer_s": (transfer, SECONDS),
        "compute_over_transfer": (compute / transfer, RATIO),
        "min_block_tokens": (math.ceil(minimum), COUNT),
        "hidden": ("yes" if compute >= transfer else "no: the sends are exposed", TEXT),
    }
    title = (
        f"ring attention overlap for {label}: {args.seq} tokens over {args.cp} ranks, "
        f"{rate:.4g} FLOP/s, link {args.link:.4g} B/s"
    )
    return rows, title


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
    p = command("attention-flops", _attention_flops, "FLOPs of the attention matmuls (QKᵀ, PV), growing with S²")
    p.add_argument("--seq", required=True, type=whole, metavar="S")
    _shape_arguments(p)
    p.add_argument("--causal", action="store_true", help="causal mask: half the FLOPs")
    p.add_argument("--mode", choices=tuple(ATTENTION_MODES), default="fwd")

    p = command("cp-comm", _cp_comm, "bytes a rank sends per attention layer: ring attention vs Ulysses")
    p.add_argument("--seq", required=True, type=whole, metavar="S")
    p.add_argument("--ranks", required=True, type=whole, metavar="P", help="context/sequence-parallel ranks")
    _shape_arguments(p)
    p.add_argument("--dtype", type=dtype, default="bf16")

    p = command("ring-overlap", _ring_overlap, "does one block's attention hide sending the next K/V block?")
    p.add_argument("--seq", required=True, type=whole, metavar="S")
    p.add_argument("--cp", required=True, type=whole, metavar="P", help="ranks in the ring")
    _shape_arguments(p)
    p.add_argument("--flops", required=True, type=params_count, metavar="F", help="peak FLOP/s of one GPU, e.g. 989e12")
    p.add_argument("--efficiency", type=float, default=1.0, metavar="E", help="fraction of peak the kernel reaches")
    p.add_argument("--link", required=True, type=quantity, metavar="B", help="bytes/s to the neighbour, one way")
    p.add_argument("--dtype", type=dtype, default="bf16")
    p.add_argument("--causal", action="store_true", help="load-balanced causal ring: half the work per block")
