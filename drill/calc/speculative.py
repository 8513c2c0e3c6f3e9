"""Speculative decoding's expected gain (Leviathan, Kalman and Matias 2023, arXiv:2211.17192, section 3).

A draft model proposes `draft_tokens` (γ) tokens; the target verifies them in one forward pass and keeps the
accepted prefix plus one token of its own. With each drafted token accepted independently with probability α,
a round emits 1 + α + … + α^γ tokens on average, and costs γ draft steps (each `cost_ratio` c of a target step)
plus one target step.
"""

from __future__ import annotations

from collections.abc import Callable

from drill.calc import checks


def _acceptance(value: float) -> float:
    rate = checks.non_negative("acceptance", value)
    if rate >= 1:
        raise ValueError(f"acceptance must be below 1 (a draft that is never wrong is the target), got {value!r}")
    return rate


def speculative_tokens_per_round(acceptance: float, draft_tokens: int) -> float:
    """Expected tokens one verification round emits: (1 − α^(γ+1)) ÷ (1 − α) (the paper's equation 1)."""
    alpha = _acceptance(acceptance)
    gamma = checks.count("draft_tokens", draft_tokens, minimum=0)
    return float((1 - alpha ** (gamma + 1)) / (1 - alpha))


def speculative_speedup(acceptance: float, draft_tokens: int, cost_ratio: float) -> float:
    """Expected wall-clock speed-up over plain decoding: tokens per round ÷ (γ·c + 1) (the paper's theorem 3.8).

    Assumes verifying γ + 1 positions costs one target step, true while the target's decode is memory-bound
    (small batches); at large batches verification costs more and the gain shrinks.
    """
    gamma = checks.count("draft_tokens", draft_tokens, minimum=0)
    cost = checks.non_negative("cost_ratio", cost_ratio)
    return speculative_tokens_per_round(acceptance, gamma) / (gamma * cost + 1)


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "speculative_tokens_per_round": speculative_tokens_per_round,
    "speculative_speedup": speculative_speedup,
}
