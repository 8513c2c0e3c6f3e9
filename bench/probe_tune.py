"""Variants of the transpose, rmsnorm and matmul answers, each judged at the card's timing shapes.

    python bench/probe_tune.py [--cards transpose,rmsnorm,matmul]

For tuning a reference answer on a new GPU: every variant goes through the
judge exactly as a learner's edit would (correctness cases, then the timing
shapes), and the table shows time, GB/s and % of the copy ceiling. Needs a GPU.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job


def edit(text: str, *pairs: tuple[str, str]) -> str:
    """`text` with each (old, new) replaced; an `old` the answer no longer has is an error, not a silent copy."""
    for old, new in pairs:
        assert old in text, f"not in the answer any more: {old!r}"
        text = text.replace(old, new)
    return text


def transpose_variants(text: str) -> dict[str, str]:
    """The answer, and the answer with one choice changed (threads, vector accesses, store hint, tile order)."""
    store = "*reinterpret_cast<float4*>(out + (size_t)orow * rows + oc0) = v;"
    diagonal = (  # square grids only: the timing shape is square, the small cases are not
        "const int tx = threadIdx.x;\n",
        "const int tx = threadIdx.x;\n"
        "    const bool sq = gridDim.x == gridDim.y;\n"
        "    const int bx = sq ? (blockIdx.x + blockIdx.y) % gridDim.x : blockIdx.x;\n"
        "    const int by = sq ? blockIdx.x : blockIdx.y;\n",
    )
    return {
        "as is": text,
        "16x8 threads": edit(
            text, ("#define ROWS_PER_PASS 16", "#define ROWS_PER_PASS 8"), ("block=16x16", "block=16x8")
        ),
        "no float4 (scalar accesses)": edit(
            text,
            ("const bool whole_in = ", "const bool whole_in = false && "),
            ("const bool whole_out = ", "const bool whole_out = false && "),
        ),
        "streaming stores (__stcs)": edit(
            text, (store, "__stcs(reinterpret_cast<float4*>(out + (size_t)orow * rows + oc0), v);")
        ),
        "diagonal tile order": edit(
            text, diagonal, ("blockIdx.x * TILE", "bx * TILE"), ("blockIdx.y * TILE", "by * TILE")
        ),
    }


def rmsnorm_variants(text: str) -> dict[str, str]:
    """The answer, with other warp counts, eviction hints, or the longest rows streamed twice."""
    warps = "warps = max(4, min(8, block // 2048))"
    x_load = "x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0)"
    return {
        "as is": text,
        "warps block//1024 cap 16": edit(text, (warps, "warps = max(4, min(16, block // 1024))")),
        "warps block//512 cap 32": edit(text, (warps, "warps = max(4, min(32, block // 512))")),
        "x evict_first": edit(text, (x_load, x_load.replace(")", ', eviction_policy="evict_first")'))),
        "streamed from 16384": edit(text, ("WHOLE_ROW_MAX = 16384", "WHOLE_ROW_MAX = 8192")),
    }


def matmul_variants(text: str) -> dict[str, str]:
    """The answer, and the answer with other large tiles (rows x columns x K step, stages, warps)."""
    wide = '"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_stages": 3, "num_warps": 8'
    out = {"as is": text}
    for bm, bn, bk, stages, warps in [
        (256, 128, 64, 3, 8),
        (128, 128, 64, 4, 4),
        (128, 128, 64, 4, 8),
        (128, 256, 64, 4, 8),
    ]:
        tile = f'"BLOCK_M": {bm}, "BLOCK_N": {bn}, "BLOCK_K": {bk}, "GROUP_M": 8, "num_stages": {stages}, "num_warps": {warps}'
        out[f"{bm}x{bn}x{bk} s{stages} w{warps}"] = edit(text, (wide, tile))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", default="transpose,rmsnorm")
    parser.add_argument("--only", default="", help="only variants whose label contains one of these (comma-separated)")
    args = parser.parse_args()
    cards = load_decks([paths.cards_dir() / "kernels.yaml"]).cards
    makers = {"transpose": transpose_variants, "rmsnorm": rmsnorm_variants, "matmul": matmul_variants}
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
                            f" {t.gbps:7,.0f} GB/s {t.tflops or 0:5.0f} TFLOPS {t.pct_of_ceiling or 0:6.1f} %"
                            f" {t.vs_torch or 0:5.2f}x"
                        )


if __name__ == "__main__":
    main()
