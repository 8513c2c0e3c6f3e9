"""GEMM calculators against published figures, their argument checks, and `drill calc gemm`.

Sources:
- NVIDIA Deep Learning Performance, "Matrix Multiplication Background User's
  Guide" (DU-09799-001): "Math And Memory Bounds" (2·M·N·K FLOPs; intensity
  M·N·K / (M·K + N·K + M·N) in FP16; 8192 x 128 x 8192 is 124.1 FLOPS/B, below
  V100's 138.9, so memory limited; 8192 x 8192 x 8192 is 2730; GEMV below 1) and
  "Wave Quantization" (A100, 108 SMs, one 256 x 128 tile per SM: a wave is
  108 tiles; the example fixes M = 2304, K = 4096 and varies N).
- /work/shared/FACTS.md, Inference: decode weight GEMMs do about B FLOP/byte at
  batch B with bf16 weights; H100 SXM bf16 ridge about 295 FLOP/byte.
- Open Compute Project, OCP Microscaling Formats (MX) Specification v1.0: 32
  elements share one 8-bit E8M0 scale (MXFP4: 4.25 bits per element).
- NVIDIA cuTile docs, tutorial 11 "Inference with NVFP4/MXFP8": 16 NVFP4 values
  take 8 packed bytes plus one FP8 scale byte, 9 bytes, against 32 bytes in f16.
- Triton tutorials, "Matrix Multiplication", L2 Cache Optimizations: 9 x 9 blocks,
  90 blocks loaded for the first 9 outputs in row-major order, 54 grouped.
Cases marked "hand-derived" check an identity worked out by hand.
"""

from __future__ import annotations

import json

import pytest

from drill.calc import gemm, roofline
from drill.calc.data import load_gpus
from drill.calc.expressions import FUNCTIONS
from drill.cli import main

GPUS = load_gpus()

# --- FLOPs, bytes and arithmetic intensity


def test_flops_and_bytes_of_the_guides_example():
    # Guide: M x N x K FMAs, 2·M·N·K FLOPs; bytes 2·(M·K + N·K + M·N) with FP16 data.
    m, n, k = 8192, 128, 8192
    assert gemm.gemm_flops(m, n, k) == 2 * m * n * k
    assert gemm.gemm_bytes(m, n, k, "fp16") == 2 * (m * k + n * k + m * n)


@pytest.mark.parametrize(
    ("m", "n", "k", "published"),
    [
        pytest.param(8192, 128, 8192, 124.1, id="MMB-guide-8192x128x8192-124.1"),
        pytest.param(8192, 8192, 8192, 2730, id="MMB-guide-8192^3-2730"),
    ],
)
def test_intensity_matches_the_guide(m, n, k, published):
    # the guide prints one decimal for the first and truncates the second
    assert gemm.gemm_intensity(m, n, k, "fp16") == pytest.approx(published, abs=1)


def test_guide_example_is_memory_limited_on_v100_and_gemv_below_one():
    # Guide: 124.1 FLOPS/B is lower than V100's 138.9 FLOPS:B, so memory limited;
    # matrix-vector products (M = 1 or N = 1) always have intensity below 1.
    assert gemm.gemm_intensity(8192, 128, 8192, "fp16") < 138.9 < gemm.gemm_intensity(8192, 8192, 8192, "fp16")
    assert gemm.gemm_intensity(1, 8192, 8192, "fp16") < 1
    assert gemm.gemm_intensity(8192, 1, 8192, "fp16") < 1


@pytest.mark.parametrize("batch", [1, 8, 32, 128])
def test_decode_gemm_intensity_is_about_the_batch(batch):
    # FACTS.md: decode weight GEMMs do about B FLOP/byte at batch B with bf16 weights.
    assert gemm.gemm_intensity(batch, 14336, 4096, "bf16") == pytest.approx(batch, rel=0.05)


def test_fp8_inputs_double_intensity_when_the_output_is_small():
    # hand-derived: halving the bytes of A and B doubles the intensity when C is negligible
    bf16 = gemm.gemm_intensity(16, 8192, 8192, "bf16")
    fp8 = gemm.gemm_intensity(16, 8192, 8192, "fp8", out_dtype="bf16")
    assert fp8 == pytest.approx(2 * bf16, rel=0.01)
    assert gemm.gemm_bytes(2, 3, 4, "fp8", "fp32") == (2 * 4 + 4 * 3) * 1 + 2 * 3 * 4


def test_large_square_gemm_is_compute_bound_on_h100():
    # FACTS.md: H100 SXM bf16 ridge about 295 FLOP/byte; 8192^3 in bf16 does 2730.
    h100 = GPUS["h100-sxm"]
    assert gemm.gemm_intensity(8192, 8192, 8192) > roofline.ridge(h100) == pytest.approx(295, abs=0.5)
    assert gemm.gemm_intensity(8, 8192, 8192) < roofline.ridge(h100)


# --- tiles and waves


def test_wave_quantization_example_of_the_guide():
    # Guide: A100 has 108 SMs; 256 x 128 tiles, one per SM: a wave is 108 tiles.
    # With M = 2304 there are 9 tile rows, so N = 1536 (12 tile columns) fills exactly one wave.
    a100 = GPUS["a100-80gb"]
    tiles = gemm.gemm_tiles(2304, 1536, 256, 128)
    assert tiles == 108 == a100["sms"]
    assert gemm.gemm_waves(tiles, a100["sms"]) == 1
    assert gemm.wave_efficiency(tiles, a100["sms"]) == 1.0
    # one more tile column: 117 tiles need a second wave that is 9/108 full
    tiles = gemm.gemm_tiles(2304, 1664, 256, 128)
    assert tiles == 117
    assert gemm.gemm_waves(tiles, 108) == 2
    assert gemm.wave_efficiency(tiles, 108) == pytest.approx(117 / 216)


def test_waves_with_several_blocks_per_sm():
    # hand-derived: two resident tiles per SM double the wave size
    assert gemm.gemm_waves(264, 132, blocks_per_sm=2) == 1
    assert gemm.wave_efficiency(265, 132, blocks_per_sm=2) == pytest.approx(265 / 528)


def test_tile_quantization():
    # Guide: utilization is highest when the output dimensions divide by the tile.
    assert gemm.tile_efficiency(2304, 1536, 256, 128) == 1.0
    # hand-derived: one row past a tile boundary adds a whole row of tiles
    assert gemm.gemm_tiles(257, 256, 128, 128) == 6
    assert gemm.tile_efficiency(257, 256, 128, 128) == pytest.approx(257 * 256 / (6 * 128 * 128))


def test_grouped_tile_order_matches_the_triton_tutorial():
    # Triton tutorial "Matrix Multiplication", L2 Cache Optimizations: 9 x 9 blocks; the first
    # 9 outputs load 90 blocks in row-major order and 54 in grouped order.
    assert gemm.patch_tile_loads(1, 9, 9) == 90
    assert gemm.patch_tile_loads(3, 3, 9) == 54


# --- block-scaled (MX, NVFP4) operands


def test_mx_and_nvfp4_bytes_match_the_specifications():
    # OCP MX v1.0: 32 elements + one E8M0 byte; MXFP4 is 4.25 bits per element, MXFP8 8.25.
    assert gemm.block_scaled_bytes(1, 32, "fp4", 32) * 8 / 32 == pytest.approx(4.25)
    assert gemm.block_scaled_bytes(1, 32, "fp8", 32) * 8 / 32 == pytest.approx(8.25)
    # cuTile NVFP4 tutorial: 16 values = 8 packed bytes + 1 FP8 scale = 9 bytes, vs 32 in f16
    assert gemm.block_scaled_bytes(1, 16, "fp4", 16) == 9
    assert gemm.block_scaled_bytes(1, 16, "fp4", 16) / (16 * 2) == pytest.approx(0.28, abs=0.005)
    # a (M, K) tensor carries (M, K/32) scales
    assert gemm.block_scaled_bytes(4096, 8192, "fp8", 32) == 4096 * 8192 + 4096 * 256


# --- figures the hardware-frontier deck quotes, from vendor peaks (dense) and bandwidths


@pytest.mark.parametrize(
    ("flops", "bandwidth", "quoted"),
    [
        # NVIDIA HGX B200 datasheet: BF16 4.5 PFLOP/s with sparsity (2.25 dense); 7.7 to 8 TB/s by version
        pytest.param(2.25e15, 8e12, 281, id="B200-bf16-8TB/s"),
        pytest.param(2.25e15, 7.7e12, 292, id="B200-bf16-7.7TB/s"),
        # NVIDIA GB200 NVL72 datasheet, per GPU: BF16 5 PFLOP/s sparse (2.5 dense), 8 TB/s
        pytest.param(2.5e15, 8e12, 312, id="GB200-bf16"),
        pytest.param(5e15, 8e12, 625, id="GB200-fp8"),
        pytest.param(10e15, 8e12, 1250, id="GB200-fp4"),
        # Google Cloud TPU docs: v5p 459 TFLOP/s, 2,765 GB/s; v6e 918 TFLOP/s, 1,638 GB/s
        pytest.param(459e12, 2.765e12, 166, id="TPUv5p-bf16"),
        pytest.param(918e12, 1.638e12, 560, id="TPUv6e-bf16"),
    ],
)
def test_ridge_points_quoted_in_the_decks(flops, bandwidth, quoted):
    spec = {"name": "spec", "bf16_flops": flops, "hbm_bandwidth": bandwidth}
    assert roofline.ridge(spec) == pytest.approx(quoted, abs=0.6)


def test_mi300x_entry_matches_amd_docs():
    # AMD ROCm docs, MI300 microarchitecture: BF16 1,307.4, FP8 2,614.9 TFLOP/s dense, 5.3 TB/s;
    # GPU specifications: 304 CUs, 64 KiB LDS, 32 MiB L2
    mi300x = GPUS["mi300x"]
    assert (mi300x["bf16_flops"], mi300x["fp8_flops"], mi300x["hbm_bandwidth"]) == (1307.4e12, 2614.9e12, 5.3e12)
    assert (mi300x["sms"], mi300x["smem_per_sm_bytes"], mi300x["l2_bytes"]) == (304, 64 * 1024, 32 * 2**20)
    assert roofline.ridge(mi300x) == pytest.approx(247, abs=0.5)


def test_blackwell_ratios_quoted_in_the_decks():
    # dense B200 vs H100 SXM: 2,250 / 989 and 4,500 / 1,979 TFLOP/s are both about 2.3x
    assert 2250 / 989 == pytest.approx(2.3, abs=0.05)
    assert 4500 / 1979 == pytest.approx(2.3, abs=0.05)
    # NVFP4 is 32 / 9 = 3.56x smaller than bf16 (cuTile tutorial: 9 bytes per 16 values)
    assert 16 * 2 / gemm.block_scaled_bytes(1, 16, "fp4", 16) == pytest.approx(3.56, abs=0.005)


# --- argument checks and wiring


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda: gemm.gemm_flops(0, 8, 8), "m"),
        (lambda: gemm.gemm_bytes(8, 8, 1.5), "k"),
        (lambda: gemm.gemm_intensity(8, -1, 8), "n"),
        (lambda: gemm.gemm_bytes(8, 8, 8, "fp7"), "dtype"),
        (lambda: gemm.gemm_tiles(8, 8, 0, 8), "bm"),
        (lambda: gemm.tile_efficiency(8, 8, 8, True), "bn"),
        (lambda: gemm.gemm_waves(0, 132), "tiles"),
        (lambda: gemm.wave_efficiency(10, 0), "sms"),
        (lambda: gemm.gemm_waves(10, 132, blocks_per_sm=0), "blocks_per_sm"),
        (lambda: gemm.patch_tile_loads(3, 3, 0), "k_tiles"),
        (lambda: gemm.patch_tile_loads(0, 3, 9), "patch_m"),
        (lambda: gemm.block_scaled_bytes(8, 32, "fp4", 0), "block"),
        (lambda: gemm.block_scaled_bytes(8, 32, "fp4", 32, -1), "scale_bytes"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_card_functions_are_in_the_expression_table():
    for name, function in gemm.CARD_FUNCTIONS.items():
        assert FUNCTIONS[name] is function


def test_cli_gemm_reproduces_the_guides_figures(capsys):
    argv = ["calc", "gemm", "-m", "2304", "-n", "1664", "-k", "4096", "--dtype", "fp16"]
    code = main([*argv, "--bm", "256", "--bn", "128", "--gpu", "a100-80gb", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["flops"] == 2 * 2304 * 1664 * 4096
    assert out["tiles"] == 117 and out["waves"] == 2
    assert out["wave_efficiency"] == pytest.approx(117 / 216)
    assert out["ridge_flop_per_byte"] == pytest.approx(312e12 / 2.039e12)
    assert out["bound"] == "compute"
    code = main(["calc", "gemm", "-m", "8192", "-n", "128", "-k", "8192", "--dtype", "fp16", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and round(out["intensity_flop_per_byte"], 1) == 124.1
    assert "waves" not in out


def test_cli_gemm_errors(capsys):
    assert main(["calc", "gemm", "-m", "8", "-n", "8", "-k", "8", "--bm", "128"]) == 2
    assert "--bn" in capsys.readouterr().err
    assert main(["calc", "gemm", "-m", "0", "-n", "8", "-k", "8"]) == 2
    assert "m must be" in capsys.readouterr().err


def test_tail_wave_card_thresholds_per_fix_hand_derived():
    """gemm-diag-tail-wave: 144 CTAs of 128 x 256 on 132 SMs took 204.35 us in two waves (the card's ncu trace);
    the rubric's threshold for each proposed fix follows from the wave counts."""
    flops = gemm.gemm_flops(2304, 2048, 8192)
    tiles = gemm.gemm_tiles(2304, 2048, 128, 256)
    assert (tiles, gemm.gemm_waves(tiles, 132)) == (144, 2)
    wave = 204.35e-6 / 2
    stream_k = wave * tiles / 132  # the same work spread evenly over every SM
    assert stream_k == pytest.approx(111.5e-6, rel=0.01) and flops / stream_k > 640e12
    half_tiles = gemm.gemm_tiles(2304, 2048, 128, 128)  # or split-K = 2: 288 units of half the work
    half_waves = gemm.gemm_waves(half_tiles, 132)
    assert (half_tiles, half_waves) == (288, 3)
    smaller = half_waves * wave / 2
    assert smaller == pytest.approx(153e-6, rel=0.01) and 470e12 < flops / smaller < 510e12
