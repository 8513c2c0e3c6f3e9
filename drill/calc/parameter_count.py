"""Exact parameter counts of decoder-only transformers from their configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from drill.calc import checks


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by part: the per-layer parts are for one layer."""

    layers: int
    embedding: int
    positions: int
    attention: int
    ffn: int
    layer_norms: int
    final_norm: int
    head: int

    @property
    def per_layer(self) -> int:
        return self.attention + self.ffn + self.layer_norms

    @property
    def total(self) -> int:
        return self.embedding + self.positions + self.layers * self.per_layer + self.final_norm + self.head


def _dims(model: Mapping[str, object]) -> dict[str, int]:
    names = ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab")
    return {key: checks.count(key, checks.field(model, key)) for key in names}


def breakdown(model: Mapping[str, object]) -> ParamBreakdown:
    """Count every weight and bias of a Llama-, OPT- or GPT-style decoder.

    Attention: Q and O are hidden x (heads*head_dim); K and V are
    hidden x (kv_heads*head_dim), so grouped-query attention shrinks them.
    FFN: SwiGLU has gate, up and down matrices; GELU/ReLU have up and down.
    Norms: RMSNorm has a weight vector, LayerNorm a weight and a bias; two per
    layer and one after the last layer.
    """
    d = _dims(model)
    h = d["hidden"]
    layers = d["layers"]
    q_width = d["heads"] * d["head_dim"]
    kv_width = d["kv_heads"] * d["head_dim"]
    bias = bool(model.get("bias", False))
    ffn_type = checks.choice("ffn_type", model.get("ffn_type", "gelu"), ("swiglu", "gelu", "relu"))
    norm = checks.choice("norm", model.get("norm", "layernorm"), ("rmsnorm", "layernorm"))

    attention = h * q_width + 2 * h * kv_width + q_width * h
    if bias:
        attention += q_width + 2 * kv_width + h
    up_matrices = 2 if ffn_type == "swiglu" else 1
    ffn = (up_matrices + 1) * h * d["ffn"]
    if bias:
        ffn += up_matrices * d["ffn"] + h
    norm_size = h if norm == "rmsnorm" else 2 * h

    positions = 0
    if model.get("learned_positions"):
        rows = checks.count("max_positions", checks.field(model, "max_positions"))
        rows += checks.count("position_offset", model.get("position_offset", 0), minimum=0)
        positions = rows * h
    embedding = d["vocab"] * h
    head = 0 if model.get("tied_embeddings") else d["vocab"] * h
    return ParamBreakdown(
        layers=layers,
        embedding=embedding,
        positions=positions,
        attention=attention,
        ffn=ffn,
        layer_norms=2 * norm_size,
        final_norm=norm_size,
        head=head,
    )
