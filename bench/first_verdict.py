"""The first-ever verdict: `drill kernel run reduce` on a GPU drill has never seen, from a new process.

    python bench/first_verdict.py [--runs N] [--goal SECONDS] [--root TREE ...] [--drop-caches] [--json FILE]

Each run starts from nothing kept: a new data folder (no figures for this GPU, no time of torch's own way),
a new bytecode cache (DRILL_PYCACHE, and no `__pycache__` folders in drill's own tree) and a new CuPy kernel
cache. It prints the seconds from the command's start until it has printed the verdict, against the goal
(3 s on an H200), PASS or FAIL, and when it exited: on a GPU new to drill, PyTorch's own time for the card is
taken after the verdict is printed (importing torch takes seconds), and printed when it is in. Then, for orientation: where a new judge spends that time
(its start, each case, the calibration, the timing; from events as they arrive), the same command again on
the figures the first run kept, and how long a new Python takes to import torch and open the GPU.

`--root` runs the drill of another tree (a checkout of another commit, say); given twice or more, the trees
take turns, run by run. `--drop-caches` empties the page cache before each run where the system lets it
(root on Linux): files come from disk, as on a new host.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TORCH_UP = (
    "import time; t0 = time.perf_counter(); import torch; imported = time.perf_counter() - t0; "
    "torch.zeros(1, device='cuda').add_(1); torch.cuda.synchronize(); "
    "print(round(imported, 3), round(time.perf_counter() - t0, 3))"
)
# run in a new Python with a tree's drill first on the path: a judge's events as they arrive, in seconds
BREAKDOWN = """
import json, sys, time
from pathlib import Path
from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job
t0 = time.perf_counter()
card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards["reduce"]
source = (paths.answers_dir() / "reduce.cu").read_text()
events = []
def seen(e):
    events.append([round(time.perf_counter() - t0, 3), e.get("event"), e.get("name") or e.get("text", "")[:60]])
with JudgeClient(data_dir=Path(sys.argv[1])) as client:
    client.start()
    verdict = client.run(kernel_job(card, sys.argv[1]), source, on_event=seen, timeout=120)
    startup = client.info().get("startup", {})
print(json.dumps({"events": events, "startup": startup, "correct": verdict.correct, "errors": verdict.errors}))
"""


def fresh(root: Path) -> tuple[Path, dict[str, str]]:
    """A new data folder and an environment with nothing kept; drill's own bytecode removed from `root`."""
    for cache in (root / "drill").rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix="drill-first-"))
    env = dict(os.environ)
    env["DRILL_PYCACHE"] = str(tmp / "pycache")
    env["CUPY_CACHE_DIR"] = str(tmp / "cupy-kernels")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return tmp / "data", env


def drop_caches() -> bool:
    """Empty the page cache (root on Linux); whether that was allowed."""
    try:
        subprocess.run(["sync"], check=False, timeout=60)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def cli_run(root: Path, data: Path, env: dict[str, str], file: Path | None = None) -> dict[str, Any]:
    """`drill kernel run reduce` (on `file`, else the learner's draft or the starter) from a new process, in
    `root`: seconds until the verdict was printed (its last line, the target's), seconds until the command
    exited (after PyTorch's own time, on a GPU new to drill), and what the verdict said."""
    cmd = [sys.executable, "-m", "drill", "--data-dir", str(data), "kernel", "run", "reduce"]
    cmd += ["--file", str(file)] if file else []
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    lines: list[str] = []
    verdict_s = None
    for line in proc.stdout:
        lines.append(line.rstrip())
        if verdict_s is None and line.startswith("target:"):
            verdict_s = time.perf_counter() - t0
    _, err = proc.communicate(timeout=300)
    exit_s = time.perf_counter() - t0
    timed = [line for line in lines if line.startswith("time ")]
    return {
        "verdict_s": round(verdict_s, 3) if verdict_s is not None else None,
        "exit_s": round(exit_s, 3),
        "correct": "correctness: correct" in lines,
        "timing": timed,
        "error": "" if verdict_s is not None else (err or "\n".join(lines))[-1500:],
    }


def breakdown(root: Path) -> dict[str, Any]:
    """A new judge's events on a new data folder, timed from the client's start (in a new Python)."""
    data, env = fresh(root)
    proc = subprocess.run(
        [sys.executable, "-c", BREAKDOWN, str(data)],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": (proc.stderr or proc.stdout)[-1500:]}


def torch_up() -> list[float]:
    """[import torch, import + the GPU opened] in seconds, in a new Python."""
    proc = subprocess.run(
        [sys.executable, "-P", "-c", TORCH_UP], capture_output=True, text=True, timeout=300, check=False
    )
    try:
        return [float(x) for x in proc.stdout.split()]
    except ValueError:
        return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="first-ever runs per tree (default 3)")
    parser.add_argument("--goal", type=float, default=3.0, help="seconds the first-ever verdict may take")
    parser.add_argument("--root", type=Path, action="append", help="a tree whose drill runs (default: this one)")
    parser.add_argument("--drop-caches", action="store_true", help="empty the page cache before each run")
    parser.add_argument("--no-floor", action="store_true", help="skip timing torch's import in a new Python")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    roots = [r.resolve() for r in (args.root or [ROOT])]
    report: dict[str, Any] = {"torch_up_first": [] if args.no_floor else torch_up(), "trees": {}}
    print(f"a new Python: import torch, then the GPU opened: {report['torch_up_first']} s (the first, cold)")
    for round_no in range(args.runs):
        for root in roots:
            data, env = fresh(root)
            dropped = drop_caches() if args.drop_caches else False
            first = cli_run(root, data, env)
            first["caches_dropped"] = dropped
            tree = report["trees"].setdefault(str(root), {"first": [], "kept": []})
            tree["first"].append(first)
            if round_no == 0:
                tree["kept"].append(cli_run(root, data, env))  # the same command on what the first run kept
            print(f"[{root.name}] first-ever run {round_no + 1}: {json.dumps(first)}", flush=True)
    for root in roots:
        tree = report["trees"][str(root)]
        tree["breakdown"] = breakdown(root)
        print(f"[{root.name}] a new judge's events (s since the client started): {json.dumps(tree['breakdown'])}")
        print(f"[{root.name}] again on the kept figures: {json.dumps(tree['kept'])}")
    report["torch_up_warm"] = [] if args.no_floor else torch_up()
    print(f"a new Python: import torch, then the GPU opened: {report['torch_up_warm']} s (again, warm)")
    failed = False
    for root in roots:
        runs = report["trees"][str(root)]["first"]
        walls = [r["verdict_s"] if r["verdict_s"] is not None else float("inf") for r in runs]
        right = all(r.get("correct") is True for r in runs)
        worst = max(walls)
        ok = right and worst <= args.goal
        failed = failed or not ok
        print(
            f"[{root.name}] first-ever `drill kernel run reduce`, verdict printed: median"
            f" {statistics.median(walls):.2f} s, worst {worst:.2f} s of {walls} (goal {args.goal:g} s; exited after"
            f" {[r['exit_s'] for r in runs]} s; verdicts correct: {right}) {'PASS' if ok else 'FAIL'}"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
