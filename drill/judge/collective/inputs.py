"""A collective card's inputs drawn from a seed: the same values in a rank (on its GPU or CPU) and in the judge.

The judge picks one seed per rank and case and sends each rank only its own;
the rank draws its inputs from it, and the judge draws every rank's again on
its CPU to compute the expected result. No rank holds another rank's seed or
the expected result, so nothing in a rank's process can be copied instead of
communicating.

Each value is a hash of (seed, stream, index) in integer arithmetic, turned
into a number that the element type holds exactly: odd multiples of
2^-(p-1) in (-2, 2), p the type's significant bits. Integer operations and
exact conversions give the same bits on every device, and no value is zero.
"""

from __future__ import annotations

import torch

SIGNIFICANT_BITS = {torch.float32: 24, torch.bfloat16: 8, torch.float16: 11, torch.float64: 24}
_MASK31 = (1 << 31) - 1
_MIX = 0x45D9F3B
_SPREAD = 1103515245
_STREAM = 7919


def seed_halves(seed: int) -> tuple[int, int]:
    """The two 31-bit halves of a seed (every product of the hash stays below 2^62)."""
    return seed & _MASK31, (seed >> 31) & _MASK31


def hashed(seed: int, stream: int, index: torch.Tensor) -> torch.Tensor:
    """A 31-bit hash of each (seed, stream, index), int64."""
    low, high = seed_halves(seed)
    h = ((index & _MASK31) * _SPREAD + low) & _MASK31
    h = h ^ (h >> 16)
    h = (h * _MIX + high) & _MASK31
    h = h ^ (h >> 15)
    h = (h * _MIX + (stream * _STREAM & _MASK31)) & _MASK31
    return h ^ (h >> 16)


def values_at(seed: int, stream: int, index: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The inputs at `index` (int64, on any device), as `dtype`: exactly representable, never zero."""
    bits = SIGNIFICANT_BITS.get(dtype, 8)
    m = hashed(seed, stream, index) >> (31 - bits)
    odd = (2 * m + 1 - (1 << bits)).to(torch.float64)
    return (odd / float(1 << (bits - 1))).to(dtype)


def drawn(seed: int, stream: int, n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """`n` inputs of stream `stream` of a seed, on `device`."""
    return values_at(seed, stream, torch.arange(n, dtype=torch.int64, device=device), dtype)
