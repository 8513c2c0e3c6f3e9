"""The functions parameterised cards may call: every documented name, signature and error."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from jinja2.sandbox import SandboxedEnvironment

from drill.calc.data import load_gpus, load_models
from drill.calc.expressions import CONSTANTS, FUNCTIONS, NAMES

MODELS = load_models()
GPUS = load_gpus()
L3 = MODELS["llama-3-8b"]
OPT = MODELS["opt-13b"]
H100 = GPUS["h100-sxm"]

# name -> (args, kwargs, expected result type) with the signatures the card format documents.
DOCUMENTED_CALLS = {
    "params": ((L3,), {}, int),
    "weight_bytes": ((L3,), {"dtype": "fp8"}, (int, float)),
    "dtype_bytes": (("int4",), {}, (int, float)),
    "kv_bytes_per_token": ((L3,), {"dtype": "fp16"}, (int, float)),
    "kv_bytes": ((L3, 4096), {"batch": 2, "dtype": "fp8"}, (int, float)),
    "zero_bytes_per_gpu": ((7.5e9, 64, 2), {"k": 12}, float),
    "zero_terms": ((7.5e9, 64, 3), {"k": 12}, dict),
    "collective_bytes_per_rank": ((8, 1e9), {"op": "reduce-scatter"}, float),
    "transfer_time": ((1e9, 900e9), {}, float),
    "hbm_bytes": (("h100-sxm",), {}, float),
    "hbm_statement": (("h100-sxm",), {}, str),
    "activation_bytes_per_layer": ((2048, 1, 12288, 96), {"tp": 8, "sp": True, "recompute": "selective"}, float),
    "bubble_fraction_of_ideal": ((4, 8), {"chunks": 2}, float),
    "bubble_fraction_of_total": ((4, 8), {"chunks": 1}, float),
    "peak_flops": ((H100,), {"dtype": "fp8"}, float),
    "ridge": ((H100,), {"dtype": "bf16"}, float),
    "roofline_time": ((H100, 1e12, 1e9), {"dtype": "bf16"}, float),
    "training_flops": ((8e9, 15e12), {}, float),
    "training_time": ((70e9, 2e12, 1024, 989e12), {"utilisation": 0.4}, float),
    "model_flops_utilisation": ((70e9, 4e6, 6.0, 1024, 989e12), {}, float),
    "ring_allreduce_time": ((64, 1e9, 50e9, 5e-6), {}, float),
    "tree_allreduce_time": ((64, 1e9, 50e9, 5e-6), {}, float),
    "forward_flops_per_token": ((8e9,), {}, float),
    "training_ledger": ((L3, 4096, 1), {"optimizer": "adam", "gpus": 8, "zero": 3}, dict),
    "decode_time_lower_bound": ((L3, H100, 8, 4096), {"dtype": "bf16", "kv_dtype": "fp8"}, float),
    "max_concurrent_sequences": ((L3, H100, 4096), {"dtype": "bf16", "kv_dtype": "bf16", "reserve_bytes": 1e9}, int),
    # additions beyond the documented list
    "zero_comm_volume": ((7.5e9, 3), {}, float),
    "activation_bytes": ((L3, 4096, 1), {"recompute": "full"}, float),
    "bus_factor": ((8,), {"op": "all-gather"}, float),
    "roofline_bound": ((H100, 1e12, 1e9), {}, str),
    "ceil": ((2.1,), {}, int),
    "floor": ((2.9,), {}, int),
    "log2": ((1024,), {}, float),
    "sqrt": ((16,), {}, float),
    "min": ((3, 2), {}, int),
    "max": ((3, 2), {}, int),
    "abs": ((-3,), {}, int),
    "block_scale_count": ((18432, 7168), {}, int),
    "block_scale_share": ((4096, 7168), {"row_block": 1}, float),
    "moe_row_tiles": ((24576, 64, 128), {"imbalance": 4.0}, int),
    "moe_loop_waves": ((24576, 64, 1408, 128, 128, 132), {}, int),
    "moe_grouped_waves": ((24576, 64, 1408, 128, 128, 132), {}, int),
    "round": ((2.567, 2), {}, float),
    # mixture of experts
    "moe_params": (("mixtral-8x7b",), {}, dict),
    "moe_total_params": (("mixtral-8x7b",), {}, int),
    "moe_active_params": (("mixtral-8x7b",), {}, int),
    "moe_weight_bytes_per_gpu": (("mixtral-8x7b", 8), {"dtype": "bf16"}, (int, float)),
    "moe_capacity": ((4096, 8, 1.25), {"top_k": 2}, int),
    "moe_a2a_bytes": ((4096, 4096, 2, 8), {"dispatch_bytes": 1}, dict),
    "moe_experts_touched": ((64, 6, 16), {}, float),
    "moe_decode_weight_bytes": (("mixtral-8x7b", 4), {}, float),
    "mla_kv_bytes_per_token": (("deepseek-v3",), {}, (int, float)),
    "mla_mha_kv_bytes_per_token": (("deepseek-v3",), {}, (int, float)),
    # long context
    "attention_flops": ((4096, 32, 128), {"causal": True, "mode": "fwd"}, float),
    "per_token_flops_ratio": ((4096, 32768, 4096), {}, float),
    "ring_bytes_per_step": ((131072, 8, 8, 128), {}, float),
    "ring_bytes_per_rank": ((131072, 8, 8, 128), {}, float),
    "ulysses_kv_heads": ((8, 4), {}, int),
    "ulysses_bytes_per_rank": ((131072, 8, 32, 8, 128), {}, float),
    "ring_block_compute_time": ((131072, 8, 32, 128, 989e12), {"causal": True}, float),
    "ring_block_transfer_time": ((131072, 8, 8, 128, 50e9), {}, float),
    "ring_overlap_ratio": ((131072, 8, 32, 8, 128, 989e12, 50e9), {}, float),
    "ring_min_block_tokens": ((989e12, 50e9), {"heads": 32, "kv_heads": 8}, float),
    # GEMM
    "gemm_flops": ((4096, 4096, 4096), {}, float),
    "gemm_bytes": ((4096, 4096, 4096), {"dtype": "bf16"}, float),
    "gemm_intensity": ((16, 4096, 4096), {}, float),
    "gemm_tiles": ((4096, 4096, 128, 128), {}, int),
    "tile_efficiency": ((257, 256, 128, 128), {}, float),
    "gemm_waves": ((1024, 132), {}, int),
    "wave_efficiency": ((1024, 132), {}, float),
    "patch_tile_loads": ((9, 9, 8), {}, int),
    "block_scaled_bytes": ((4096, 4096), {"dtype": "fp4", "block": 32}, float),
    # capacity and cost
    "concurrency": ((20.0, 8.0), {}, float),
    "gpus_for_load": ((10.0, 500.0, 2000.0), {"gpus_per_replica": 2}, int),
    "dollars_per_million_tokens": ((2.0, 2500.0), {}, float),
    "energy_kwh": ((1000.0, 700.0), {"pue": 1.2}, float),
    "kwh_per_million_tokens": ((700.0, 2500.0), {}, float),
    "decode_tokens_per_second": ((L3, H100, 32, 4096), {}, float),
    "max_batch_for_tpot": ((L3, H100, 4096, 0.02), {}, int),
    # reliability
    "cluster_mtbf": ((50_000 * 3600.0, 16384), {}, float),
    "mtbf_from_failures": ((54 * 86400.0, 419), {"units": 16384}, float),
    "failure_probability": ((3600.0, 36000.0), {}, float),
    "checkpoint_bytes": ((7e9,), {}, float),
    "checkpoint_write_time": ((1e12, 2e12), {}, float),
    "young_interval": ((300.0, 86400.0), {}, float),
    "daly_interval": ((300.0, 86400.0), {}, float),
    "overhead_fraction": ((3600.0, 300.0, 86400.0), {}, float),
    "expected_lost_time": ((86400.0, 36000.0, 3600.0), {}, float),
    # reading a profile
    "exposed_time": ((0.3, 0.2), {}, float),
    "loader_batch_time": ((1.2, 4), {}, float),
    "overlapped_step_time": ((0.2, 0.3), {}, float),
    "elementwise_chain_bytes": ((1 << 20, 4), {"dtype": "bf16", "fused": True}, float),
    "idle_fraction": ((0.08, 0.1), {}, float),
    # speculative decoding
    "speculative_tokens_per_round": ((0.8, 4), {}, float),
    "speculative_speedup": ((0.8, 4, 0.1), {}, float),
    # kernel memory traffic
    "layernorm_backward_floor_bytes": ((8192, 4096, 2), {}, (int, float)),
    "layernorm_backward_two_kernel_bytes": ((8192, 4096, 2), {}, (int, float)),
    "layernorm_backward_groups": ((8192, 132), {"groups_per_sm": 4}, int),
    "layernorm_backward_scratch_bytes": ((8192, 4096, 132), {}, (int, float)),
    "layernorm_backward_fused_bytes": ((8192, 4096, 2, 132), {"groups_per_sm": 4}, (int, float)),
    "paged_decode_bytes": ((65536, 8, 128, 2), {}, (int, float)),
    "paged_decode_bytes_per_query_head": ((65536, 32, 128, 2), {}, (int, float)),
    "paged_pages": ((4100, 16), {}, int),
    "paged_empty_slots": ((4100, 16), {}, int),
    "logits_bytes": ((8192, 128256, 2), {}, (int, float)),
    "cross_entropy_fused_bytes": ((8192, 128256, 2), {}, (int, float)),
    "cross_entropy_stored_softmax_bytes": ((8192, 128256, 2), {}, (int, float)),
    "scan_one_pass_bytes": ((1 << 26, 4), {}, (int, float)),
    "scan_reduce_then_scan_bytes": ((1 << 26, 4), {}, (int, float)),
    "scan_tiles": ((1 << 26, 4096), {}, int),
}

# name -> a call with an impossible argument
IMPOSSIBLE_CALLS = {
    "block_scale_count": ((0, 7168), {}),
    "block_scale_share": ((128, 128), {"scale_bytes": 0}),
    "moe_row_tiles": ((24576, 64, 128), {"imbalance": 65.0}),
    "moe_loop_waves": ((24576, 0, 1408, 128, 128, 132), {}),
    "moe_grouped_waves": ((24576, 64, 1408, 128, 128, 132), {"imbalance": 0.5}),
    "params": (({"name": "broken", "layers": 0, "hidden": 4096},), {}),
    "weight_bytes": ((L3,), {"dtype": "fp7"}),
    "dtype_bytes": (("int3",), {}),
    "kv_bytes_per_token": ((L3,), {"dtype": "bogus"}),
    "kv_bytes": ((L3, -1), {}),
    "zero_bytes_per_gpu": ((7.5e9, 64, 4), {}),
    "zero_terms": ((7.5e9, 0, 1), {}),
    "zero_comm_volume": ((-1, 1), {}),
    "collective_bytes_per_rank": ((8, 1e9), {"op": "all-shuffle"}),
    "bus_factor": ((0,), {}),
    "transfer_time": ((1e9, 0), {}),
    "hbm_bytes": (("h100-pcie",), {}),  # only its label is sourced
    "hbm_statement": (("h100-pcie",), {}),
    "activation_bytes_per_layer": ((2048, 1, 12288, 96), {"recompute": "some"}),
    "activation_bytes": ((L3, 0, 1), {}),
    "bubble_fraction_of_ideal": ((4, 0), {}),
    "bubble_fraction_of_total": ((0, 8), {}),
    "peak_flops": ((GPUS["a100-80gb"],), {"dtype": "fp8"}),
    "ridge": ((H100,), {"dtype": "int3"}),
    "roofline_time": ((H100, -1.0, 1e9), {}),
    "roofline_bound": ((H100, 1e12, -5), {}),
    "training_flops": ((8e9, -1), {}),
    "training_time": ((70e9, 2e12, 1024, 989e12), {"utilisation": 1.5}),
    "model_flops_utilisation": ((70e9, 4e6, 0, 1024, 989e12), {}),
    "ring_allreduce_time": ((64, 1e9, 50e9, -1e-6), {}),
    "tree_allreduce_time": ((0, 1e9, 50e9, 5e-6), {}),
    "forward_flops_per_token": ((float("nan"),), {}),
    "training_ledger": ((L3, 4096, 1), {"optimizer": "lion"}),
    "decode_time_lower_bound": ((L3, H100, 0, 4096), {}),
    "max_concurrent_sequences": ((L3, H100, 0), {}),
    "log2": ((0,), {}),
    "moe_params": (({"name": "x", "layers": 0},), {}),
    "moe_total_params": (({"name": "x", "layers": 0},), {}),
    "moe_active_params": (({"name": "x", "layers": 0},), {}),
    "moe_weight_bytes_per_gpu": (("mixtral-8x7b", 0), {}),
    "moe_capacity": ((4096, 0, 1.25), {}),
    "moe_a2a_bytes": ((-1, 4096, 2, 8), {}),
    "moe_experts_touched": ((8, 9, 16), {}),
    "moe_decode_weight_bytes": (("mixtral-8x7b", 0), {}),
    "mla_kv_bytes_per_token": (("llama-3-8b",), {}),
    "mla_mha_kv_bytes_per_token": (("llama-3-8b",), {}),
    "attention_flops": ((0, 32, 128), {}),
    "per_token_flops_ratio": ((0, 4096, 4096), {}),
    "ring_bytes_per_step": ((131072, 0, 8, 128), {}),
    "ring_bytes_per_rank": ((131072, 0, 8, 128), {}),
    "ulysses_kv_heads": ((8, 0), {}),
    "ulysses_bytes_per_rank": ((131072, 3, 32, 8, 128), {}),
    "ring_block_compute_time": ((131072, 8, 32, 128, 0.0), {}),
    "ring_block_transfer_time": ((131072, 8, 8, 128, 0.0), {}),
    "ring_overlap_ratio": ((131072, 8, 32, 8, 128, 989e12, 0.0), {}),
    "ring_min_block_tokens": ((0.0, 50e9), {}),
    "gemm_flops": ((0, 4096, 4096), {}),
    "gemm_bytes": ((4096, 4096, -1), {}),
    "gemm_intensity": ((4096, 0, 4096), {}),
    "gemm_tiles": ((4096, 4096, 0, 128), {}),
    "tile_efficiency": ((0, 256, 128, 128), {}),
    "gemm_waves": ((1024, 0), {}),
    "wave_efficiency": ((1024, 0), {}),
    "patch_tile_loads": ((0, 9, 8), {}),
    "block_scaled_bytes": ((4096, 4096), {"block": 0}),
    "concurrency": ((-1.0, 8.0), {}),
    "gpus_for_load": ((10.0, 500.0, 0.0), {}),
    "dollars_per_million_tokens": ((2.0, 0.0), {}),
    "energy_kwh": ((1000.0, -5.0), {}),
    "kwh_per_million_tokens": ((700.0, 0.0), {}),
    "decode_tokens_per_second": ((L3, H100, 0, 4096), {}),
    "max_batch_for_tpot": ((L3, H100, 4096, 0.0), {}),
    "cluster_mtbf": ((0.0, 16384), {}),
    "mtbf_from_failures": ((54 * 86400.0, 0), {}),
    "failure_probability": ((3600.0, 0.0), {}),
    "checkpoint_bytes": ((-1.0,), {}),
    "checkpoint_write_time": ((1e12, 0.0), {}),
    "young_interval": ((300.0, 0.0), {}),
    "daly_interval": ((300.0, 0.0), {}),
    "overhead_fraction": ((0.0, 300.0, 86400.0), {}),
    "expected_lost_time": ((86400.0, 0.0, 3600.0), {}),
    "exposed_time": ((-0.1, 0.2), {}),
    "loader_batch_time": ((1.2, 0), {}),
    "overlapped_step_time": ((-1.0, 0.3), {}),
    "elementwise_chain_bytes": ((1 << 20, 0), {}),
    "idle_fraction": ((0.2, 0.1), {}),
    "speculative_tokens_per_round": ((1.0, 4), {}),
    "speculative_speedup": ((0.8, 4, -0.1), {}),
    "layernorm_backward_floor_bytes": ((0, 4096, 2), {}),
    "layernorm_backward_two_kernel_bytes": ((8192, 4096, 0), {}),
    "layernorm_backward_groups": ((8192, 0), {}),
    "layernorm_backward_scratch_bytes": ((8192, -1, 132), {}),
    "layernorm_backward_fused_bytes": ((8192, 4096, 2, 132), {"groups_per_sm": 0}),
    "paged_decode_bytes": ((65536, 0, 128, 2), {}),
    "paged_decode_bytes_per_query_head": ((65536, 32, 0, 2), {}),
    "paged_pages": ((4100, 0), {}),
    "paged_empty_slots": ((0, 16), {}),
    "logits_bytes": ((8192, 0, 2), {}),
    "cross_entropy_fused_bytes": ((-1, 128256, 2), {}),
    "cross_entropy_stored_softmax_bytes": ((8192, 128256, -2), {}),
    "scan_one_pass_bytes": ((0, 4), {}),
    "scan_reduce_then_scan_bytes": ((1 << 26, 0), {}),
    "scan_tiles": ((1 << 26, 0), {}),
}

ARITHMETIC = {"ceil", "floor", "sqrt", "min", "max", "abs", "round"}


def test_documented_names_are_all_exported():
    documented = {
        "params",
        "weight_bytes",
        "dtype_bytes",
        "kv_bytes_per_token",
        "kv_bytes",
        "zero_bytes_per_gpu",
        "zero_terms",
        "collective_bytes_per_rank",
        "transfer_time",
        "activation_bytes_per_layer",
        "bubble_fraction_of_ideal",
        "bubble_fraction_of_total",
        "peak_flops",
        "ridge",
        "roofline_time",
        "training_flops",
        "forward_flops_per_token",
        "training_ledger",
        "decode_time_lower_bound",
        "max_concurrent_sequences",
        "ceil",
        "floor",
        "log2",
        "min",
        "max",
        "round",
    }
    assert documented <= set(FUNCTIONS)
    assert {"GB", "GiB", "MB", "MiB", "KB", "KiB", "TB"} <= set(CONSTANTS)


def test_every_function_has_a_signature_case():
    assert set(FUNCTIONS) == set(DOCUMENTED_CALLS)


@pytest.mark.parametrize("name", sorted(DOCUMENTED_CALLS))
def test_documented_signature_returns_a_value_of_the_stated_type(name):
    args, kwargs, kind = DOCUMENTED_CALLS[name]
    result = FUNCTIONS[name](*args, **kwargs)
    assert isinstance(result, kind)
    if isinstance(result, float):
        assert math.isfinite(result)


@pytest.mark.parametrize("name", sorted(IMPOSSIBLE_CALLS))
def test_impossible_values_raise_value_error_with_a_message(name):
    args, kwargs = IMPOSSIBLE_CALLS[name]
    with pytest.raises(ValueError) as info:
        FUNCTIONS[name](*args, **kwargs)
    assert str(info.value)


def test_every_calculator_has_an_impossible_case():
    assert set(FUNCTIONS) - ARITHMETIC == set(IMPOSSIBLE_CALLS)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("GB", 1e9), ("GiB", 2**30), ("MB", 1e6), ("MiB", 2**20), ("KB", 1e3), ("KiB", 1024), ("TB", 1e12)],
)
def test_size_constants(value, expected):
    assert CONSTANTS[value] == expected


@pytest.mark.parametrize(
    ("dtype", "size"),
    [("fp32", 4), ("tf32", 4), ("bf16", 2), ("fp16", 2), ("fp8", 1), ("int8", 1), ("int4", 0.5)],
)
def test_dtype_bytes(dtype, size):
    assert FUNCTIONS["dtype_bytes"](dtype) == size


def test_names_resolve_like_mappings():
    assert FUNCTIONS["params"]("llama-3-8b") == FUNCTIONS["params"](L3)
    assert FUNCTIONS["ridge"]("h100-sxm") == FUNCTIONS["ridge"](H100)


def test_unknown_model_name_lists_known_names():
    with pytest.raises(ValueError, match="llama-3-8b"):
        FUNCTIONS["params"]("llama-9-1b")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("kv_bytes_per_token(model)", 819_200),
        ("kv_bytes(model, tokens=s) / GiB", 819_200 * 2048 / 2**30),
        ("zero_terms(7.5e9, 64, 1)['optimizer'] / GB", 12 * 7.5 / 64),
        ("training_ledger(model, s, 1).total > training_ledger(model, s, 1).weights", True),
        ("ceil(log2(s + 1))", 12),
        ("round(ridge(gpu))", 295),
    ],
)
def test_cards_call_functions_through_the_jinja_sandbox(expression, expected):
    env = SandboxedEnvironment()
    env.globals.update(NAMES)
    result = env.compile_expression(expression)(model=OPT, gpu=H100, s=2048)
    assert result == pytest.approx(expected)


def test_importing_expressions_pulls_in_no_ui_and_no_gpu_library():
    code = (
        "import sys, drill.calc.expressions\n"
        "heavy = [m for m in ('textual', 'torch', 'triton', 'cupy', 'sqlmodel') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
