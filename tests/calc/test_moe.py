"""Mixture-of-experts calculators against published figures, their argument checks, and `drill calc moe-*`."""

from __future__ import annotations

import json

import pytest

from drill.calc import data, moe
from drill.calc.data import load_models
from drill.calc.expressions import FUNCTIONS
from drill.cli import main

MODELS = load_models()


# --- total and active parameters


@pytest.mark.parametrize(
    ("name", "total", "active", "rel_active"),
    [
        # Mistral AI, "Mixtral of experts" announcement (2023): 46.7B total, 12.9B used per token;
        # Jiang et al. 2024, arXiv:2401.04088: 47B / 13B
        pytest.param("mixtral-8x7b", 46.7e9, 12.9e9, 0.002, id="Mixtral-46.7B-12.9B"),
        # DeepSeek-V2, arXiv:2405.04434: 236B total, 21B activated per token
        pytest.param("deepseek-v2", 236e9, 21e9, 0.02, id="DeepSeek-V2-236B-21B"),
        # DeepSeek-V3, arXiv:2412.19437: 671B total, 37B activated (the MTP module is not counted)
        pytest.param("deepseek-v3", 671e9, 37e9, 0.02, id="DeepSeek-V3-671B-37B"),
    ],
)
def test_total_and_active_match_published(name, total, active, rel_active):
    counts = moe.moe_params(MODELS[name])
    assert counts["total"] == pytest.approx(total, rel=0.002)
    assert counts["active"] == pytest.approx(active, rel=rel_active)
    assert moe.moe_total_params(name) == counts["total"]
    assert moe.moe_active_params(name) == counts["active"]


def test_mixtral_parts():
    # HF MixtralForCausalLM: w1, w3 of 4096 x 14336 and w2 of 14336 x 4096 per expert; gate 4096 x 8
    parts = moe.moe_breakdown(MODELS["mixtral-8x7b"])
    assert parts.expert == 3 * 4096 * 14336
    assert parts.router == 4096 * 8
    assert parts.attention == 2 * 4096 * 4096 + 2 * 4096 * 1024
    counts = moe.moe_params("mixtral-8x7b")
    assert counts["total"] == counts["non_routed"] + counts["routed_experts"]
    assert counts["total"] - counts["active"] == 32 * 6 * parts.expert  # the 6 experts a token skips, per layer


def test_deepseek_v3_layout():
    # config.json: first_k_dense_replace = 3 of 61 layers, 256 routed + 1 shared expert of width 2048, top-8
    counts = moe.moe_params("deepseek-v3")
    assert counts["moe_layers"] == 58
    assert counts["per_expert"] == 3 * 7168 * 2048
    assert counts["shared_experts"] == 58 * counts["per_expert"]
    assert counts["routed_experts"] == 58 * 256 * counts["per_expert"]
    # the routed experts are almost all of the weights, and a small part of the active ones
    assert counts["routed_experts"] / counts["total"] > 0.95
    assert counts["active"] - 58 * 8 * counts["per_expert"] == counts["non_routed"]


def test_mla_attention_params():
    # DeepSeek-V3: q_a 7168x1536, q_b 1536x(128*192), kv_a 7168x576, kv_b 512x(128*256), o (128*128)x7168, 2 norms
    expected = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
    assert moe.mla_attention_params("deepseek-v3") == expected
    no_q_compression = dict(MODELS["deepseek-v3"], q_lora_rank=None)
    assert moe.mla_attention_params(no_q_compression) == expected - (7168 * 1536 + 1536 + 1536 * 128 * 192) + (
        7168 * 128 * 192
    )


def test_weight_bytes_per_gpu():
    total = moe.moe_total_params("mixtral-8x7b")
    assert moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 1) == 2 * total
    parts = moe.moe_breakdown("mixtral-8x7b")
    assert moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 8, "fp8") == parts.non_routed + 32 * parts.expert
    # 256 experts over 48 GPUs: the fullest GPU holds ceil(256/48) = 6 per layer
    v3 = moe.moe_breakdown("deepseek-v3")
    assert moe.moe_weight_bytes_per_gpu("deepseek-v3", 48) == 2 * (v3.non_routed + 58 * 6 * v3.expert)


# --- MLA KV cache


def test_mla_kv_cache_deepseek_v3():
    # Insights into DeepSeek-V3 (arXiv:2505.09343): about 70 KB of KV cache per token in BF16 for
    # DeepSeek-V3 against about 516 KB for LLaMA-3.1 405B (126 layers, 8 KV heads of 128, GQA)
    assert moe.mla_kv_bytes_per_token("deepseek-v3") == 61 * 576 * 2 == 70_272
    assert moe.mla_kv_bytes_per_token("deepseek-v3") == pytest.approx(70e3, rel=0.01)
    llama_405b = 2 * 126 * 8 * 128 * 2
    assert llama_405b == pytest.approx(516e3, rel=0.01)
    assert moe.mla_kv_bytes_per_token("deepseek-v3", "fp8") == 70_272 / 2


def test_mla_equals_gqa_with_2_25_groups():
    # DeepSeek-V2 Table 1: MLA caches (d_c + d_h^R) l = 9/2 d_h l elements, as much as GQA with 2.25 groups;
    # MHA caches 2 n_h d_h l
    mla = moe.mla_kv_bytes_per_token("deepseek-v2")
    mha = moe.mla_mha_kv_bytes_per_token("deepseek-v2")
    one_group = 2 * 128 * 60 * 2  # K and V of one head of d_h = 128, 60 layers, bf16
    assert mla / one_group == pytest.approx(2.25)
    assert mha == 2 * 128 * 128 * 60 * 2
    assert mla / mha == pytest.approx(576 / 32768)


# --- capacity


@pytest.mark.parametrize(
    ("tokens", "experts", "factor", "top_k", "expected"),
    [
        # Switch Transformer, arXiv:2101.03961, section 2.2: capacity = tokens per batch / experts x capacity factor
        pytest.param(1024, 8, 1.0, 1, 128, id="Switch-cf1.0"),
        pytest.param(1024, 8, 1.25, 1, 160, id="Switch-cf1.25"),
        pytest.param(1024, 8, 1.25, 2, 320, id="top2-doubles-assignments"),
        pytest.param(6, 3, 1.5, 1, 3, id="small-cf1.5"),
        pytest.param(1000, 64, 1.0, 1, 16, id="rounds-up"),
    ],
)
def test_capacity(tokens, experts, factor, top_k, expected):
    assert moe.moe_capacity(tokens, experts, factor, top_k) == expected


# --- all-to-all bytes


def test_a2a_matches_deepep_low_latency_table():
    # DeepEP V1 README (docs/legacy.md), low-latency kernels on H800: 128 tokens per batch, hidden 7168, top-8,
    # FP8 dispatch (1 byte plus one fp32 scale per 128 values), BF16 combine, EP8:
    # dispatch 77 us at 98 GB/s, combine 114 us at 127 GB/s; the bandwidths count every row ("logical")
    result = moe.moe_a2a_bytes(128, 7168, 8, 8, dispatch_bytes=1 + 4 / 128, combine_bytes=2, include_local=True)
    assert result["dispatch"] / 77e-6 == pytest.approx(98e9, rel=0.03)
    assert result["combine"] / 114e-6 == pytest.approx(127e9, rel=0.03)
    assert result["rows"] == 128 * 8
    assert result["total"] == result["dispatch"] + result["combine"]


def test_a2a_leaves_out_rows_for_local_experts():
    every = moe.moe_a2a_bytes(4096, 7168, 8, 64, 1, 2, include_local=True)
    remote = moe.moe_a2a_bytes(4096, 7168, 8, 64, 1, 2)
    assert remote["total"] == pytest.approx(every["total"] * 63 / 64)
    assert remote["dispatch"] == pytest.approx(4096 * 8 * 63 / 64 * 7168)
    assert moe.moe_a2a_bytes(4096, 7168, 8, 1)["total"] == 0  # one GPU: nothing leaves it
    assert moe.moe_a2a_bytes(0, 7168, 8, 8)["total"] == 0


# --- decode


def test_experts_touched():
    assert moe.moe_experts_touched(8, 2, 1) == pytest.approx(2)
    assert moe.moe_experts_touched(8, 2, 0) == 0
    assert moe.moe_experts_touched(256, 8, 10_000) == pytest.approx(256)
    assert moe.moe_experts_touched(8, 2, 2) == pytest.approx(8 * (1 - 0.75**2))


def test_decode_reads_active_at_batch_one_and_total_at_large_batch():
    # Mixtral: a single token reads its 12.9B active parameters; a large batch reads all 46.7B
    active = moe.moe_active_params("mixtral-8x7b")
    total = moe.moe_total_params("mixtral-8x7b")
    assert moe.moe_decode_weight_bytes("mixtral-8x7b", 1) == pytest.approx(2 * active)
    assert moe.moe_decode_weight_bytes("mixtral-8x7b", 1) == pytest.approx(2 * 12.9e9, rel=0.002)
    assert moe.moe_decode_weight_bytes("mixtral-8x7b", 256, "fp8") == pytest.approx(total)


# --- argument checks


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: moe.moe_params("llama-3-8b"), "experts"),
        (lambda: moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 16), "ep"),
        (lambda: moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 0), "ep"),
        (lambda: moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 8, "fp7"), "dtype"),
        (lambda: moe.moe_capacity(1024, 8, 0), "capacity_factor"),
        (lambda: moe.moe_capacity(1024, 8, 1.25, 9), "top_k"),
        (lambda: moe.moe_capacity(-1, 8, 1.25), "tokens"),
        (lambda: moe.moe_capacity(1024, 8.5, 1.25), "experts"),
        (lambda: moe.moe_a2a_bytes(4096, 7168, 8, 0), "ep"),
        (lambda: moe.moe_a2a_bytes(4096, 0, 8, 8), "hidden"),
        (lambda: moe.moe_a2a_bytes(4096, 7168, 8, 8, dispatch_bytes=0), "dispatch_bytes"),
        (lambda: moe.moe_a2a_bytes(-5, 7168, 8, 8), "tokens"),
        (lambda: moe.moe_experts_touched(8, 9, 4), "top_k"),
        (lambda: moe.moe_decode_weight_bytes("mixtral-8x7b", 0), "batch"),
        (lambda: moe.mla_kv_bytes_per_token("mixtral-8x7b"), "kv_lora_rank"),
        (lambda: moe.moe_params(dict(MODELS["mixtral-8x7b"], experts_per_token=9)), "experts_per_token"),
        (lambda: moe.moe_params(dict(MODELS["deepseek-v3"], dense_layers=61)), "dense_layers"),
        (lambda: moe.moe_params(42), "model"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_card_functions_are_exposed():
    for name, function in moe.CARD_FUNCTIONS.items():
        assert FUNCTIONS[name] is function


# --- the data file's MoE keys


def _entry(**changes):
    entry = {key: value for key, value in MODELS["deepseek-v3"].items() if key not in ("notes",)}
    entry.update(changes)
    return {key: value for key, value in entry.items() if value != "drop"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"expert_ffn": "drop"}, "expert_ffn missing"),
        ({"experts": 0}, "experts not a whole number"),
        ({"shared_experts": -1}, "shared_experts"),
        ({"experts_per_token": 300}, "experts_per_token > experts"),
        ({"dense_layers": 61}, "dense_layers >= layers"),
        ({"router_score": "relu"}, "router_score"),
        ({"v_head_dim": "drop"}, "v_head_dim missing"),
        ({"q_lora_rank": 1.5}, "q_lora_rank"),
    ],
)
def test_bad_moe_keys_are_reported(tmp_path, monkeypatch, changes, message):
    text = json.dumps({"models": [_entry(**changes)]})  # JSON is YAML
    (tmp_path / "models.yaml").write_text(text)
    (tmp_path / "gpus.yaml").write_text("gpus: []\n")
    monkeypatch.setattr(data.paths, "data_files_dir", lambda: tmp_path)
    with pytest.raises(data.DataFileError, match=message):
        data.load_models()


def test_good_moe_entry_loads(tmp_path, monkeypatch):
    (tmp_path / "models.yaml").write_text(json.dumps({"models": [_entry(q_lora_rank=None)]}))
    (tmp_path / "gpus.yaml").write_text("gpus: []\n")
    monkeypatch.setattr(data.paths, "data_files_dir", lambda: tmp_path)
    assert data.load_models()["deepseek-v3"]["experts"] == 256


# --- `drill calc`


def _json(capsys, *argv: str) -> dict:
    assert main(["calc", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_moe_params(capsys):
    out = _json(capsys, "moe-params", "--model", "mixtral-8x7b", "--ep", "8")
    assert out["total"] == pytest.approx(46.7e9, rel=0.002)
    assert out["active"] == pytest.approx(12.9e9, rel=0.002)
    assert out["weight_bytes"] == 2 * out["total"]
    assert out["weight_bytes_per_gpu"] == moe.moe_weight_bytes_per_gpu("mixtral-8x7b", 8)
    assert "mla_kv_bytes_per_token" not in out
    v3 = _json(capsys, "moe-params", "--model", "deepseek-v3", "--dtype", "fp8")
    assert v3["mla_kv_bytes_per_token"] == 70_272 / 2


def test_cli_moe_a2a(capsys):
    out = _json(
        capsys,
        "moe-a2a",
        "--tokens", "128", "--hidden", "7168", "--top-k", "8", "--ep", "8",
        "--dispatch-dtype", "fp8", "--scale-block", "128", "--combine-dtype", "bf16",
        "--include-local", "--bandwidth", "50GB",
    )  # fmt: skip
    assert out["dispatch_bytes"] == 128 * 8 * 7168 * (1 + 4 / 128)
    assert out["combine_bytes"] == 128 * 8 * 7168 * 2
    assert out["time_s"] == pytest.approx(out["total_bytes"] / 50e9)


def test_cli_moe_capacity(capsys):
    out = _json(capsys, "moe-capacity", "--tokens", "1024", "--experts", "8", "--capacity-factor", "1.25")
    assert out == {"capacity": 160, "slots": 1280, "padding_fraction_if_even": pytest.approx(0.2)}
    out = _json(
        capsys, "moe-capacity", "--tokens", "1024", "--experts", "8", "--capacity-factor", "1.25", "--hidden", "4096"
    )
    assert out["buffer_bytes"] == 1280 * 4096 * 2


def test_cli_errors_are_one_line(capsys):
    assert main(["calc", "moe-params", "--model", "llama-3-8b"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "experts" in err
    assert (
        main(["calc", "moe-a2a", "--tokens", "1", "--hidden", "8", "--top-k", "1", "--ep", "2", "--bandwidth", "0"])
        == 2
    )
    assert "bandwidth" in capsys.readouterr().err


def test_the_dense_calculators_count_every_expert_and_the_latent_cache():
    from drill.calc.expressions import kv_bytes_per_token, params

    assert params("mixtral-8x7b") == moe.moe_total_params("mixtral-8x7b")
    assert abs(params("mixtral-8x7b") / 1e9 - 46.7) < 0.05  # Mixtral announcement: 46.7B total
    assert kv_bytes_per_token("deepseek-v3") == 70_272  # MLA: (512 + 64) x 61 layers x 2 B
