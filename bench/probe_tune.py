"""Variants of the transpose and rmsnorm answers, each judged at the card's timing shapes.

    python bench/probe_tune.py [--cards transpose,rmsnorm]

For tuning a reference answer on a new GPU: every variant goes through the
judge exactly as a learner's edit would (correctness cases, then the timing
shapes), and the table shows time, GB/s and % of the copy ceiling. Needs a GPU.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files, kernel_job
from drill.kernel.client import JudgeClient

DIAGONAL = """
    // diagonal order: neighbouring blocks start in different DRAM partitions
    const int bid_y = blockIdx.x;
    const int bid_x = (blockIdx.x + blockIdx.y) % gridDim.x;
"""


def transpose_variants(text: str) -> dict[str, str]:
    out = {}
    for tile, rows in ((64, 2), (64, 4), (64, 8), (32, 8), (32, 4)):
        v = text.replace("#define TILE 64", f"#define TILE {tile}")
        v = v.replace("#define ROWS_PER_PASS 2", f"#define ROWS_PER_PASS {rows}")
        v = v.replace("// drill: block=64x2 tile=64x64", f"// drill: block={tile}x{rows} tile={tile}x{tile}")
        out[f"tile {tile} rows {rows}"] = v
        # square grids only (the timing shape is square; the small cases are not, so fall back there)
        d = v.replace("{\n    __shared__", "{\n    const bool sq = gridDim.x == gridDim.y;\n    __shared__", 1)
        d = d.replace(
            "    const int c = blockIdx.x",
            "    const int bx = sq ? (blockIdx.x + blockIdx.y) % gridDim.x : blockIdx.x;\n"
            "    const int by = sq ? blockIdx.x : blockIdx.y;\n    const int c = bx",
        )
        d = re.sub(r"blockIdx\.y \* TILE", "by * TILE", d)
        d = d.replace("const int or0 = blockIdx.x * TILE", "const int or0 = bx * TILE")
        out[f"tile {tile} rows {rows} diagonal"] = d
    return out | float4_variants()


FLOAT4 = r"""
// drill: block=16xROWS tile=64x64
#define TILE 64

extern "C" __global__ void __launch_bounds__(16 * ROWS)
transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    const bool sq = DIAG && gridDim.x == gridDim.y;
    const int bx = sq ? (blockIdx.x + blockIdx.y) % gridDim.x : blockIdx.x;
    const int by = sq ? blockIdx.x : blockIdx.y;
    const int tx = threadIdx.x;
    const int c0 = bx * TILE + 4 * tx;
    const int r0 = by * TILE;
    const bool vec = (cols % 4 == 0) && (c0 + 3 < cols);
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        const int r = r0 + k;
        if (r < rows) {
            if (vec) {
                const float4 v = __ldcs(reinterpret_cast<const float4*>(in + (size_t)r * cols + c0));
                tile[k][4 * tx] = v.x; tile[k][4 * tx + 1] = v.y; tile[k][4 * tx + 2] = v.z; tile[k][4 * tx + 3] = v.w;
            } else {
                for (int j = 0; j < 4; ++j)
                    if (c0 + j < cols) tile[k][4 * tx + j] = in[(size_t)r * cols + c0 + j];
            }
        }
    }
    __syncthreads();
    const int oc0 = by * TILE + 4 * tx;
    const int or0 = bx * TILE;
    const bool ovec = (rows % 4 == 0) && (oc0 + 3 < rows);
    #pragma unroll
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        const int orow = or0 + k;
        if (orow < cols) {
            if (ovec) {
                const float4 v = make_float4(tile[4 * tx][k], tile[4 * tx + 1][k], tile[4 * tx + 2][k], tile[4 * tx + 3][k]);
                STORE(reinterpret_cast<float4*>(out + (size_t)orow * rows + oc0), v);
            } else {
                for (int j = 0; j < 4; ++j)
                    if (oc0 + j < rows) out[(size_t)orow * rows + oc0 + j] = tile[4 * tx + j][k];
            }
        }
    }
}
"""


def float4_variants() -> dict[str, str]:
    out = {}
    for rows in (8, 16):
        for diag in (0, 1):
            for store in ("plain", "cs"):
                body = (
                    FLOAT4.replace("ROWS)", f"{rows})")
                    .replace("xROWS", f"x{rows}")
                    .replace("k += ROWS", f"k += {rows}")
                )
                body = body.replace("DIAG", str(diag))
                body = body.replace("STORE(", "*(" if store == "plain" else "__stcs(")
                if store == "plain":
                    body = body.replace("oc0), v);", "oc0)) = v;")
                out[f"float4 16x{rows} diag {diag} {store}"] = body
    return out


def rmsnorm_variants(text: str) -> dict[str, str]:
    line = "warps = max(4, min(16, block // 1024))"
    assert line in text
    out = {"as is": text}
    for label, expr in (
        ("warps block//512 cap 32", "max(4, min(32, block // 512))"),
        ("warps block//2048 cap 16", "max(4, min(16, block // 2048))"),
        ("warps 8 at 16384", "8 if block >= 16384 else max(4, min(16, block // 1024))"),
        ("warps 32 at 16384", "32 if block >= 16384 else max(4, min(16, block // 1024))"),
    ):
        out[label] = text.replace(line, f"warps = {expr}")
    eight = out["warps 8 at 16384"]
    hinted = eight.replace(
        "x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0)",
        'x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0, eviction_policy="evict_first")',
    ).replace(
        "w = tl.load(w_ptr + cols, mask=mask, other=0.0)\n    tl.store",
        'w = tl.load(w_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last")\n    tl.store',
    )
    assert hinted != eight
    out["warps 8, x evict_first, w evict_last"] = hinted
    for block, warps in ((4096, 8), (2048, 4), (8192, 8), (2048, 8)):
        streamed = text.replace("WHOLE_ROW_MAX = 16384", "WHOLE_ROW_MAX = 8192")
        streamed = streamed.replace("STREAM_BLOCK = 4096", f"STREAM_BLOCK = {block}")
        streamed = streamed.replace("BLOCK=STREAM_BLOCK, num_warps=8", f"BLOCK=STREAM_BLOCK, num_warps={warps}")
        out[f"streamed from 16384, block {block} warps {warps}"] = streamed
    out["warps 8, hints, store .cs"] = hinted.replace(
        "x * inv_rms * w, mask=mask)\n\n\n@triton.jit",
        'x * inv_rms * w, mask=mask, cache_modifier=".cs")\n\n\n@triton.jit',
    )
    assert out["warps 8, hints, store .cs"] != hinted
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", default="transpose,rmsnorm")
    parser.add_argument("--only", default="", help="only variants whose label contains one of these (comma-separated)")
    args = parser.parse_args()
    cards = load_decks([paths.cards_dir() / "kernels.yaml"]).cards
    makers = {"transpose": transpose_variants, "rmsnorm": rmsnorm_variants}
    with JudgeClient(data_dir=Path(tempfile.mkdtemp(prefix="drill-tune-"))) as client:
        print(client.info().get("device"))
        cal = client.calibrate()
        print(f"copy {cal.get('gbps', 0):,.0f} GB/s, read {cal.get('read_gbps', 0):,.0f} GB/s")
        for card_id in args.cards.split(","):
            card = cards[card_id]
            text = kernel_files(card).solution.read_text()
            for label, variant in makers[card_id](text).items():
                if args.only and not any(part in label for part in args.only.split(",")):
                    continue
                for run in (1, 2):
                    v = client.run(dict(kernel_job(card), fresh_baseline=False), variant, timeout=300, timing="all")
                    if v.correct is not True or v.errors:
                        problems = "; ".join(v.errors) or "; ".join(c.message for c in v.cases if not c.ok)
                        print(f"{card_id:<10} {label:<32} NOT CORRECT: {problems[:300]}")
                        break
                    for t in v.timings:
                        print(
                            f"{card_id:<10} {label:<32} run {run} {t.name:<14} {t.ms * 1e3:9.1f} us"
                            f" {t.gbps:7,.0f} GB/s {t.pct_of_ceiling or 0:6.1f} % {t.vs_torch or 0:5.2f}x"
                        )


if __name__ == "__main__":
    main()
