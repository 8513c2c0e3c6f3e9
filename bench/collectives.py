"""Collective cards against NCCL on this machine's GPUs: every figure, each target PASS or FAIL.

    python bench/collectives.py [--runs 3] [--world N] [--json FILE] [--sweep]

For ring-allreduce, reduce-scatter and all-gather: the starter judged once and
the reference answer `--runs` times in a row, through the real judge (one rank
per GPU over NCCL; fresh inputs; every timed output checked). Each timed size
(256, 16 and 1 MiB of float32) prints NCCL's bus bandwidth, the file's, and the
ratio, as nccl-tests defines busbw (doc/PERFORMANCE.md in NVIDIA/nccl-tests).

Targets (every run must meet them): the starters correct; the ring-allreduce
answer at >= 0.85x NCCL's bus bandwidth at 256 MiB and >= 0.6x at 16 MiB on two
GPUs, >= 0.7x at 256 MiB on four. The halves' figures are reported beside them.
`--sweep` also judges the all-reduce answer `--runs` times with each of a few
other settings of the constants at the top of answers/ring_allreduce.py.
Without two GPUs only correctness is judged (gloo, 2, 3 and 4 ranks). Exits 1
when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job
from drill.kernel.verdict import Verdict

CARDS = ("ring-allreduce", "reduce-scatter", "all-gather")
# (card, GPUs, timed size, the least ratio to NCCL's bus bandwidth)
TARGETS = (
    ("ring-allreduce", 2, "256 MiB", 0.85),
    ("ring-allreduce", 2, "16 MiB", 0.6),
    ("ring-allreduce", 4, "256 MiB", 0.7),
)
SWEEP = (  # PIECE_BYTES in MiB, IN_FLIGHT, GRAPHS: the constants at the top of answers/ring_allreduce.py
    (64, 2, False),
    (128, 2, False),
    (64, 2, True),
)
TIMEOUT_S = 240.0


def gpu_count() -> int:
    try:
        import torch

        return int(torch.cuda.device_count())
    except ImportError:
        return 0


def judge(client: JudgeClient, card: Any, source: str, world: int | None, timing: str) -> tuple[Verdict, float]:
    job = kernel_job(card)
    if world:
        job["world"] = world
    t0 = time.perf_counter()
    verdict = client.run(job, source, timeout=TIMEOUT_S, timing=timing)
    return verdict, time.perf_counter() - t0


def with_constants(source: str, piece_mib: int, in_flight: int, graphs: bool) -> str:
    """The answer with other tuning constants (the sweep)."""
    source = re.sub(r"^PIECE_BYTES = .*$", f"PIECE_BYTES = {piece_mib} * 2**20", source, flags=re.M)
    source = re.sub(r"^IN_FLIGHT = .*$", f"IN_FLIGHT = {in_flight}", source, flags=re.M)
    return re.sub(r"^GRAPHS = .*$", f"GRAPHS = {graphs}", source, flags=re.M)


def figures(verdict: Verdict) -> dict[str, dict[str, float]]:
    """Per timed size: NCCL's busbw, the file's, and their ratio."""
    out = {}
    for t in verdict.timings:
        out[t.name] = {
            "ms": t.ms,
            "nccl_ms": t.torch_ms or 0.0,
            "algbw": t.algbw_gbps or 0.0,
            "busbw": t.gbps,
            "nccl_busbw": t.ceiling_gbps or 0.0,
            "ratio": t.vs_torch or 0.0,
        }
    return out


def show(label: str, verdict: Verdict, seconds: float) -> None:
    state = {True: "correct", False: "WRONG", None: "not checked"}[verdict.correct]
    print(f"  {label}: {state} in {seconds:.1f} s ({len(verdict.cases)} cases)")
    for e in verdict.errors:
        print(f"    error: {e[:400]}")
    for name, f in figures(verdict).items():
        print(
            f"    {name:>8}: NCCL busbw {f['nccl_busbw']:7.1f} GB/s ({f['nccl_ms']:.3f} ms) · yours {f['busbw']:7.1f} GB/s"
            f" ({f['ms']:.3f} ms, algbw {f['algbw']:.1f}) · {f['ratio']:.2f}x NCCL"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each answer in a row (default 3)")
    parser.add_argument("--world", type=int, default=None, help="ranks (default: one per GPU)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--sweep", action="store_true", help="also judge the all-reduce answer with other constants")
    args = parser.parse_args(argv)
    cards = load_decks([paths.cards_dir() / "collective-kernels.yaml"]).cards
    gpus = gpu_count()
    world = args.world or (gpus if gpus >= 2 else None)
    timed = world is not None
    print(f"collective cards: {gpus} GPU(s) here; " + (f"{world} ranks over NCCL" if timed else "gloo on the CPU"))
    results: dict[str, Any] = {"gpus": gpus, "world": world, "runs": {}}
    verdicts: dict[str, list[Verdict]] = {}
    failed = []
    with JudgeClient(data_dir=Path(ROOT / ".bench-data")) as client:
        print(f"judge: {client.info().get('device')}")
        for card_id in CARDS:
            card = cards[card_id]
            files = kernel_files(card)
            print(f"\n{card_id}")
            verdict, seconds = judge(client, card, files.starter.read_text(), world, "all" if timed else "none")
            show("starter", verdict, seconds)
            results["runs"][f"{card_id}:starter"] = {"correct": verdict.correct, "figures": figures(verdict)}
            if verdict.correct is not True:
                failed.append(f"{card_id} starter correct")
            for run in range(args.runs):
                verdict, seconds = judge(client, card, files.solution.read_text(), world, "all" if timed else "none")
                show(f"answer, run {run + 1}", verdict, seconds)
                results["runs"][f"{card_id}:answer:{run + 1}"] = {
                    "correct": verdict.correct,
                    "figures": figures(verdict),
                }
                verdicts.setdefault(card_id, []).append(verdict)
                if verdict.correct is not True:
                    failed.append(f"{card_id} answer correct (run {run + 1})")
        if args.sweep and timed:
            print("\nsweep: ring-allreduce answer with PIECE_BYTES (MiB), IN_FLIGHT, GRAPHS")
            answer = kernel_files(cards["ring-allreduce"]).solution.read_text()
            for piece, flight, graphs in SWEEP:
                for run in range(args.runs):
                    variant = with_constants(answer, piece, flight, graphs)
                    verdict, seconds = judge(client, cards["ring-allreduce"], variant, world, "all")
                    show(f"piece {piece} MiB, {flight} in flight, graphs {graphs}, run {run + 1}", verdict, seconds)
                    key = f"sweep:{piece}:{flight}:{graphs}:{run + 1}"
                    results["runs"][key] = {"correct": verdict.correct, "figures": figures(verdict)}
    print("\ntargets")
    if not timed:
        print("  SKIP  timing targets: they need two GPUs or more")
    for card_id, need_world, size, least in TARGETS:
        if world != need_world:
            continue
        ratios = [figures(v).get(size, {}).get("ratio", 0.0) for v in verdicts.get(card_id, [])]
        ok = bool(ratios) and all(r >= least for r in ratios)
        shown = ", ".join(f"{r:.2f}x" for r in ratios)
        print(
            f"  {'PASS' if ok else 'FAIL'}  {card_id} answer >= {least}x NCCL busbw at {size} on {need_world} GPUs: {shown}"
        )
        if not ok:
            failed.append(f"{card_id} {size} on {need_world} GPUs")
    for card_id in CARDS:
        print(f"  {'FAIL' if f'{card_id} starter correct' in failed else 'PASS'}  {card_id} starter correct")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print("\nFAILED: " + "; ".join(failed) if failed else "\nall targets PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
