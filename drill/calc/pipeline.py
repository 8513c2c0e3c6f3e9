"""Pipeline bubble fractions of GPipe/1F1B and interleaved schedules (Narayanan et al., arXiv:2104.04473)."""

from __future__ import annotations

from drill.calc import checks


def _args(stages: int, microbatches: int, chunks: int) -> tuple[int, int, int]:
    return (checks.count("stages", stages), checks.count("microbatches", microbatches), checks.count("chunks", chunks))


def bubble_fraction_of_ideal(stages: int, microbatches: int, chunks: int = 1) -> float:
    """Bubble time over the ideal (bubble-free) time: (p-1)/m, divided by v with v interleaved chunks."""
    p, m, v = _args(stages, microbatches, chunks)
    return (p - 1) / (v * m)


def bubble_fraction_of_total(stages: int, microbatches: int, chunks: int = 1) -> float:
    """Bubble time over the whole step: (p-1)/(v m + p - 1); (p-1)/(m+p-1) without interleaving."""
    p, m, v = _args(stages, microbatches, chunks)
    return (p - 1) / (v * m + p - 1)
