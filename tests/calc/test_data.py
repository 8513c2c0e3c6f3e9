"""The model and GPU data files: complete, sourced, consistent, and looked up by name."""

from __future__ import annotations

import pytest

from drill.calc import data
from drill.calc.data import GPU_KEYS, MODEL_KEYS, UnknownName, load_gpus, load_models

REQUIRED_MODELS = ["llama-2-7b", "llama-3-8b", "llama-3-70b", "opt-13b", "gpt-3-175b"]
REQUIRED_GPUS = ["a100-80gb", "h100-sxm", "h200"]


def test_required_entries_exist():
    assert set(REQUIRED_MODELS) <= set(load_models())
    assert set(REQUIRED_GPUS) <= set(load_gpus())


@pytest.mark.parametrize("name", sorted(load_models()))
def test_model_entry_is_complete_and_consistent(name):
    model = load_models()[name]
    assert set(MODEL_KEYS) <= set(model)
    assert model["name"] == name
    assert model["sources"]
    assert model["heads"] % model["kv_heads"] == 0
    assert model["ffn_type"] in {"swiglu", "gelu", "relu"}
    assert isinstance(model["tied_embeddings"], bool)
    for note in model.get("notes", {}):
        assert note in model, f"note about an unknown key {note!r}"


@pytest.mark.parametrize("name", sorted(load_gpus()))
def test_gpu_entry_is_complete_and_sourced(name):
    gpu = load_gpus()[name]
    assert set(GPU_KEYS) <= set(gpu)
    assert gpu["name"] == name
    assert gpu["sources"]
    # dense tensor-core rates: FP8 twice BF16, BF16 twice TF32, where they exist
    assert gpu["bf16_flops"] == pytest.approx(2 * gpu["tf32_flops"], rel=0.01)
    if gpu["fp8_flops"] is not None:
        assert gpu["fp8_flops"] == pytest.approx(2 * gpu["bf16_flops"], rel=0.01)
    for note in gpu.get("notes", {}):
        assert note in gpu, f"note about an unknown key {note!r}"


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [
        pytest.param("h100-sxm", "hbm_bandwidth", 3.35e12, id="stas00-H100-3.35TB/s"),
        pytest.param("h200", "hbm_bandwidth", 4.8e12, id="stas00-H200-4.8TB/s"),
        pytest.param("a100-80gb", "hbm_bandwidth", 2.039e12, id="stas00-A100-80-2.039TB/s"),
        pytest.param("h100-sxm", "bf16_flops", 989e12, id="stas00-H100-BF16-dense-989"),
        pytest.param("a100-80gb", "bf16_flops", 312e12, id="stas00-A100-BF16-312"),
        pytest.param("h200", "hbm_label", "141 GB", id="stas00-H200-141GB-label"),
        pytest.param("h100-sxm", "hbm_mib", 81559, id="nccl-issue-1264-H100-81559MiB"),
        pytest.param("a100-80gb", "hbm_mib", 81920, id="modal-client-PR-2797-A100-81920MiB"),
        pytest.param("h200", "hbm_mib", 143771, id="measured-H200-143771MiB"),
        pytest.param("h100-sxm", "sms", 132, id="stas00-H100-132-SMs"),
        pytest.param("a100-80gb", "sms", 108, id="stas00-A100-108-SMs"),
        pytest.param("h100-sxm", "smem_per_sm_bytes", 228 * 1024, id="Hopper-tuning-guide-228KB"),
        pytest.param("a100-80gb", "smem_per_sm_bytes", 164 * 1024, id="Hopper-tuning-guide-A100-164KB"),
        pytest.param("h100-sxm", "nvlink_bandwidth", 900e9, id="datasheet-H100-NVLink-900GB/s"),
        pytest.param("a100-80gb", "nvlink_bandwidth", 600e9, id="datasheet-A100-NVLink-600GB/s"),
    ],
)
def test_gpu_figures(name, key, value):
    assert load_gpus()[name][key] == value


@pytest.mark.parametrize(
    ("name", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab"),
    [
        pytest.param("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, id="HF-config-llama-2-7b"),
        pytest.param("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, id="HF-config-llama-3-8b"),
        pytest.param("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, id="HF-config-llama-3-70b"),
        pytest.param("opt-13b", 40, 5120, 40, 40, 20480, 50272, id="HF-config-opt-13b"),
        pytest.param("gpt-3-175b", 96, 12288, 96, 96, 49152, 50257, id="Brown2020-Table2.1-gpt-3"),
    ],
)
def test_model_configs(name, layers, hidden, heads, kv_heads, ffn, vocab):
    model = load_models()[name]
    assert (model["layers"], model["hidden"], model["heads"], model["kv_heads"], model["ffn"], model["vocab"]) == (
        layers,
        hidden,
        heads,
        kv_heads,
        ffn,
        vocab,
    )
    assert model["head_dim"] * model["heads"] == model["hidden"]


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownName) as info:
        data.model("llama-5")
    assert "llama-3-8b" in str(info.value) and info.value.known == sorted(load_models())
    with pytest.raises(UnknownName, match="h100-sxm"):
        data.gpu("b300")


def test_loaders_hand_out_copies():
    load_models()["llama-3-8b"]["layers"] = 1
    assert load_models()["llama-3-8b"]["layers"] == 32


def _write(directory, models_text, gpus_text=""):
    (directory / "models.yaml").write_text(models_text)
    (directory / "gpus.yaml").write_text(gpus_text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models:\n  - {name: x, sources: [s]}\n", "missing"),
        ("models: {}\n", "expected a list"),
        ("models:\n  - {title: nameless}\n", "no name"),
    ],
)
def test_bad_model_files_are_reported(tmp_path, monkeypatch, text, message):
    _write(tmp_path, text)
    monkeypatch.setattr(data.paths, "data_files_dir", lambda: tmp_path)
    with pytest.raises(data.DataFileError, match=message):
        data.load_models()


def test_exponent_without_sign_is_caught(tmp_path, monkeypatch):
    # YAML 1.1 reads 3.35e12 as text; the loader must say so rather than fail later in a calculator
    gpu = {key: value for key, value in load_gpus()["h100-sxm"].items() if key in GPU_KEYS}
    gpu["hbm_bandwidth"] = "3.35e12"
    lines = [f"    {key}: {'null' if value is None else value}" for key, value in gpu.items()]
    lines = [line.replace("'", "") for line in lines]
    _write(tmp_path, "models: []\n", "gpus:\n  - sources: [s]\n" + "\n".join(lines) + "\n")
    monkeypatch.setattr(data.paths, "data_files_dir", lambda: tmp_path)
    with pytest.raises(data.DataFileError, match="hbm_bandwidth"):
        data.load_gpus()
