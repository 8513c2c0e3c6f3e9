"""Block-scaled FP8 GEMM operands: how many scales a tensor carries, and what they cost beside the data.

DeepSeek-V3's recipe (technical report, arXiv:2412.19437, section 3.3.2):
activations carry one scale per 1 × 128 tile (a token's row, 128 channels at
a time), weights one per 128 × 128 block. For C (M, N) = A (M, K) · Bᵀ with
B stored (N, K) that is an activation scale tensor of (M, ⌈K/128⌉) and a
weight scale tensor of (⌈N/128⌉, ⌈K/128⌉); the released checkpoint keeps
the weights' as float32 `weight_scale_inv` tensors of that shape
(quantization_config: weight_block_size [128, 128]).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from drill.calc import checks

SCALE_BLOCK = 128  # DeepSeek-V3's block edge, along K for activations and along N and K for weights
FP32_SCALE_BYTES = 4


def block_scale_count(rows: int, cols: int, row_block: int = SCALE_BLOCK, col_block: int = SCALE_BLOCK) -> int:
    """Scales of a (rows, cols) tensor with one per row_block × col_block block: ⌈rows/rb⌉·⌈cols/cb⌉.

    Activations: row_block 1. DeepSeek-V3's dense-layer gate_proj weight,
    (18,432, 7,168), has a (144, 56) weight_scale_inv: 8,064 scales.
    """
    rows = checks.count("rows", rows)
    cols = checks.count("cols", cols)
    row_block = checks.count("row_block", row_block)
    col_block = checks.count("col_block", col_block)
    return math.ceil(rows / row_block) * math.ceil(cols / col_block)


def block_scale_share(
    rows: int,
    cols: int,
    row_block: int = SCALE_BLOCK,
    col_block: int = SCALE_BLOCK,
    scale_bytes: float = FP32_SCALE_BYTES,
) -> float:
    """The scales' bytes over the FP8 data's bytes (one byte an element).

    A 128 × 128 block of weights shares one 4-byte scale: 4 / 16,384, about
    0.024 %; a 1 × 128 tile of activations: 4 / 128, about 3.1 %.
    """
    scale_bytes = checks.positive("scale_bytes", scale_bytes)
    data = checks.count("rows", rows) * checks.count("cols", cols)
    return block_scale_count(rows, cols, row_block, col_block) * scale_bytes / data


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "block_scale_count": block_scale_count,
    "block_scale_share": block_scale_share,
}
