"""Training time, MFU and the latency-bandwidth all-reduce models against published figures and bad arguments."""

from __future__ import annotations

import math

import pytest

from drill.calc import collectives, flops
from drill.calc.expressions import FUNCTIONS

DAY = 86400.0

# Narayanan et al. 2021 (arXiv:2104.04473), section 5.1: end-to-end time ≈ 8TP/(nX); GPT-3 175B on
# 300 billion tokens with 1,024 A100s at 140 TFLOP/s each takes about 34 days.
GPT3_PARAMS = 175e9
GPT3_TOKENS = 300e9
GPT3_GPUS = 1024
GPT3_RATE = 140e12

# Grattafiori et al. 2024 (arXiv:2407.21783), Table 4: Llama 3 405B on 8,192 H100s at 430 TFLOP/s per GPU,
# 43 % BF16 MFU (989 TFLOP/s dense peak).
LLAMA3_PARAMS = 405e9
LLAMA3_GPUS = 8192
LLAMA3_RATE = 430e12
H100_BF16 = 989e12


def test_gpt3_on_1024_a100s_takes_about_34_days_with_recompute():
    seconds = flops.training_time(GPT3_PARAMS, GPT3_TOKENS, GPT3_GPUS, GPT3_RATE, flops_per_token=8)
    assert round(seconds / DAY) == 34


def test_without_recompute_the_same_run_is_three_quarters_as_long():
    full = flops.training_time(GPT3_PARAMS, GPT3_TOKENS, GPT3_GPUS, GPT3_RATE, flops_per_token=8)
    plain = flops.training_time(GPT3_PARAMS, GPT3_TOKENS, GPT3_GPUS, GPT3_RATE)
    assert plain / full == pytest.approx(0.75)


def test_utilisation_stretches_the_time():
    at_peak = flops.training_time(70e9, 1e12, 512, H100_BF16)
    at_40 = flops.training_time(70e9, 1e12, 512, H100_BF16, utilisation=0.4)
    assert at_40 == pytest.approx(at_peak / 0.4)


def test_llama3_405b_mfu_is_43_percent():
    tokens_per_second = LLAMA3_RATE * LLAMA3_GPUS / (6 * LLAMA3_PARAMS)
    mfu = flops.model_flops_utilisation(LLAMA3_PARAMS, tokens_per_second, 1.0, LLAMA3_GPUS, H100_BF16)
    assert round(mfu * 100) == 43


def test_mfu_and_training_time_agree():
    seconds = flops.training_time(70e9, 2e12, 1024, H100_BF16, utilisation=0.38)
    assert flops.model_flops_utilisation(70e9, 2e12, seconds, 1024, H100_BF16) == pytest.approx(0.38)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: flops.training_time(1e9, 1e9, 0, 1e12), "gpus"),
        (lambda: flops.training_time(1e9, 1e9, 8, 1e12, utilisation=1.5), "at most 1"),
        (lambda: flops.training_time(1e9, 1e9, 8, 0), "flops_per_gpu"),
        (lambda: flops.model_flops_utilisation(1e9, 1e9, 0, 8, 1e12), "seconds"),
    ],
)
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_small_messages_pay_2_n_minus_1_latencies_on_a_ring_and_2_log_n_on_a_tree():
    assert collectives.ring_allreduce_time(1024, 0, 1e9, 1.0) == 2046
    assert collectives.tree_allreduce_time(1024, 0, 1e9, 1.0) == 20
    assert collectives.tree_allreduce_time(1000, 0, 1e9, 1.0) == 20  # a tree of 1,000 ranks is 10 hops deep


def test_without_latency_the_ring_moves_the_nccl_tests_bus_volume():
    # nccl-tests doc/PERFORMANCE.md: all-reduce bus bandwidth = algorithm bandwidth × 2(n−1)/n
    size = 2**30
    rate = 100e9
    assert collectives.ring_allreduce_time(8, size, rate, 0.0) == pytest.approx(size * 2 * 7 / 8 / rate)


def test_large_messages_cost_about_the_same_on_either_and_small_ones_favour_the_tree():
    big_ring = collectives.ring_allreduce_time(64, 1e9, 50e9, 5e-6)
    big_tree = collectives.tree_allreduce_time(64, 1e9, 50e9, 5e-6)
    assert big_tree / big_ring == pytest.approx(1.0, abs=0.02)
    assert collectives.tree_allreduce_time(64, 1e4, 50e9, 5e-6) < collectives.ring_allreduce_time(64, 1e4, 50e9, 5e-6)


def test_one_rank_moves_nothing():
    assert collectives.ring_allreduce_time(1, 1e9, 1e9, 1e-5) == 0
    assert collectives.tree_allreduce_time(1, 1e9, 1e9, 1e-5) == 0


def test_cards_can_call_them():
    for name in ("training_time", "model_flops_utilisation", "ring_allreduce_time", "tree_allreduce_time"):
        assert name in FUNCTIONS
    assert math.isfinite(FUNCTIONS["ring_allreduce_time"](16, 1e6, 1e9, 1e-6))
