"""Tile choices of the FP8 block-scaled GEMM and MoE grouped GEMM answers, against their torch baselines.

    python bench/probe_gemm_cards.py [--files fp8_block_gemm,moe_grouped_gemm]

For tuning the two answers on a new GPU: each tile configuration is checked
against the harness's reference at every timing shape, then timed the judge's
way (L2 flushed, median of many launches), beside torch._scaled_mm (row-wise
scales), torch._grouped_mm and a loop of torch.matmul over the experts.
Prints ms and TFLOPS per shape. Needs a GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FP8_TILES = [
    {"BLOCK_M": 64, "BLOCK_N": 128, "GROUP_M": 8, "num_stages": 4, "num_warps": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "GROUP_M": 8, "num_stages": 6, "num_warps": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "GROUP_M": 32, "num_stages": 5, "num_warps": 4},
    {"BLOCK_M": 128, "BLOCK_N": 128, "GROUP_M": 8, "num_stages": 5, "num_warps": 8},
    {"BLOCK_M": 64, "BLOCK_N": 256, "GROUP_M": 8, "num_stages": 5, "num_warps": 8},
    {"BLOCK_M": 64, "BLOCK_N": 64, "GROUP_M": 8, "num_stages": 5, "num_warps": 4},
    {"BLOCK_M": 128, "BLOCK_N": 64, "GROUP_M": 8, "num_stages": 5, "num_warps": 4},
]
MOE_TILES = [
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3, "num_warps": 8},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 4, "num_warps": 8},
    {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "num_stages": 3, "num_warps": 8},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 32, "num_stages": 5, "num_warps": 8},
    {"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 3, "num_warps": 4},
]


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe(
    kit: Any, harness: ModuleType, answer: ModuleType, tiles: list[dict[str, int]], extra: dict[str, Any]
) -> None:
    flops = harness.flops
    for case in harness.timing_cases(kit):
        kit.begin_case()
        inputs = harness.make_inputs(case, kit)
        ref = harness.reference(inputs, kit)
        program = SimpleNamespace(module=answer)
        tf = flops(case) / 1e12
        rows = []
        for name, make in extra.items():
            fn = make(inputs, kit)
            ms = kit.measure(fn, poison=False).ms
            rows.append((name, ms, ""))
        for cfg in tiles:
            answer.TILES = dict(cfg)
            launch = harness.launcher(program, inputs, kit)
            try:
                launch.run()
                kit.synchronize()
                check = harness.compare(launch.result(), ref, inputs, kit)
                ms = kit.measure(launch.run, poison=False).ms
                rows.append((str(cfg), ms, "ok" if check.ok else "WRONG " + check.message[:120]))
            except Exception as exc:  # a tile that does not fit (shared memory, registers)
                rows.append((str(cfg), float("nan"), f"{type(exc).__name__}: {str(exc)[:120]}"))
        print(f"\n{harness.__name__} {case['name']}")
        for name, ms, note in rows:
            print(f"  {ms:9.4f} ms {tf / (ms * 1e-3):8.1f} TFLOPS  {name} {note}", flush=True)
        del inputs, ref


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", default="fp8_block_gemm,moe_grouped_gemm", help="answer files (stems) to probe")
    args = parser.parse_args()
    import torch

    from drill.judge.torch_kit import Kit

    kit = Kit(True)
    print(torch.__version__, torch.cuda.get_device_name(0))
    for stem in args.files.split(","):
        harness = load(ROOT / "kernels" / "harness" / f"{stem}_harness.py", f"{stem}_harness")
        answer = load(ROOT / "answers" / f"{stem}.py", stem)
        starter = load(ROOT / "kernels" / f"{stem}.py", f"{stem}_starter")
        extra: dict[str, Any] = {"torch baseline": harness.baseline}
        extra["starter"] = lambda inputs, kit, h=harness, s=starter: (
            h.launcher(SimpleNamespace(module=s), inputs, kit).run
        )
        if hasattr(harness, "loop_baseline"):
            extra["loop of torch.matmul"] = harness.loop_baseline
        probe(kit, harness, answer, FP8_TILES if stem.startswith("fp8") else MOE_TILES, extra)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
