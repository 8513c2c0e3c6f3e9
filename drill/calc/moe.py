"""Mixture-of-experts: total and active parameters, and all-to-all bytes per layer.

Also the expert capacity of a capacity factor, the experts a decode batch
touches, and the KV cache of multi-head latent attention (MLA). Models are the
mappings of cards/data/models.yaml; an MoE model carries the optional keys
`experts`, `experts_per_token`, `expert_ffn`, `shared_experts` and
`dense_layers`, and an MLA model `kv_lora_rank`, `q_lora_rank`,
`qk_nope_head_dim`, `qk_rope_head_dim` and `v_head_dim` (see
drill.calc.data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drill.calc import checks, data
from drill.calc.dtypes import dtype_bytes
from drill.calc.parameter_count import breakdown

Model = Mapping[str, object] | str


@dataclass(frozen=True)
class MoeParams:
    """Parameters of an MoE decoder by part. Per-layer parts are for one layer; `expert` is one expert in one layer."""

    layers: int
    dense_layers: int
    embedding: int
    head: int
    final_norm: int
    attention: int
    layer_norms: int
    dense_ffn: int
    expert: int
    router: int
    experts: int
    experts_per_token: int
    shared_experts: int

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers

    @property
    def routed_experts(self) -> int:
        """Every routed expert of every MoE layer."""
        return self.moe_layers * self.experts * self.expert

    @property
    def shared(self) -> int:
        """Every shared expert of every MoE layer."""
        return self.moe_layers * self.shared_experts * self.expert

    @property
    def non_routed(self) -> int:
        """Everything but the routed experts: what every expert-parallel rank holds in full."""
        return self.total - self.routed_experts

    @property
    def total(self) -> int:
        per_dense = self.attention + self.layer_norms + self.dense_ffn
        per_moe = self.attention + self.layer_norms + self.router + (self.experts + self.shared_experts) * self.expert
        return self.embedding + self.head + self.final_norm + self.dense_layers * per_dense + self.moe_layers * per_moe

    @property
    def active(self) -> int:
        """Parameters one token uses: all but the routed experts it is not sent to."""
        return self.total - self.moe_layers * (self.experts - self.experts_per_token) * self.expert


def _model(model: Model) -> Mapping[str, object]:
    return data.as_model(model)


def _moe_counts(m: Mapping[str, object]) -> tuple[int, int, int, int, int]:
    layers = checks.count("layers", checks.field(m, "layers"))
    experts = checks.count("experts", checks.field(m, "experts"))
    top_k = checks.count("experts_per_token", checks.field(m, "experts_per_token"))
    if top_k > experts:
        raise ValueError(f"experts_per_token must be <= experts ({experts}), got {top_k}")
    shared = checks.count("shared_experts", m.get("shared_experts", 0), minimum=0)
    dense = checks.count("dense_layers", m.get("dense_layers", 0), minimum=0)
    if dense >= layers:
        raise ValueError(f"dense_layers must be < layers ({layers}), got {dense}")
    return layers, experts, top_k, shared, dense


def is_mla(model: Model) -> bool:
    """Whether the model uses multi-head latent attention (it has a `kv_lora_rank`)."""
    return _model(model).get("kv_lora_rank") is not None


def mla_attention_params(model: Model) -> int:
    """Weights of one MLA attention block (DeepSeek-V2, arXiv:2405.04434, section 2.1).

    Queries: hidden x q_lora_rank, a norm of q_lora_rank, then
    q_lora_rank x heads*(qk_nope + qk_rope) (or hidden x heads*(qk_nope + qk_rope)
    without query compression). Keys and values: hidden x (kv_lora_rank + qk_rope)
    (the latent plus the shared RoPE key), a norm of kv_lora_rank, then
    kv_lora_rank x heads*(qk_nope + v_head_dim). Output: heads*v_head_dim x hidden.
    """
    m = _model(model)
    h = checks.count("hidden", checks.field(m, "hidden"))
    heads = checks.count("heads", checks.field(m, "heads"))
    kv_rank = checks.count("kv_lora_rank", checks.field(m, "kv_lora_rank"))
    nope = checks.count("qk_nope_head_dim", checks.field(m, "qk_nope_head_dim"))
    rope = checks.count("qk_rope_head_dim", checks.field(m, "qk_rope_head_dim"))
    v_dim = checks.count("v_head_dim", checks.field(m, "v_head_dim"))
    q_rank = checks.count("q_lora_rank", m.get("q_lora_rank") or 0, minimum=0)
    q_width = heads * (nope + rope)
    query = (h * q_rank + q_rank + q_rank * q_width) if q_rank else h * q_width
    key_value = h * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim)
    return query + key_value + heads * v_dim * h


def moe_breakdown(model: Model) -> MoeParams:
    """Count the weights of an MoE decoder (Mixtral, DeepSeek-V2/V3 style).

    Attention, norms, embeddings and the output head are counted once, as in
    drill.calc.parameter_count (MLA attention by `mla_attention_params`). The first
    `dense_layers` layers have a dense FFN of width `ffn`; every other layer has
    `experts` routed experts and `shared_experts` shared experts, each an FFN of
    width `expert_ffn` (three matrices for SwiGLU, two otherwise), and a router
    of hidden x experts. Per-expert router biases used only for balancing
    (DeepSeek-V3's correction bias) are not counted.
    """
    m = _model(model)
    layers, experts, top_k, shared, dense = _moe_counts(m)
    base = breakdown(m)
    h = checks.count("hidden", checks.field(m, "hidden"))
    expert_ffn = checks.count("expert_ffn", checks.field(m, "expert_ffn"))
    up_matrices = 2 if m.get("ffn_type", "gelu") == "swiglu" else 1
    expert = (up_matrices + 1) * h * expert_ffn
    router = h * experts
    if m.get("bias"):
        expert += up_matrices * expert_ffn + h
        router += experts
    attention = mla_attention_params(m) if is_mla(m) else base.attention
    return MoeParams(
        layers=layers,
        dense_layers=dense,
        embedding=base.embedding + base.positions,
        head=base.head,
        final_norm=base.final_norm,
        attention=attention,
        layer_norms=base.layer_norms,
        dense_ffn=base.ffn if dense else 0,
        expert=expert,
        router=router,
        experts=experts,
        experts_per_token=top_k,
        shared_experts=shared,
    )


def moe_params(model: Model) -> dict[str, int]:
    """Total and active parameters of an MoE model, and the parts behind them.

    total: every weight (memory). active: the weights one token multiplies by
    (about half its forward FLOPs: 2 x active per token). Published: Mixtral
    8x7B 46.7 B total / 12.9 B active (arXiv:2401.04088); DeepSeek-V3 671 B /
    37 B (arXiv:2412.19437, MTP module excluded).
    """
    p = moe_breakdown(model)
    return {
        "total": p.total,
        "active": p.active,
        "routed_experts": p.routed_experts,
        "shared_experts": p.shared,
        "non_routed": p.non_routed,
        "per_expert": p.expert,
        "attention": p.layers * p.attention,
        "attention_per_layer": p.attention,
        "dense_ffn": p.dense_layers * p.dense_ffn,
        "dense_ffn_per_layer": p.dense_ffn,
        "embeddings": p.embedding + p.head,
        "routers": p.moe_layers * p.router,
        "moe_layers": p.moe_layers,
    }


def moe_total_params(model: Model) -> int:
    """Every weight of an MoE model: what memory holds."""
    return moe_breakdown(model).total


def moe_active_params(model: Model) -> int:
    """Weights one token uses: attention, embeddings, dense layers, shared experts and top-k routed experts."""
    return moe_breakdown(model).active


def moe_weight_bytes_per_gpu(model: Model, ep: int, dtype: str = "bf16") -> float:
    """Weight bytes on the fullest GPU of an expert-parallel group of `ep` GPUs.

    Assumes expert parallelism only: each GPU holds ceil(experts / ep) routed
    experts of every MoE layer and a full copy of everything else (attention,
    embeddings, head, norms, routers, shared experts, dense layers); no tensor
    or pipeline parallelism and no redundant experts.
    """
    p = moe_breakdown(model)
    ep = checks.count("ep", ep)
    if ep > p.experts:
        raise ValueError(f"ep must be <= experts ({p.experts}), got {ep}")
    local = math.ceil(p.experts / ep)
    params = p.non_routed + p.moe_layers * local * p.expert
    return params * dtype_bytes(dtype)


def mla_kv_bytes_per_token(model: Model, dtype: str = "bf16") -> float:
    """KV-cache bytes one token adds with MLA: layers x (kv_lora_rank + qk_rope_head_dim) x bytes.

    Only the compressed latent and the shared RoPE key are cached (DeepSeek-V2,
    arXiv:2405.04434, Table 1: (d_c + d_h^R) x l elements per token).
    """
    m = _model(model)
    layers = checks.count("layers", checks.field(m, "layers"))
    kv_rank = checks.count("kv_lora_rank", checks.field(m, "kv_lora_rank"))
    rope = checks.count("qk_rope_head_dim", checks.field(m, "qk_rope_head_dim"))
    return layers * (kv_rank + rope) * dtype_bytes(dtype)


def mla_mha_kv_bytes_per_token(model: Model, dtype: str = "bf16") -> float:
    """KV-cache bytes per token of plain MHA with the same heads: 2 x heads x d_h x layers x bytes.

    The comparison of DeepSeek-V2 Table 1, with d_h = qk_nope_head_dim.
    """
    m = _model(model)
    layers = checks.count("layers", checks.field(m, "layers"))
    heads = checks.count("heads", checks.field(m, "heads"))
    d_h = checks.count("qk_nope_head_dim", checks.field(m, "qk_nope_head_dim"))
    return 2 * heads * d_h * layers * dtype_bytes(dtype)


def moe_capacity(tokens: int, experts: int, capacity_factor: float, top_k: int = 1) -> int:
    """Tokens each expert may take: ceil(tokens x top_k / experts x capacity_factor).

    Switch Transformer (arXiv:2101.03961, section 2.2): expert capacity =
    tokens per batch / number of experts x capacity factor, for top-1 routing;
    with top-k each token makes k assignments. Tokens past an expert's capacity
    are dropped (they skip the expert through the residual connection).
    """
    tokens = checks.count("tokens", tokens)
    experts = checks.count("experts", experts)
    top_k = checks.count("top_k", top_k)
    if top_k > experts:
        raise ValueError(f"top_k must be <= experts ({experts}), got {top_k}")
    factor = checks.positive("capacity_factor", capacity_factor)
    # round away float noise (1.25 * 1024 / 8 is 160.00000000000003 in some orders) before the ceiling
    return math.ceil(round(tokens * top_k * factor / experts, 9))


def moe_a2a_bytes(
    tokens: int,
    hidden: int,
    top_k: int,
    ep: int,
    dispatch_bytes: float = 2,
    combine_bytes: float = 2,
    include_local: bool = False,
) -> dict[str, float]:
    """Bytes one GPU sends in one MoE layer's forward pass: dispatch plus combine.

    Each of the GPU's `tokens` tokens goes to `top_k` experts, so tokens x top_k
    rows of `hidden` elements leave in the dispatch and the same number come back
    in the combine (the expert outputs, before the weighted sum). Assumptions:
    experts spread evenly over `ep` GPUs and routing uniform, so a fraction
    1/ep of the rows is for experts on the sending GPU itself and never crosses
    a link; `include_local=True` counts them too (DeepEP reports such "logical"
    bandwidth). No de-duplication of a token sent to two experts on one GPU.
    The GPU receives as much as it sends. Backward repeats both all-to-alls.
    `dispatch_bytes`/`combine_bytes` are bytes per element (FP8 with one fp32
    scale per 128 values: 1 + 4/128).
    """
    tokens = checks.count("tokens", tokens, minimum=0)
    hidden = checks.count("hidden", hidden)
    top_k = checks.count("top_k", top_k)
    ep = checks.count("ep", ep)
    d_bytes = checks.positive("dispatch_bytes", dispatch_bytes)
    c_bytes = checks.positive("combine_bytes", combine_bytes)
    rows = tokens * top_k * (1.0 if include_local else (ep - 1) / ep)
    dispatch = rows * hidden * d_bytes
    combine = rows * hidden * c_bytes
    return {"dispatch": dispatch, "combine": combine, "total": dispatch + combine, "rows": rows}


def moe_experts_touched(experts: int, top_k: int, tokens: int) -> float:
    """Expected number of distinct experts a batch of `tokens` tokens uses in one layer.

    E x (1 - (1 - k/E)^T): each token picks k distinct experts uniformly at
    random, independently of the other tokens. One token touches k experts;
    a large batch touches all E.
    """
    experts = checks.count("experts", experts)
    top_k = checks.count("top_k", top_k)
    if top_k > experts:
        raise ValueError(f"top_k must be <= experts ({experts}), got {top_k}")
    tokens = checks.count("tokens", tokens, minimum=0)
    return experts * (1 - (1 - top_k / experts) ** tokens)


def moe_decode_weight_bytes(model: Model, batch: int, dtype: str = "bf16") -> float:
    """Weight bytes one decode step reads from HBM for `batch` sequences (one token each).

    Everything but the routed experts is read once; each MoE layer reads every
    routed expert that at least one token uses, moe_experts_touched(E, k, batch)
    on average (uniform routing, one copy of the model). Batch 1 reads the
    active parameters; a large batch reads the total.
    """
    p = moe_breakdown(model)
    batch = checks.count("batch", batch)
    touched = moe_experts_touched(p.experts, p.experts_per_token, batch)
    return (p.non_routed + p.moe_layers * touched * p.expert) * dtype_bytes(dtype)


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "moe_params": moe_params,
    "moe_total_params": moe_total_params,
    "moe_active_params": moe_active_params,
    "moe_weight_bytes_per_gpu": moe_weight_bytes_per_gpu,
    "moe_capacity": moe_capacity,
    "moe_a2a_bytes": moe_a2a_bytes,
    "moe_experts_touched": moe_experts_touched,
    "moe_decode_weight_bytes": moe_decode_weight_bytes,
    "mla_kv_bytes_per_token": mla_kv_bytes_per_token,
    "mla_mha_kv_bytes_per_token": mla_mha_kv_bytes_per_token,
}
