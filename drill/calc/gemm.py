"""GEMM: arithmetic intensity, tiles and waves.

Conventions: C (M, N) = A (M, K) · B (K, N), the BLAS naming that NVIDIA's
"Matrix Multiplication Background User's Guide" uses. A GEMM does M·N·K
fused multiply-adds, 2·M·N·K FLOPs. Its minimum HBM traffic reads A and B
once and writes C once. An output tile of BM × BN is computed by one thread
block (CTA); the tiles run in waves of (SMs × blocks per SM) at a time.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from drill.calc import checks, data, roofline
from drill.calc.arguments import BYTES, COUNT, FRACTION, RATIO, SECONDS, TEXT, Command, Rows, dtype, whole
from drill.calc.dtypes import dtype_bytes


def _dims(m: object, n: object, k: object) -> tuple[int, int, int]:
    return checks.count("m", m), checks.count("n", n), checks.count("k", k)


def gemm_flops(m: int, n: int, k: int) -> float:
    """FLOPs of C (M, N) = A (M, K) · B (K, N): 2·M·N·K (one multiply and one add per MAC).

    NVIDIA Matrix Multiplication Background User's Guide, "Math and Memory
    Bounds": M·N·K fused multiply-adds, 2·M·N·K FLOPs.
    """
    m, n, k = _dims(m, n, k)
    return 2.0 * m * n * k


def gemm_bytes(m: int, n: int, k: int, dtype: str = "bf16", out_dtype: str | None = None) -> float:
    """Minimum HBM bytes: read A (M·K) and B (K·N) once in `dtype`, write C (M·N) once in `out_dtype`.

    (M·K + K·N)·bytes(dtype) + M·N·bytes(out_dtype); `out_dtype` defaults to
    `dtype`. With one dtype of 2 bytes this is the guide's 2·(M·K + N·K + M·N).
    """
    m, n, k = _dims(m, n, k)
    inputs = dtype_bytes(dtype)
    output = dtype_bytes(dtype if out_dtype is None else out_dtype)
    return float((m * k + k * n) * inputs + m * n * output)


def gemm_intensity(m: int, n: int, k: int, dtype: str = "bf16", out_dtype: str | None = None) -> float:
    """Arithmetic intensity in FLOP per byte: 2·M·N·K / gemm_bytes.

    With 2-byte data it is M·N·K / (M·K + N·K + M·N) (Matrix Multiplication
    Background User's Guide: 8192 x 128 x 8192 gives 124.1 FLOPS/B, 8192³
    gives 2730; a GEMV, M = 1 or N = 1, stays below 1).
    """
    return gemm_flops(m, n, k) / gemm_bytes(m, n, k, dtype, out_dtype)


def gemm_tiles(m: int, n: int, bm: int, bn: int) -> int:
    """Output tiles (thread blocks) of a GEMM with BM × BN tiles: ⌈M/BM⌉·⌈N/BN⌉.

    Matrix Multiplication Background User's Guide, "GPU Implementation": the
    output is partitioned into tiles, one per thread block; an edge tile that
    is only partly inside C still costs a whole tile (tile quantization).
    """
    m = checks.count("m", m)
    n = checks.count("n", n)
    bm = checks.count("bm", bm)
    bn = checks.count("bn", bn)
    return math.ceil(m / bm) * math.ceil(n / bn)


def tile_efficiency(m: int, n: int, bm: int, bn: int) -> float:
    """Useful fraction of the tiled work: M·N / (tiles·BM·BN); 1.0 when BM divides M and BN divides N.

    The guide's tile quantization: utilization is highest when the output
    dimensions divide evenly by the tile dimensions.
    """
    tiles = gemm_tiles(m, n, bm, bn)
    return (checks.count("m", m) * checks.count("n", n)) / (tiles * bm * bn)


def gemm_waves(tiles: int, sms: int, blocks_per_sm: int = 1) -> int:
    """Waves: ⌈tiles / (SMs × blocks per SM)⌉.

    Matrix Multiplication Background User's Guide, "Wave Quantization": an
    A100 has 108 SMs and runs one 256 x 128 tile per SM, so a wave is 108
    tiles; utilization is highest when the tile count is a multiple of it.
    """
    tiles = checks.count("tiles", tiles)
    slots = checks.count("sms", sms) * checks.count("blocks_per_sm", blocks_per_sm)
    return math.ceil(tiles / slots)


def wave_efficiency(tiles: int, sms: int, blocks_per_sm: int = 1) -> float:
    """Busy fraction of the SM slots over all waves: tiles / (waves × SMs × blocks per SM).

    Assumes every tile takes the same time, so a partial last wave costs as
    long as a full one (the guide's wave quantization).
    """
    waves = gemm_waves(tiles, sms, blocks_per_sm)
    return tiles / (waves * sms * blocks_per_sm)


def patch_tile_loads(patch_m: int, patch_n: int, k_tiles: int) -> int:
    """Operand tiles read to compute a patch_m × patch_n patch of output tiles: k_tiles·(patch_m + patch_n).

    Each output tile row needs its K/BK tiles of A and each output tile
    column its K/BK tiles of B; tiles shared within the patch are read once
    (from L2 or SRAM). Triton's matrix-multiplication tutorial ("L2 Cache
    Optimizations"): with 9 × 9 blocks, the first 9 outputs in row-major
    order (a 1 × 9 patch) load 90 blocks, grouped as 3 × 3 they load 54.
    """
    patch_m = checks.count("patch_m", patch_m)
    patch_n = checks.count("patch_n", patch_n)
    return checks.count("k_tiles", k_tiles) * (patch_m + patch_n)


def block_scaled_bytes(rows: int, cols: int, dtype: str = "fp8", block: int = 32, scale_bytes: float = 1) -> float:
    """Bytes of a (rows, cols) tensor scaled in 1-D blocks along cols: data plus one scale per block.

    rows·cols·bytes(dtype) + rows·⌈cols/block⌉·scale_bytes. OCP Microscaling
    (MX) Formats v1.0: a block of 32 elements shares one 8-bit E8M0 scale, so
    MXFP4 costs 4 + 8/32 = 4.25 bits per element. NVFP4 uses blocks of 16 with
    an FP8 E4M3 scale (the per-tensor FP32 scale is not counted): 16 values
    take 8 + 1 = 9 bytes (NVIDIA cuTile docs, "Inference with NVFP4/MXFP8").
    """
    rows = checks.count("rows", rows)
    cols = checks.count("cols", cols)
    block = checks.count("block", block)
    scale = checks.non_negative("scale_bytes", scale_bytes)
    return rows * cols * dtype_bytes(dtype) + rows * math.ceil(cols / block) * scale


# Functions parameterised cards may call, by the name cards use (merged into drill.calc.expressions).
CARD_FUNCTIONS: dict[str, Callable[..., object]] = {
    "gemm_flops": gemm_flops,
    "gemm_bytes": gemm_bytes,
    "gemm_intensity": gemm_intensity,
    "gemm_tiles": gemm_tiles,
    "tile_efficiency": tile_efficiency,
    "gemm_waves": gemm_waves,
    "wave_efficiency": wave_efficiency,
    "patch_tile_loads": patch_tile_loads,
    "block_scaled_bytes": block_scaled_bytes,
}


# --- `drill calc gemm`


def _gemm(args: argparse.Namespace) -> tuple[Rows, str]:
    m = args.m
    n = args.n
    k = args.k
    rows: Rows = {
        "flops": (gemm_flops(m, n, k), RATIO),
        "bytes": (gemm_bytes(m, n, k, args.dtype, args.out_dtype), BYTES),
        "intensity_flop_per_byte": (gemm_intensity(m, n, k, args.dtype, args.out_dtype), RATIO),
    }
    if (args.bm is None) != (args.bn is None):
        raise ValueError("give both --bm and --bn, or neither")
    if args.bm is not None:
        tiles = gemm_tiles(m, n, args.bm, args.bn)
        rows["tiles"] = (tiles, COUNT)
        rows["tile_efficiency"] = (tile_efficiency(m, n, args.bm, args.bn), FRACTION)
        sms = args.sms
        if sms is None and args.gpu:
            sms = data.gpu(args.gpu)["sms"]
        if sms is not None:
            rows["waves"] = (gemm_waves(tiles, sms, args.blocks_per_sm), COUNT)
            rows["wave_efficiency"] = (wave_efficiency(tiles, sms, args.blocks_per_sm), FRACTION)
    if args.gpu:
        gpu = data.gpu(args.gpu)
        result = roofline.roofline(
            gpu, gemm_flops(m, n, k), gemm_bytes(m, n, k, args.dtype, args.out_dtype), args.dtype
        )
        rows["ridge_flop_per_byte"] = (roofline.ridge(gpu, args.dtype), RATIO)
        rows["time_s"] = (result["time_s"], SECONDS)
        rows["bound"] = (result["bound"], TEXT)
    out = args.dtype if args.out_dtype is None else args.out_dtype
    return rows, f"GEMM ({m} x {k}) · ({k} x {n}) in {args.dtype}, output in {out}"


def commands(command: Command) -> None:
    """Add this module's `drill calc` sub-commands."""
    p = command("gemm", _gemm, "GEMM FLOPs, bytes, intensity; tiles and waves; roofline bound on a GPU")
    p.add_argument("-m", "--m", dest="m", required=True, type=whole, metavar="M", help="rows of A and C")
    p.add_argument("-n", "--n", dest="n", required=True, type=whole, metavar="N", help="columns of B and C")
    p.add_argument("-k", "--k", dest="k", required=True, type=whole, metavar="K", help="the reduction dimension")
    p.add_argument("--dtype", type=dtype, default="bf16", help="dtype of A and B (default bf16)")
    p.add_argument("--out-dtype", type=dtype, metavar="DTYPE", help="dtype of C (default: --dtype)")
    p.add_argument("--bm", type=whole, metavar="BM", help="tile rows")
    p.add_argument("--bn", type=whole, metavar="BN", help="tile columns")
    p.add_argument("--sms", type=whole, metavar="S", help="SMs for the waves (default: those of --gpu)")
    p.add_argument("--blocks-per-sm", type=whole, default=1, metavar="B", help="resident tiles per SM (default 1)")
    p.add_argument("--gpu", metavar="NAME", help="a GPU in cards/data/gpus.yaml: adds the roofline bound")
