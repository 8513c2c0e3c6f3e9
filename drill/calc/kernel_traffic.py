"""Bytes the kernel exercises count: what a kernel must move through memory, against a common way of doing it.

LayerNorm backward (per row x̂ = (x − mean)·rstd; dx needs two sums along the row, dγ and dβ sums down every
column): the floor reads x and dy and writes dx once; PyTorch's CUDA backward launches one kernel for dx and
another for dγ, dβ, which reads x and dy again. A fused kernel keeps partial column sums per group of rows and
writes them to a float32 scratch buffer of (groups, cols), summed by a second small kernel.

Paged decode attention (one query token per sequence, K and V in pages of a fixed number of tokens): a step must
read every cached K and V row once; a kernel with one program per query head reads each KV head once for every
query head of its group. A sequence's last page is partly empty.

Cross-entropy over a vocabulary (one logit per vocabulary entry and token): a fused kernel reads the logits twice
(an online log-sum-exp, then the gradient) and writes the gradient over them; storing the softmax in float32 adds a
write and a read of a buffer twice the size of 16-bit logits.

Inclusive scan (prefix sum): one pass reads and writes each element once; reduce-then-scan reads the input twice
(a pass for the tile sums, a pass for the scan with their prefixes).
"""

from __future__ import annotations

from collections.abc import Callable

from drill.calc import checks

FP32 = 4
GROUPS_PER_SM = 4  # row groups per multiprocessor in the fused kernel (answers/layernorm_backward.py)


def _rows_cols(rows: object, cols: object, elem_bytes: object) -> tuple[int, int, float]:
    return checks.count("rows", rows), checks.count("cols", cols), checks.positive("elem_bytes", elem_bytes)


def layernorm_backward_small_bytes(rows: int, cols: int) -> float:
    """The per-row and per-column vectors, in float32: mean and rstd read, γ read, dγ and dβ written."""
    return FP32 * (2 * checks.count("rows", rows) + 3 * checks.count("cols", cols))


def layernorm_backward_floor_bytes(rows: int, cols: int, elem_bytes: float) -> float:
    """The fewest bytes: x and dy read once, dx written once, plus the small vectors."""
    r, c, b = _rows_cols(rows, cols, elem_bytes)
    return 3 * r * c * b + layernorm_backward_small_bytes(r, c)


def layernorm_backward_two_kernel_bytes(rows: int, cols: int, elem_bytes: float) -> float:
    """One kernel for dx (x, dy read; dx written), another for dγ and dβ (x and dy read again)."""
    r, c, b = _rows_cols(rows, cols, elem_bytes)
    return 5 * r * c * b + layernorm_backward_small_bytes(r, c) + FP32 * 2 * r  # mean, rstd read twice


def layernorm_backward_groups(rows: int, sms: int, groups_per_sm: int = GROUPS_PER_SM) -> int:
    """Row groups of the fused kernel: ⌈rows / ⌈rows / (groups_per_sm · sms)⌉⌉, each one row of scratch."""
    r = checks.count("rows", rows)
    target = checks.count("sms", sms) * checks.count("groups_per_sm", groups_per_sm)
    per_group = -(-r // target)
    return -(-r // per_group)


def layernorm_backward_scratch_bytes(rows: int, cols: int, sms: int, groups_per_sm: int = GROUPS_PER_SM) -> float:
    """The partial dγ and dβ rows in float32, written by the first stage and read back by the second."""
    groups = layernorm_backward_groups(rows, sms, groups_per_sm)
    return 2 * 2 * groups * checks.count("cols", cols) * FP32


def layernorm_backward_fused_bytes(
    rows: int, cols: int, elem_bytes: float, sms: int, groups_per_sm: int = GROUPS_PER_SM
) -> float:
    """The floor plus the scratch of the two-stage column sums."""
    return layernorm_backward_floor_bytes(rows, cols, elem_bytes) + layernorm_backward_scratch_bytes(
        rows, cols, sms, groups_per_sm
    )


def paged_decode_bytes(tokens: int, kv_heads: int, head_dim: int, elem_bytes: float) -> float:
    """K and V of `tokens` cached tokens read once, one layer: 2 · tokens · kv_heads · head_dim · elem_bytes."""
    t = checks.count("tokens", tokens)
    heads = checks.count("kv_heads", kv_heads)
    return 2 * t * heads * checks.count("head_dim", head_dim) * checks.positive("elem_bytes", elem_bytes)


def paged_decode_bytes_per_query_head(tokens: int, q_heads: int, head_dim: int, elem_bytes: float) -> float:
    """What one program per query head reads: each KV head once for every query head that shares it."""
    return paged_decode_bytes(tokens, q_heads, head_dim, elem_bytes)


def paged_pages(context: int, page_size: int) -> int:
    """Pages one sequence of `context` tokens holds: ⌈context / page_size⌉ (its block-table entries)."""
    return -(-checks.count("context", context) // checks.count("page_size", page_size))


def paged_empty_slots(context: int, page_size: int) -> int:
    """Token slots left empty in the sequence's last page: fewer than one page, whatever the context."""
    return paged_pages(context, page_size) * page_size - context


def logits_bytes(tokens: int, vocab: int, elem_bytes: float) -> float:
    """One logit per vocabulary entry and token."""
    return checks.count("tokens", tokens) * checks.count("vocab", vocab) * checks.positive("elem_bytes", elem_bytes)


def cross_entropy_fused_bytes(tokens: int, vocab: int, elem_bytes: float) -> float:
    """Two reads of the logits (the log-sum-exp, then the gradient) and the gradient written over them."""
    return 3 * logits_bytes(tokens, vocab, elem_bytes)


def cross_entropy_stored_softmax_bytes(tokens: int, vocab: int, elem_bytes: float) -> float:
    """Three reads (max, sum, probabilities), the float32 probabilities written and read back, the gradient
    written."""
    return 4 * logits_bytes(tokens, vocab, elem_bytes) + 2 * logits_bytes(tokens, vocab, FP32)


def scan_one_pass_bytes(n: int, elem_bytes: float) -> float:
    """One read and one write per element: the floor, and what a decoupled look-back moves."""
    return 2 * checks.count("n", n) * checks.positive("elem_bytes", elem_bytes)


def scan_reduce_then_scan_bytes(n: int, elem_bytes: float) -> float:
    """The tile sums read the input once, the scan reads it again and writes it: the tile sums themselves are
    negligible."""
    return 3 * checks.count("n", n) * checks.positive("elem_bytes", elem_bytes)


def scan_tiles(n: int, tile: int) -> int:
    """Tiles of `tile` elements covering n: ⌈n / tile⌉, each one status word of the look-back."""
    return -(-checks.count("n", n) // checks.count("tile", tile))


CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "layernorm_backward_floor_bytes": layernorm_backward_floor_bytes,
    "layernorm_backward_two_kernel_bytes": layernorm_backward_two_kernel_bytes,
    "layernorm_backward_groups": layernorm_backward_groups,
    "layernorm_backward_scratch_bytes": layernorm_backward_scratch_bytes,
    "layernorm_backward_fused_bytes": layernorm_backward_fused_bytes,
    "paged_decode_bytes": paged_decode_bytes,
    "paged_decode_bytes_per_query_head": paged_decode_bytes_per_query_head,
    "paged_pages": paged_pages,
    "paged_empty_slots": paged_empty_slots,
    "logits_bytes": logits_bytes,
    "cross_entropy_fused_bytes": cross_entropy_fused_bytes,
    "cross_entropy_stored_softmax_bytes": cross_entropy_stored_softmax_bytes,
    "scan_one_pass_bytes": scan_one_pass_bytes,
    "scan_reduce_then_scan_bytes": scan_reduce_then_scan_bytes,
    "scan_tiles": scan_tiles,
}
