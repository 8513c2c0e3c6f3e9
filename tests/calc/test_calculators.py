"""The calculators against published figures; each case names its source in the test id."""

from __future__ import annotations

import pytest

from drill.calc import activations, collectives, flops, inference, kv, ledger, pipeline, roofline, zero
from drill.calc.data import load_gpus, load_models
from drill.calc.dtypes import dtype_bytes
from drill.calc.parameter_count import breakdown
from drill.calc.sizes import GB, GiB, KiB, parse_quantity
from drill.calc.totals import count_params

MODELS = load_models()
GPUS = load_gpus()


# --- parameter counts


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("llama-3-8b", 8_030_261_248, id="HF-Meta-Llama-3-8B-model-card"),
        pytest.param("llama-3-70b", 70_553_706_496, id="HF-Meta-Llama-3-70B-model-card"),
        pytest.param("llama-2-7b", 6_738_415_616, id="HF-Llama-2-7b-hf-safetensors"),
    ],
)
def test_exact_parameter_count(name, expected):
    assert count_params(MODELS[name]) == expected


@pytest.mark.parametrize(
    ("name", "published", "rel"),
    [
        pytest.param("gpt-3-175b", 175.0e9, 0.005, id="Brown2020-Table2.1-175.0B"),
        pytest.param("opt-13b", 13e9, 0.015, id="Zhang2022-OPT-Table1-13B"),
    ],
)
def test_parameter_count_matches_rounded_publication(name, published, rel):
    assert count_params(MODELS[name]) == pytest.approx(published, rel=rel)


def test_opt_position_table_has_two_extra_rows():
    # HF modeling_opt: OPTLearnedPositionalEmbedding(max_positions + 2 rows)
    assert breakdown(MODELS["opt-13b"]).positions == (2048 + 2) * 5120


def test_untied_head_is_counted_once_more_than_a_tied_one():
    untied = dict(MODELS["llama-3-8b"])
    tied = dict(untied, tied_embeddings=True)
    assert count_params(untied) - count_params(tied) == 128256 * 4096


def test_grouped_query_attention_shrinks_k_and_v():
    gqa = MODELS["llama-3-8b"]
    mha = dict(gqa, kv_heads=32)
    # K and V each lose hidden x (32 - 8) x head_dim per layer
    assert count_params(mha) - count_params(gqa) == 32 * 2 * 4096 * (32 - 8) * 128


# --- ZeRO (Rajbhandari et al. 2019, Figure 1: Psi = 7.5B, N = 64, K = 12)


@pytest.mark.parametrize(
    ("stage", "published_gb"),
    [
        pytest.param(0, 120.0, id="ZeRO-Fig1-baseline-120GB"),
        pytest.param(1, 31.4, id="ZeRO-Fig1-Pos-31.4GB"),
        pytest.param(2, 16.6, id="ZeRO-Fig1-Pos+g-16.6GB"),
        pytest.param(3, 1.9, id="ZeRO-Fig1-Pos+g+p-1.9GB"),
    ],
)
def test_zero_paper_example(stage, published_gb):
    assert zero.zero_bytes_per_gpu(7.5e9, 64, stage) / GB == pytest.approx(published_gb, abs=0.05)


@pytest.mark.parametrize(
    ("stage", "weights", "grads", "optimizer"),
    [
        pytest.param(0, 2, 2, 12, id="ZeRO-sec5-baseline-(2+2+K)Psi"),
        pytest.param(1, 2, 2, 12 / 8, id="ZeRO-sec5-stage1-4Psi+KPsi/N"),
        pytest.param(2, 2, 2 / 8, 12 / 8, id="ZeRO-sec5-stage2-2Psi+(2+K)Psi/N"),
        pytest.param(3, 2 / 8, 2 / 8, 12 / 8, id="ZeRO-sec5-stage3-(2+2+K)Psi/N"),
    ],
)
def test_zero_terms_per_stage(stage, weights, grads, optimizer):
    terms = zero.zero_terms(1e9, 8, stage)
    assert terms == pytest.approx({"weights": weights * 1e9, "grads": grads * 1e9, "optimizer": optimizer * 1e9})


@pytest.mark.parametrize(("stage", "volume"), [(0, 2), (1, 2), (2, 2), (3, 3)], ids=lambda v: f"ZeRO-sec7-{v}")
def test_zero_communication_volume(stage, volume):
    assert zero.zero_comm_volume(1e9, stage) == volume * 1e9


@pytest.mark.parametrize("args", [(7.5e9, 64, 4), (7.5e9, 0, 1), (-1, 64, 1), (7.5e9, 64, 1, -12), (7.5e9, 6.5, 1)])
def test_zero_rejects_impossible_values(args):
    with pytest.raises(ValueError):
        zero.zero_bytes_per_gpu(*args)


# --- KV cache


def test_kv_per_token_opt13b_vllm_800kb():
    # vLLM (Kwon et al. 2023, section 3): 2 x 5120 hidden x 40 layers x 2 bytes = 800 KB
    assert kv.kv_bytes_per_token(MODELS["opt-13b"]) == 819_200 == 800 * KiB


def test_kv_opt13b_2048_tokens_vllm_1_6gb():
    assert kv.kv_bytes(MODELS["opt-13b"], 2048) / GB == pytest.approx(1.6, rel=0.05)
    assert kv.kv_bytes(MODELS["opt-13b"], 2048) == 819_200 * 2048


@pytest.mark.parametrize(
    ("name", "dtype", "expected"),
    [
        pytest.param("llama-3-8b", "bf16", 2 * 32 * 8 * 128 * 2, id="formula-llama3-8b-gqa-128KiB"),
        pytest.param("llama-3-70b", "fp8", 2 * 80 * 8 * 128 * 1, id="formula-llama3-70b-fp8"),
        pytest.param("llama-2-7b", "fp32", 2 * 32 * 32 * 128 * 4, id="formula-llama2-7b-fp32"),
        pytest.param("gpt-3-175b", "int4", 2 * 96 * 96 * 128 * 0.5, id="formula-gpt3-int4"),
    ],
)
def test_kv_bytes_per_token_by_dtype(name, dtype, expected):
    assert kv.kv_bytes_per_token(MODELS[name], dtype) == expected


def test_kv_bytes_scale_with_tokens_and_batch():
    model = MODELS["llama-3-8b"]
    assert kv.kv_bytes(model, 4096, batch=8) == 8 * 4096 * kv.kv_bytes_per_token(model)


@pytest.mark.parametrize(
    "kwargs", [{"tokens": -1}, {"tokens": 10, "batch": -2}, {"tokens": 1.5}, {"tokens": 10, "dtype": "fp12"}]
)
def test_kv_rejects_impossible_values(kwargs):
    with pytest.raises(ValueError):
        kv.kv_bytes(MODELS["llama-3-8b"], **kwargs)


# --- collectives (nccl-tests doc/PERFORMANCE.md bus-bandwidth factors)


@pytest.mark.parametrize(
    ("op", "n", "factor"),
    [
        pytest.param("all-reduce", 8, 2 * 7 / 8, id="nccl-tests-allreduce-2(n-1)/n"),
        pytest.param("reduce-scatter", 8, 7 / 8, id="nccl-tests-reducescatter-(n-1)/n"),
        pytest.param("all-gather", 8, 7 / 8, id="nccl-tests-allgather-(n-1)/n"),
        pytest.param("all-to-all", 8, 7 / 8, id="nccl-tests-alltoall-(n-1)/n"),
        pytest.param("broadcast", 8, 7 / 8, id="chain-broadcast-last-rank-sends-nothing-(n-1)/n"),
        pytest.param("reduce", 8, 7 / 8, id="chain-reduce-root-sends-nothing-(n-1)/n"),
        pytest.param("all-reduce", 2, 1, id="nccl-tests-allreduce-n2"),
        pytest.param("all-reduce", 1, 0, id="nccl-tests-allreduce-n1-no-traffic"),
    ],
)
def test_collective_bytes_per_rank(op, n, factor):
    assert collectives.collective_bytes_per_rank(n, 1e9, op) == pytest.approx(factor * 1e9)


@pytest.mark.parametrize(
    ("op", "factor"),
    [
        pytest.param("broadcast", 1, id="nccl-tests-broadcast-busbw-factor-1"),
        pytest.param("reduce", 1, id="nccl-tests-reduce-busbw-factor-1"),
        pytest.param("all-to-all", 7 / 8, id="nccl-tests-alltoall-busbw-factor-(n-1)/n"),
    ],
)
def test_bus_factors_of_nccl_tests(op, factor):
    assert collectives.bus_factor(8, op) == pytest.approx(factor)


@pytest.mark.parametrize("spelling", ["allreduce", "all_reduce", "ALL-REDUCE"])
def test_collective_op_spellings(spelling):
    assert collectives.op_name(spelling) == "all-reduce"


def test_ring_all_reduce_is_reduce_scatter_plus_all_gather():
    size = 3 * GiB
    both = collectives.collective_bytes_per_rank(16, size, "reduce-scatter") + collectives.collective_bytes_per_rank(
        16, size, "all-gather"
    )
    assert collectives.collective_bytes_per_rank(16, size) == pytest.approx(both)


def test_transfer_time():
    assert collectives.transfer_time(900e9, 900e9) == 1.0
    with pytest.raises(ValueError):
        collectives.transfer_time(1, 0)


# --- activations (Korthikanti et al. 2022, Table 2, evaluated for GPT-3 175B: a=96, s=2048, h=12288, b=1)

SBH = 2048 * 1 * 12288  # 25,165,824; 5as/h = 5 * 96 * 2048 / 12288 = 80


@pytest.mark.parametrize(
    ("tp", "sp", "recompute", "expected"),
    [
        pytest.param(1, False, "none", SBH * (34 + 80), id="Korthikanti-Table2-no-parallelism"),
        pytest.param(8, False, "none", SBH * (10 + 24 / 8 + 80 / 8), id="Korthikanti-Table2-tensor-parallel"),
        pytest.param(8, True, "none", SBH * (34 / 8 + 80 / 8), id="Korthikanti-Table2-tensor+sequence"),
        pytest.param(8, False, "selective", SBH * (10 + 24 / 8), id="Korthikanti-Table2-tensor+selective"),
        pytest.param(8, True, "selective", SBH * 34 / 8, id="Korthikanti-Table2-tensor+sequence+selective"),
        pytest.param(1, False, "full", SBH * 2, id="Korthikanti-Table2-full-recompute"),
    ],
)
def test_activation_bytes_gpt3(tp, sp, recompute, expected):
    assert activations.activation_bytes_per_layer(2048, 1, 12288, 96, tp, sp, recompute) == pytest.approx(expected)


def test_activation_bytes_gpt3_by_hand():
    # 2048 * 12288 * 114 bytes, worked out by hand: about 2.87 GB per layer
    assert activations.activation_bytes_per_layer(2048, 1, 12288, 96) == 2_868_903_936


@pytest.mark.parametrize(
    ("seq", "hidden", "heads", "saved"),
    [
        pytest.param(2048, 12288, 96, 0.70, id="Korthikanti-sec4.3-GPT3-selective-saves-70pct"),
        pytest.param(2048, 20480, 128, 0.65, id="Korthikanti-sec4.3-MT-NLG-selective-saves-65pct"),
    ],
)
def test_selective_recompute_saving(seq, hidden, heads, saved):
    full = activations.activation_bytes_per_layer(seq, 1, hidden, heads)
    selective = activations.activation_bytes_per_layer(seq, 1, hidden, heads, recompute="selective")
    assert 1 - selective / full == pytest.approx(saved, abs=0.01)


@pytest.mark.parametrize("kwargs", [{"tp": 0}, {"recompute": "partial"}, {"sp": "yes"}])
def test_activations_reject_impossible_values(kwargs):
    with pytest.raises(ValueError):
        activations.activation_bytes_per_layer(2048, 1, 12288, 96, **kwargs)


# --- pipeline bubble (GPipe; Narayanan et al. 2021, section 2.2)


@pytest.mark.parametrize(
    ("p", "m", "v", "ideal", "total"),
    [
        pytest.param(4, 8, 1, 3 / 8, 3 / 11, id="Narayanan2021-1F1B-(p-1)/m"),
        pytest.param(4, 8, 2, 3 / 16, 3 / 19, id="Narayanan2021-interleaved-(1/v)(p-1)/m"),
        pytest.param(8, 32, 1, 7 / 32, 7 / 39, id="GPipe-m=4p-bubble"),
        pytest.param(1, 4, 1, 0, 0, id="single-stage-no-bubble"),
    ],
)
def test_bubble_fractions(p, m, v, ideal, total):
    assert pipeline.bubble_fraction_of_ideal(p, m, v) == pytest.approx(ideal)
    assert pipeline.bubble_fraction_of_total(p, m, v) == pytest.approx(total)


def test_fraction_of_total_follows_from_fraction_of_ideal():
    ideal = pipeline.bubble_fraction_of_ideal(8, 12)
    assert pipeline.bubble_fraction_of_total(8, 12) == pytest.approx(ideal / (1 + ideal))


# --- roofline (FACTS.md ridge points from the vendor peaks)


@pytest.mark.parametrize(
    ("gpu", "dtype", "ridge"),
    [
        pytest.param("h100-sxm", "bf16", 295, id="FACTS-H100-BF16-ridge-295"),
        pytest.param("h100-sxm", "fp8", 591, id="FACTS-H100-FP8-ridge-591"),
        pytest.param("h200", "bf16", 206, id="FACTS-H200-BF16-ridge-206"),
        pytest.param("a100-80gb", "bf16", 153, id="FACTS-A100-80-BF16-ridge-153"),
    ],
)
def test_ridge_points(gpu, dtype, ridge):
    assert roofline.ridge(GPUS[gpu], dtype) == pytest.approx(ridge, abs=0.5)


@pytest.mark.parametrize(
    ("flops", "traffic", "bound"),
    [
        pytest.param(989e12, 1e9, "compute", id="matmul-1s-of-compute"),
        pytest.param(1e9, 3.35e12, "memory", id="copy-1s-of-hbm"),
    ],
)
def test_roofline_time_and_bound(flops, traffic, bound):
    result = roofline.roofline(GPUS["h100-sxm"], flops, traffic)
    assert result["time_s"] == pytest.approx(1.0)
    assert result["bound"] == bound


def test_fp16_runs_at_bf16_rate_and_a100_has_no_fp8():
    assert roofline.peak_flops(GPUS["h100-sxm"], "fp16") == roofline.peak_flops(GPUS["h100-sxm"], "bf16")
    with pytest.raises(ValueError, match="fp8"):
        roofline.peak_flops(GPUS["a100-80gb"], "fp8")


# --- FLOPs (Kaplan et al. 2020)


def test_training_flops_gpt3_brown2020_tableD1():
    # GPT-3 175B on 300B tokens: 3.14e23 FLOPs of training compute (Brown et al. 2020, Table D.1)
    assert flops.training_flops(count_params(MODELS["gpt-3-175b"]), 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_forward_is_a_third_of_training():
    assert flops.forward_flops_per_token(8e9) * 3 == flops.training_flops(8e9, 1)


# --- training ledger


@pytest.mark.parametrize(
    ("optimizer", "bytes_per_param"),
    [
        pytest.param("adam", 16, id="ZeRO-mixed-precision-adam-16B"),
        pytest.param("sgd-momentum", 12, id="master+momentum-12B"),
        pytest.param("adam-8bit", 10, id="8bit-adam-states-10B"),
    ],
)
def test_ledger_model_states(optimizer, bytes_per_param):
    model = MODELS["llama-3-8b"]
    result = ledger.training_ledger(model, optimizer=optimizer)
    assert result["weights"] + result["grads"] + result["optimizer"] == bytes_per_param * 8_030_261_248
    assert result["activations"] == 0


def test_ledger_activations_are_korthikanti_times_layers():
    model = MODELS["gpt-3-175b"]
    result = ledger.training_ledger(model, 2048, 1)
    assert result["activations"] == 96 * 2_868_903_936
    assert result["total"] == pytest.approx(
        result["weights"] + result["grads"] + result["optimizer"] + result["activations"]
    )


def test_ledger_with_zero_matches_zero_terms():
    model = MODELS["llama-3-70b"]
    result = ledger.training_ledger(model, gpus=64, zero=3)
    assert result["total"] == pytest.approx(zero.zero_bytes_per_gpu(70_553_706_496, 64, 3))


def test_ledger_needs_seq_and_batch_together():
    with pytest.raises(ValueError, match="seq and batch"):
        ledger.training_ledger(MODELS["llama-3-8b"], seq=2048)


# --- decode bounds


def test_decode_lower_bound_llama3_8b_h100_by_hand():
    # 16.06 GB of bf16 weights + 8 x 4096 tokens x 128 KiB of KV, over 3.35 TB/s
    expected = (8_030_261_248 * 2 + 8 * 4096 * 131_072) / 3.35e12
    got = inference.decode_time_lower_bound(MODELS["llama-3-8b"], GPUS["h100-sxm"], 8, 4096)
    assert got == pytest.approx(expected)
    assert got * 1e3 == pytest.approx(6.08, abs=0.01)


def test_max_concurrent_sequences_llama2_7b_a100_by_hand():
    # 81,920 MiB (85.9e9 B, as nvidia-smi reports an A100 80GB) - 13.48e9 of weights = 72.4e9 free;
    # 2 GiB of KV per 4096-token sequence -> 33
    assert inference.max_concurrent_sequences(MODELS["llama-2-7b"], GPUS["a100-80gb"], 4096) == 33


def test_llama3_70b_bf16_fits_an_h200_with_under_10_gb_left_and_not_an_h100():
    # 141.1e9 B of weights against 143,771 MiB = 150.75e9 B: 9.6e9 B left, 327,680 B of KV per token
    assert inference.max_concurrent_sequences(MODELS["llama-3-70b"], GPUS["h200"], 1) == 29_441
    assert inference.max_concurrent_sequences(MODELS["llama-3-70b"], GPUS["h100-sxm"], 1) == 0
    assert inference.max_concurrent_sequences(MODELS["llama-3-70b"], GPUS["h200"], 8192, dtype="fp8") > 0


# --- units


@pytest.mark.parametrize(
    ("text", "count", "value"),
    [
        ("2.5e9", False, 2.5e9),
        ("1GiB", False, GiB),
        ("800 KB", False, 800e3),
        ("512B", False, 512),
        ("7.5B", True, 7.5e9),
        ("1,024", False, 1024),
        ("3.35e12", False, 3.35e12),
    ],
)
def test_parse_quantity(text, count, value):
    assert parse_quantity(text, count=count) == value


@pytest.mark.parametrize("text", ["", "GB", "1.5 parsecs", "inf", "nan"])
def test_parse_quantity_rejects_nonsense(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


@pytest.mark.parametrize(("alias", "size"), [("bfloat16", 2), ("float32", 4), ("half", 2), ("fp8_e4m3", 1)])
def test_dtype_aliases(alias, size):
    assert dtype_bytes(alias) == size
