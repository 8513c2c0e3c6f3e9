"""Where a cold verdict's time goes inside the judge: `drill kernel run reduce`'s judging, profiled.

    python bench/probe_cold.py [--calibration FILE]

Times the judge's start (import torch, the CUDA context) and then judges the
reduce answer once under cProfile, as a new judge process would, and prints
the 30 calls with the most cumulative time. Needs a GPU.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibration", type=Path, help="a saved calibration (else the copy ceiling is measured)")
    args = parser.parse_args()
    from drill.kernel.bytecode import pycache_dir

    sys.pycache_prefix = str(pycache_dir())  # torch's bytecode from where the judge keeps it, as a judge would
    sys.dont_write_bytecode = False
    t0 = time.perf_counter()
    from drill import paths
    from drill.cards.loader import load_decks
    from drill.judge.judging import Judge
    from drill.judge.runtime import Runtime
    from drill.kernel.job import kernel_job

    runtime = Runtime(args.calibration)
    print(f"runtime up in {time.perf_counter() - t0:.2f} s: {runtime.startup}")
    card = load_decks([paths.cards_dir()]).cards["reduce"]
    source = (ROOT / "answers" / "reduce.cu").read_text()
    events: list[dict[str, object]] = []
    profiler = cProfile.Profile()
    t1 = time.perf_counter()
    profiler.enable()
    Judge(runtime).run(kernel_job(card), source, "first", events.append)
    profiler.disable()
    print(f"judged in {time.perf_counter() - t1:.2f} s")
    for e in events:
        if e.get("event") in ("case", "timing", "finished"):
            print({k: v for k, v in e.items() if k in ("event", "name", "seconds", "ms", "ok", "phases")})
    stats = pstats.Stats(profiler).sort_stats("cumulative")
    stats.print_stats(25)
    stats.print_stats("drill", 25)
    runtime.remove_workdir()


if __name__ == "__main__":
    main()
