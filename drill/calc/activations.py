"""Activation memory per transformer layer in 16-bit (Korthikanti et al., arXiv:2205.05198, Table 2)."""

from __future__ import annotations

from drill.calc import checks

RECOMPUTE = ("none", "selective", "full")


def activation_bytes_per_layer(
    seq: int, batch: int, hidden: int, heads: int, tp: int = 1, sp: bool = False, recompute: str = "none"
) -> float:
    """Bytes one layer keeps for the backward pass.

    none:      s b h (34 + 5 a s / h) with t = 1; with tensor parallel t
               s b h (10 + 24/t + 5 a s / (h t)); with sequence parallel too
               s b h (34/t + 5 a s / (h t)).
    selective: the attention core (the 5 a s / h term) is recomputed:
               s b h (10 + 24/t), or 34 s b h / t with sequence parallel.
    full:      only the layer input is kept, 2 s b h (divided by t when the
               input is sequence-parallel).
    """
    s = checks.count("seq", seq)
    b = checks.count("batch", batch)
    h = checks.count("hidden", hidden)
    a = checks.count("heads", heads)
    t = checks.count("tp", tp)
    if not isinstance(sp, bool):
        raise ValueError(f"sp must be true or false, got {sp!r}")
    recompute = checks.choice("recompute", recompute, RECOMPUTE)
    sbh = s * b * h
    attention_core = 5 * a * s / (h * t)
    if recompute == "full":
        return 2 * sbh / (t if sp else 1)
    linear_part = 34 / t if sp else 10 + 24 / t
    if recompute == "selective":
        return sbh * linear_part
    return sbh * (linear_part + attention_core)
