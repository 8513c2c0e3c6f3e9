"""Transformer FLOP estimates (Kaplan et al., arXiv:2001.08361): 2N per token forward, 6ND to train."""

from __future__ import annotations

from drill.calc import checks


def forward_flops_per_token(params: float) -> float:
    """About 2 N: one multiply and one add per weight."""
    return 2 * checks.non_negative("params", params)


def training_flops(params: float, tokens: float) -> float:
    """About 6 N D: forward 2N plus backward 4N per token, over D tokens."""
    return 6 * checks.non_negative("params", params) * checks.non_negative("tokens", tokens)


def training_time(
    params: float, tokens: float, gpus: int, flops_per_gpu: float, utilisation: float = 1.0, flops_per_token: float = 6
) -> float:
    """Seconds to train on `tokens`: flops_per_token × N × D ÷ (gpus × flops_per_gpu × utilisation).

    `flops_per_token` is FLOPs per parameter per token: 6 (forward 2, backward 4), 8 when every layer's forward is
    recomputed. Narayanan et al. 2021 (arXiv:2104.04473, section 5.1) use 8TP/(nX): GPT-3 175B on 300 B tokens,
    1,024 A100s at 140 TFLOP/s each, about 34 days.
    """
    n = checks.non_negative("params", params)
    d = checks.non_negative("tokens", tokens)
    g = checks.count("gpus", gpus)
    rate = checks.positive("flops_per_gpu", flops_per_gpu)
    share = checks.fraction("utilisation", utilisation)
    k = checks.positive("flops_per_token", flops_per_token)
    return k * n * d / (g * rate * share)


def model_flops_utilisation(params: float, tokens: float, seconds: float, gpus: int, peak_flops: float) -> float:
    """MFU: the model's 6 N FLOPs per token over `tokens` done in `seconds`, over the peak of `gpus` GPUs.

    Recomputation does not count: MFU charges only the FLOPs the model needs (Chowdhery et al. 2022, PaLM,
    arXiv:2204.02311, appendix B), so a step that recomputes its forward does more work at the same MFU.
    """
    n = checks.non_negative("params", params)
    d = checks.non_negative("tokens", tokens)
    t = checks.positive("seconds", seconds)
    g = checks.count("gpus", gpus)
    peak = checks.positive("peak_flops", peak_flops)
    return 6 * n * d / (t * g * peak)
