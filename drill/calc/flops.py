"""Transformer FLOP estimates (Kaplan et al., arXiv:2001.08361): 2N per token forward, 6ND to train."""

from __future__ import annotations

from drill.calc import checks


def forward_flops_per_token(params: float) -> float:
    """About 2 N: one multiply and one add per weight."""
    return 2 * checks.non_negative("params", params)


def training_flops(params: float, tokens: float) -> float:
    """About 6 N D: forward 2N plus backward 4N per token, over D tokens."""
    return 6 * checks.non_negative("params", params) * checks.non_negative("tokens", tokens)
