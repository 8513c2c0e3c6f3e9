"""drill.calc.steptime (reading a profile) and drill.calc.speculative (speculative decoding's gain)."""

from __future__ import annotations

import pytest

from drill.calc import speculative, steptime
from drill.calc.expressions import FUNCTIONS


def test_exposed_time_is_only_the_excess_over_the_cover():
    assert steptime.exposed_time(0.12, 0.30) == 0.0
    assert steptime.exposed_time(0.30, 0.12) == pytest.approx(0.18)
    assert steptime.exposed_time(0.30, 0.0) == pytest.approx(0.30)


def test_loader_pool_delivers_one_batch_per_share_of_workers():
    assert steptime.loader_batch_time(1.2, 4) == pytest.approx(0.3)
    assert steptime.loader_batch_time(1.2, 1) == pytest.approx(1.2)


def test_overlapped_step_is_the_slower_side():
    assert steptime.overlapped_step_time(0.2, 0.3) == 0.3
    assert steptime.overlapped_step_time(0.25, 0.1) == 0.25


@pytest.mark.parametrize(
    ("kernels", "fused", "expected"),
    [
        (5, False, 5 * 2 * 1024 * 2),  # each of 5 kernels reads and writes 1,024 bf16 values
        (5, True, 2 * 1024 * 2),  # fused: one read, one write
        (1, False, 2 * 1024 * 2),  # a chain of one is already "fused"
    ],
)
def test_elementwise_chain_bytes(kernels, fused, expected):
    assert steptime.elementwise_chain_bytes(1024, kernels, "bf16", fused=fused) == expected


def test_fusing_a_chain_divides_its_traffic_by_its_length():
    unfused = steptime.elementwise_chain_bytes(8192 * 4096, 6, "fp32")
    fused = steptime.elementwise_chain_bytes(8192 * 4096, 6, "fp32", fused=True)
    assert unfused / fused == pytest.approx(6)


def test_idle_fraction_of_a_step():
    assert steptime.idle_fraction(95.0, 125.0) == pytest.approx(0.24)
    assert steptime.idle_fraction(0.0, 1.0) == 1.0
    with pytest.raises(ValueError):
        steptime.idle_fraction(2.0, 1.0)


def test_speculative_tokens_is_the_truncated_geometric_series():
    # 1 + α + α² + α³ + α⁴ for γ = 4 drafted tokens (Leviathan et al. 2023, equation 1)
    alpha = 0.8
    assert speculative.speculative_tokens_per_round(alpha, 4) == pytest.approx(sum(alpha**i for i in range(5)))
    assert speculative.speculative_tokens_per_round(0.0, 6) == 1.0
    assert speculative.speculative_tokens_per_round(alpha, 0) == 1.0


def test_speculative_tokens_never_exceed_the_cap():
    # however long the draft, a round emits fewer than 1 / (1 − α) tokens on average
    assert speculative.speculative_tokens_per_round(0.8, 200) == pytest.approx(5.0)
    assert speculative.speculative_tokens_per_round(0.8, 5) < 5.0


def test_speculative_speedup_divides_by_the_round_cost():
    tokens = speculative.speculative_tokens_per_round(0.8, 4)
    assert speculative.speculative_speedup(0.8, 4, 0.1) == pytest.approx(tokens / 1.4)
    assert speculative.speculative_speedup(0.8, 4, 0.0) == pytest.approx(tokens)


def test_a_poor_draft_slows_decoding():
    assert speculative.speculative_speedup(0.3, 5, 0.2) < 1.0


@pytest.mark.parametrize(
    "name", ["exposed_time", "loader_batch_time", "speculative_speedup", "elementwise_chain_bytes"]
)
def test_cards_can_call_them(name):
    assert name in FUNCTIONS
