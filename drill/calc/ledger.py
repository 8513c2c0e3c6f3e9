"""Training memory ledger of a model: weights, gradients, optimizer states and activations, each apart."""

from __future__ import annotations

from collections.abc import Mapping

from drill.calc import checks
from drill.calc.activations import activation_bytes_per_layer
from drill.calc.totals import count_params
from drill.calc.zero import zero_terms

# Optimizer-state bytes per parameter in mixed precision (the ZeRO paper's K),
# fp32 master weights included.
OPTIMIZER_BYTES: dict[str, float] = {
    "adam": 12,  # fp32 master 4 + momentum 4 + variance 4
    "adamw": 12,
    "adam-8bit": 6,  # fp32 master 4 + 8-bit momentum 1 + 8-bit variance 1
    "sgd-momentum": 8,  # fp32 master 4 + momentum 4
    "sgd": 4,  # fp32 master only
}


def training_ledger(
    model: Mapping[str, object],
    seq: int | None = None,
    batch: int | None = None,
    optimizer: str = "adam",
    gpus: int = 1,
    zero: int = 0,
    *,
    recompute: str = "none",
    tp: int = 1,
    sp: bool = False,
    weight_bytes: float = 2,
    grad_bytes: float = 2,
) -> dict[str, float]:
    """Bytes per GPU of each term of mixed-precision training, and their total.

    Weights and gradients are 16-bit; the optimizer keeps OPTIMIZER_BYTES per
    parameter. ZeRO stage `zero` over `gpus` data-parallel ranks divides the
    sharded terms. Activations follow Korthikanti et al. with the model's
    hidden size and heads, for one micro-batch of `batch` sequences of `seq`
    tokens on each GPU, times the layer count; they are 0 when seq and batch
    are not given. The formula assumes a GPT-style block (FFN of 4h, full
    multi-head attention), so for SwiGLU or grouped-query models it is an estimate.
    """
    optimizer = checks.choice("optimizer", optimizer, tuple(OPTIMIZER_BYTES))
    psi = count_params(model)
    terms = zero_terms(psi, gpus, zero, OPTIMIZER_BYTES[optimizer], weight_bytes=weight_bytes, grad_bytes=grad_bytes)
    if (seq is None) != (batch is None):
        raise ValueError("give both seq and batch for activations, or neither")
    activations = 0.0
    if seq is not None and batch is not None:
        per_layer = activation_bytes_per_layer(
            seq,
            batch,
            checks.count("hidden", checks.field(model, "hidden")),
            checks.count("heads", checks.field(model, "heads")),
            tp=tp,
            sp=sp,
            recompute=recompute,
        )
        activations = per_layer * checks.count("layers", checks.field(model, "layers"))
    ledger = {
        "params": float(psi),
        "weights": terms["weights"],
        "grads": terms["grads"],
        "gradients": terms["grads"],
        "optimizer": terms["optimizer"],
        "activations": activations,
    }
    ledger["total"] = terms["weights"] + terms["grads"] + terms["optimizer"] + activations
    return ledger
