"""drill.calc.capacity against published figures, bad arguments, and `drill calc capacity`."""

from __future__ import annotations

import json

import pytest

from drill.calc import capacity
from drill.calc.data import as_gpu, as_model
from drill.calc.expressions import FUNCTIONS
from drill.calc.inference import decode_time_lower_bound
from drill.cli import main

# DeepSeek-V3 technical report (arXiv:2412.19437, section 1 and Table 1): "training DeepSeek-V3 on
# each trillion tokens requires only 180K H800 GPU hours, i.e., 3.7 days on our cluster with 2048
# H800 GPUs", at an assumed rental price of $2 per GPU hour (the paper's assumption, not a quote).
DSV3_GPU_HOURS_PER_T = 180e3
DSV3_PRICE = 2.0
DSV3_GPUS = 2048
DSV3_TOKENS_PER_GPU_S = 1e12 / (DSV3_GPU_HOURS_PER_T * 3600)  # ≈ 1,543 tokens/s per H800

# Luccioni et al. 2022, Estimating the Carbon Footprint of BLOOM (arXiv:2211.02001), Table 1:
# 1,082,990 GPU-hours on A100s at 400 W give 433,196 kWh of dynamic energy.
BLOOM_GPU_HOURS = 1_082_990
BLOOM_WATTS = 400
BLOOM_KWH = 433_196
# bigscience/bloom model card: "Total seen tokens: 366B".
BLOOM_TOKENS = 366e9


def test_dollars_per_million_tokens_deepseek_v3():
    # 180K GPU-hours x $2 per trillion tokens = $360,000 per 1e6 million tokens = $0.36 per million
    assert capacity.dollars_per_million_tokens(DSV3_PRICE, DSV3_TOKENS_PER_GPU_S) == pytest.approx(0.36)
    # the same cost whether one GPU or the whole cluster is counted, as long as the rate is the group's
    cluster_rate = DSV3_TOKENS_PER_GPU_S * DSV3_GPUS
    assert capacity.dollars_per_million_tokens(DSV3_PRICE, cluster_rate, DSV3_GPUS) == pytest.approx(0.36)


def test_deepseek_v3_pretraining_cost_from_table_1():
    # Table 1: pre-training 2,664K GPU-hours = $5.328M; with 14.8T tokens the price per million
    # tokens follows from the same function (2,664K / 14.8 = 180K GPU-hours per trillion).
    rate = 14.8e12 / (2664e3 * 3600)
    per_million = capacity.dollars_per_million_tokens(DSV3_PRICE, rate)
    assert per_million * 14.8e6 == pytest.approx(5.328e6)


def test_gpus_for_load_deepseek_v3_cluster():
    # a trillion tokens in 180K/2048 hours (the paper's "3.7 days") needs the 2048-GPU cluster
    hours = DSV3_GPU_HOURS_PER_T / DSV3_GPUS
    assert hours / 24 == pytest.approx(3.7, abs=0.05)
    rate = 1 / (hours * 3600)  # one "request" of a trillion tokens per that many seconds
    assert capacity.gpus_for_load(rate, 1e12, DSV3_TOKENS_PER_GPU_S) == DSV3_GPUS
    # 8-GPU replicas: 256 of them; a 0.8 utilisation ceiling needs 2048 / 0.8 = 2560 GPUs
    assert capacity.gpus_for_load(rate, 1e12, DSV3_TOKENS_PER_GPU_S * 8, gpus_per_replica=8) == DSV3_GPUS
    assert capacity.gpus_for_load(rate, 1e12, DSV3_TOKENS_PER_GPU_S, utilisation=0.8) == 2560


def test_gpus_for_load_rounds_up_and_handles_no_load():
    assert capacity.gpus_for_load(10, 100, 300) == 4  # 1,000 tokens/s over 300 per GPU
    assert capacity.gpus_for_load(10, 100, 300, gpus_per_replica=2) == 8
    assert capacity.gpus_for_load(0, 100, 300) == 0


def test_energy_kwh_bloom():
    assert capacity.energy_kwh(BLOOM_GPU_HOURS, BLOOM_WATTS) == pytest.approx(BLOOM_KWH)
    assert capacity.energy_kwh(BLOOM_GPU_HOURS, BLOOM_WATTS, pue=1.2) == pytest.approx(1.2 * BLOOM_KWH)


def test_kwh_per_million_tokens_bloom():
    # 366B tokens in 1,082,990 GPU-hours is ~93.9 tokens/s per GPU; at 400 W that is the paper's
    # 433,196 kWh spread over 366,000 million tokens (~1.18 kWh per million tokens)
    rate = BLOOM_TOKENS / (BLOOM_GPU_HOURS * 3600)
    per_million = capacity.kwh_per_million_tokens(BLOOM_WATTS, rate)
    assert per_million == pytest.approx(BLOOM_KWH / (BLOOM_TOKENS / 1e6))
    assert capacity.kwh_per_million_tokens(BLOOM_WATTS, rate * 8, gpus=8, pue=1.5) == pytest.approx(1.5 * per_million)


def test_concurrency_littles_law():
    # Little 1961, L = λW: 20 requests/s that each stay 8 s put 160 in the system
    assert capacity.concurrency(20, 8) == 160
    assert capacity.concurrency(0, 8) == 0


def test_decode_tokens_per_second_is_batch_over_step_bound():
    # H100 SXM 3.35 TB/s (stas00/ml-engineering); Llama-3-8B 8,030,261,248 parameters (HF model card):
    # batch 1 with nothing cached reads 16.06 GB of bf16 weights per token, so at most ~209 tokens/s
    per_token = capacity.decode_tokens_per_second("llama-3-8b", "h100-sxm", 1, 0)
    assert per_token == pytest.approx(3.35e12 / (2 * 8_030_261_248))
    step = decode_time_lower_bound(as_model("llama-3-8b"), as_gpu("h100-sxm"), 64, 2048)
    assert capacity.decode_tokens_per_second("llama-3-8b", "h100-sxm", 64, 2048) == pytest.approx(64 / step)


@pytest.mark.parametrize("tpot", [0.006, 0.02, 0.05])
@pytest.mark.parametrize("context", [512, 4096])
def test_max_batch_for_tpot_is_the_largest_batch_under_the_target(tpot, context):
    batch = capacity.max_batch_for_tpot("llama-3-8b", "h100-sxm", context, tpot)
    assert batch >= 1
    fits = FUNCTIONS["decode_time_lower_bound"]
    assert fits("llama-3-8b", "h100-sxm", batch, context) <= tpot * (1 + 1e-9)
    assert fits("llama-3-8b", "h100-sxm", batch + 1, context) > tpot


def test_max_batch_for_tpot_zero_when_weights_alone_miss_the_target():
    # 16.06 GB of weights at 3.35 TB/s take 4.8 ms: a 4 ms target admits no batch at all
    assert capacity.max_batch_for_tpot("llama-3-8b", "h100-sxm", 1024, 0.004) == 0


def test_card_functions_are_exposed_to_cards():
    for name, function in capacity.CARD_FUNCTIONS.items():
        assert FUNCTIONS[name] is function


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: capacity.gpus_for_load(-1, 100, 300), "qps"),
        (lambda: capacity.gpus_for_load(1, 100, 0), "tokens_per_second"),
        (lambda: capacity.gpus_for_load(1, 100, 300, gpus_per_replica=0), "gpus_per_replica"),
        (lambda: capacity.gpus_for_load(1, 100, 300, utilisation=1.5), "utilisation"),
        (lambda: capacity.gpus_for_load(1, 100, 300, utilisation=0), "utilisation"),
        (lambda: capacity.dollars_per_million_tokens(-2, 100), "dollars_per_gpu_hour"),
        (lambda: capacity.dollars_per_million_tokens(2, 0), "tokens_per_second"),
        (lambda: capacity.dollars_per_million_tokens(2, 100, gpus=2.5), "gpus"),
        (lambda: capacity.energy_kwh(10, 700, pue=0.9), "pue"),
        (lambda: capacity.energy_kwh(-1, 700), "gpu_hours"),
        (lambda: capacity.kwh_per_million_tokens(700, 0), "tokens_per_second"),
        (lambda: capacity.kwh_per_million_tokens(float("nan"), 10), "watts_per_gpu"),
        (lambda: capacity.concurrency(-1, 3), "arrival_rate"),
        (lambda: capacity.concurrency(True, 3), "arrival_rate"),
        (lambda: capacity.max_batch_for_tpot("llama-3-8b", "h100-sxm", 0, 0.02), "context"),
        (lambda: capacity.max_batch_for_tpot("llama-3-8b", "h100-sxm", 1024, 0), "tpot"),
        (lambda: capacity.decode_tokens_per_second("llama-3-8b", "h100-sxm", 0, 1024), "batch"),
    ],
)
def test_bad_arguments_name_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_cli_capacity_json(capsys):
    code = main(
        [
            "calc",
            "capacity",
            "--qps",
            "20",
            "--tokens-per-request",
            "600",
            "--tokens-per-second",
            "2500",
            "--utilisation",
            "0.7",
            "--dollars-per-gpu-hour",
            "3",
            "--watts",
            "700",
            "--pue",
            "1.2",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    # 12,000 tokens/s over 2,500 x 0.7 = 1,750 per GPU -> 6.86 -> 7 GPUs
    assert out["gpus"] == 7
    assert out["replicas"] == 7
    assert out["demand_tokens_per_s"] == pytest.approx(12_000)
    assert out["dollars_per_million_tokens"] == pytest.approx(3 * 7 / (12_000 * 3600) * 1e6)
    assert out["kwh_per_million_tokens"] == pytest.approx(700 * 7 * 1.2 / 12_000 * 1e6 / 3.6e6)


def test_cli_capacity_rejects_a_bad_ceiling(capsys):
    with pytest.raises(SystemExit) as exc:  # refused while the arguments are read
        main(
            [
                "calc",
                "capacity",
                "--qps",
                "1",
                "--tokens-per-request",
                "1",
                "--tokens-per-second",
                "1",
                "--utilisation",
                "2",
            ]
        )
    assert exc.value.code == 2
    assert "utilisation" in capsys.readouterr().err


@pytest.mark.parametrize("written", ["0.7", "70%", "70 %"])
def test_cli_capacity_reads_the_ceiling_as_a_fraction_or_a_percentage(capsys, written):
    argv = ["calc", "capacity", "--qps", "20", "--tokens-per-request", "600", "--tokens-per-second", "2500"]
    assert main([*argv, "--utilisation", written, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpus"] == 7  # 12,000 tokens/s over 2,500 x 0.7 -> 6.86 -> 7


@pytest.mark.parametrize("written", ["120%", "5ms"])
def test_cli_capacity_refuses_a_ceiling_that_is_not_a_fraction(capsys, written):
    argv = ["calc", "capacity", "--qps", "1", "--tokens-per-request", "1", "--tokens-per-second", "1"]
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--utilisation", written])
    assert exc.value.code == 2
    assert "--utilisation" in capsys.readouterr().err
