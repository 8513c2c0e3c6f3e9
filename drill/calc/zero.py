"""ZeRO model-state memory per GPU (Rajbhandari et al., arXiv:1910.02054, section 5)."""

from __future__ import annotations

from drill.calc import checks

STAGES = (0, 1, 2, 3)


def zero_terms(
    params: float, gpus: int, stage: int, k: float = 12, *, weight_bytes: float = 2, grad_bytes: float = 2
) -> dict[str, float]:
    """Bytes per GPU of weights, gradients and optimizer states under ZeRO stage 0..3.

    Stage 1 shards the optimizer states (K bytes/param), stage 2 also the
    gradients, stage 3 also the weights; a sharded term is divided by `gpus`.
    K = 12 for mixed-precision Adam: fp32 master weights, momentum, variance.
    """
    psi = checks.non_negative("params", params)
    n = checks.count("gpus", gpus)
    stage = checks.count("stage", stage, minimum=0)
    if stage not in STAGES:
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage}")
    k = checks.non_negative("k", k)
    weight_bytes = checks.non_negative("weight_bytes", weight_bytes)
    grad_bytes = checks.non_negative("grad_bytes", grad_bytes)
    return {
        "weights": weight_bytes * psi / (n if stage >= 3 else 1),
        "grads": grad_bytes * psi / (n if stage >= 2 else 1),
        "optimizer": k * psi / (n if stage >= 1 else 1),
    }


def zero_bytes_per_gpu(params: float, gpus: int, stage: int, k: float = 12) -> float:
    """Total model-state bytes per GPU: (2 + 2 + K)Psi with the stage's terms divided by N."""
    return sum(zero_terms(params, gpus, stage, k).values())


def zero_comm_volume(params: float, stage: int) -> float:
    """Elements each rank sends per step relative to Psi: 2 Psi for stages 0-2, 3 Psi for stage 3."""
    checks.non_negative("params", params)
    stage = checks.count("stage", stage, minimum=0)
    if stage not in STAGES:
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage}")
    return (3 if stage == 3 else 2) * params
