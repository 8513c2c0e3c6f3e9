"""Mixture-of-experts GEMMs: a loop of one GEMM per expert against one grouped launch, counted in waves.

The expert GEMM of a group of n rows, with BM × BN tiles, is ⌈n/BM⌉·⌈N/BN⌉
tiles (drill.calc.gemm.gemm_tiles). A loop launches the experts one after
another, so each expert's GEMM rounds up to whole waves of its own
(drill.calc.gemm.gemm_waves): Σₑ ⌈tilesₑ / SMs⌉. A grouped GEMM puts every
expert's tiles in one launch: ⌈Σₑ tilesₑ / SMs⌉. Groups are skewed as a
router's are: `imbalance` is the largest group over the mean (1 + the MaxVio
of Wang et al., Auxiliary-Loss-Free Load Balancing, arXiv:2408.15664); the
hottest expert takes that many times the mean and the rest share the
remainder evenly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from drill.calc import checks
from drill.calc.gemm import gemm_tiles, gemm_waves


def moe_group_sizes(rows: int, experts: int, imbalance: float = 1.0) -> list[int]:
    """Rows per expert: the hottest gets round(imbalance · rows / experts), the others split the rest evenly."""
    rows = checks.count("rows", rows)
    experts = checks.count("experts", experts)
    imbalance = checks.number("imbalance", imbalance, minimum=1.0)
    if imbalance > experts:
        raise ValueError(f"imbalance is at most experts ({experts}): one expert cannot take more than every row")
    if experts == 1:
        return [rows]
    hot = min(rows, round(imbalance * rows / experts))
    rest = rows - hot
    others = experts - 1
    return [hot] + [rest // others + (1 if i < rest % others else 0) for i in range(others)]


def moe_row_tiles(rows: int, experts: int, block_m: int, imbalance: float = 1.0) -> int:
    """Row tiles of all the groups: Σₑ ⌈nₑ/BM⌉ (an empty group has none). At most ⌊rows/BM⌋ + experts."""
    block_m = checks.count("block_m", block_m)
    return sum(math.ceil(n / block_m) for n in moe_group_sizes(rows, experts, imbalance))


def moe_loop_waves(
    rows: int, experts: int, n: int, block_m: int, block_n: int, sms: int, imbalance: float = 1.0
) -> int:
    """Waves of a loop of one GEMM per expert: Σₑ ⌈tilesₑ / SMs⌉ over the experts with rows."""
    sizes = moe_group_sizes(rows, experts, imbalance)
    return sum(gemm_waves(gemm_tiles(size, n, block_m, block_n), sms) for size in sizes if size)


def moe_grouped_waves(
    rows: int, experts: int, n: int, block_m: int, block_n: int, sms: int, imbalance: float = 1.0
) -> int:
    """Waves of one grouped launch over every expert's tiles: ⌈Σₑ tilesₑ / SMs⌉."""
    sizes = moe_group_sizes(rows, experts, imbalance)
    return gemm_waves(sum(gemm_tiles(size, n, block_m, block_n) for size in sizes if size), sms)


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "moe_row_tiles": moe_row_tiles,
    "moe_loop_waves": moe_loop_waves,
    "moe_grouped_waves": moe_grouped_waves,
}
