"""Decode-time bounds: bytes read per step over HBM bandwidth, and how many sequences fit beside the weights."""

from __future__ import annotations

import math
from collections.abc import Mapping

from drill.calc import checks
from drill.calc.dtypes import dtype_bytes
from drill.calc.hbm import hbm_bytes
from drill.calc.kv import kv_bytes, kv_bytes_per_token
from drill.calc.totals import count_params


def weight_bytes(model: Mapping[str, object], dtype: str = "bf16") -> float:
    """Bytes of all weights stored in `dtype`."""
    return count_params(model) * dtype_bytes(dtype)


def decode_time_lower_bound(
    model: Mapping[str, object],
    gpu: Mapping[str, object],
    batch: int,
    context: int,
    dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> float:
    """Seconds per decode step at least: every weight and every cached K/V is read once from HBM.

    `context` is the tokens already cached per sequence; the batch shares one
    read of the weights but each sequence reads its own cache.
    """
    batch = checks.count("batch", batch)
    context = checks.count("context", context, minimum=0)
    bandwidth = checks.positive("hbm_bandwidth", checks.field(gpu, "hbm_bandwidth", "gpu"))
    traffic = weight_bytes(model, dtype) + kv_bytes(model, context, batch, kv_dtype)
    return traffic / bandwidth


def max_concurrent_sequences(
    model: Mapping[str, object],
    gpu: Mapping[str, object],
    tokens_per_seq: int,
    dtype: str = "bf16",
    kv_dtype: str = "bf16",
    reserve_bytes: float = 0,
) -> int:
    """Whole sequences of `tokens_per_seq` whose KV cache fits in HBM after the weights and a reserve; 0 if none."""
    tokens = checks.count("tokens_per_seq", tokens_per_seq)
    reserve = checks.non_negative("reserve_bytes", reserve_bytes)
    hbm = hbm_bytes(gpu)
    free = hbm - weight_bytes(model, dtype) - reserve
    if free <= 0:
        return 0
    return math.floor(free / (kv_bytes_per_token(model, kv_dtype) * tokens))
