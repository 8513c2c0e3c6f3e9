"""KV-cache size: 2 (K and V) x layers x kv_heads x head_dim x bytes per element, per token."""

from __future__ import annotations

from collections.abc import Mapping

from drill.calc import checks
from drill.calc.dtypes import dtype_bytes


def kv_bytes_per_token(model: Mapping[str, object], dtype: str = "bf16") -> float:
    """Bytes of K and V one token adds across all layers (vLLM: OPT-13B holds 800 KB); MLA's latent cache for MLA models."""
    if model.get("kv_lora_rank"):
        from drill.calc.moe import mla_kv_bytes_per_token

        return mla_kv_bytes_per_token(model, dtype)
    layers = checks.count("layers", checks.field(model, "layers"))
    kv_heads = checks.count("kv_heads", checks.field(model, "kv_heads"))
    head_dim = checks.count("head_dim", checks.field(model, "head_dim"))
    return 2 * layers * kv_heads * head_dim * dtype_bytes(dtype)


def kv_bytes(model: Mapping[str, object], tokens: int, batch: int = 1, dtype: str = "bf16") -> float:
    """Bytes of KV cache for `batch` sequences of `tokens` tokens each."""
    tokens = checks.count("tokens", tokens, minimum=0)
    batch = checks.count("batch", batch, minimum=0)
    return kv_bytes_per_token(model, dtype) * tokens * batch
