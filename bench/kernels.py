"""Kernel-card benchmark on a GPU: every figure the kernel cards promise, each target PASS or FAIL.

    python bench/kernels.py [--json FILE] [--no-ncu] [--no-cold] [--only CARD,...]

Prints the copy and read ceilings; each starter and answer as the judge
reports it (time, GB/s, % of the copy ceiling, x PyTorch, host launch
overhead); the judge's kernel time against Nsight Compute's
gpu__time_duration.sum at every timed shape, as read and less ncu's own fixed
part of a launch (its figure for an empty kernel less that kernel's record;
the target process flushes L2 before each launch as the judge does, and ncu
leaves the caches alone: --ncu-cache all for ncu's own flush of every cache);
NVRTC compile + first launch;
edit -> verdict with a warm judge; `drill kernel run reduce` from a new
process. Exits 1 when any target is missed. Needs torch and triton.

--only judges the cards named and checks their targets alone (no Nsight
Compute, no start-up figures).
"""

from __future__ import annotations

import argparse
import csv
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
sys.path.insert(0, str(ROOT))

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job

CARDS = (
    "reduce", "transpose", "softmax", "rmsnorm", "matmul", "attention", "layernorm-backward", "paged-decode-attention",
    "fused-cross-entropy", "scan", "fp8-block-gemm", "moe-grouped-gemm-kernel",
)  # fmt: skip
# answers that launch one kernel a call, so ncu's figure for a launch is the judge's for the call
NCU_CARDS = ("reduce", "transpose", "softmax", "rmsnorm", "matmul", "attention")
SOFTMAX_RUNS = 3
NCU_LAUNCHES = 5  # profiled launches per shape
NCU_KERNELS = r"regex:^(empty_kernel|reduce_sum|transpose|softmax_|rmsnorm_|matmul_kernel|attention_fwd)"
EMPTY = ("empty", "kernel")  # an empty Triton kernel, profiled first: ncu's own fixed part of a launch
NCU_TOLERANCE_PCT = 5.0
COLD_LIMIT_S = 3.0
WARM_SPIN_CYCLES = 5_000_000  # before each profiled launch, about 2.5 ms of one spinning thread


def load_cards() -> dict[str, Any]:
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


def source(cards: dict[str, Any], card_id: str, which: str) -> str:
    return getattr(kernel_files(cards[card_id]), which).read_text()


def judge(client: JudgeClient, cards: dict[str, Any], card_id: str, which: str, timing: str, fresh: bool = False):
    job = dict(kernel_job(cards[card_id]), fresh_baseline=fresh)
    return client.run(job, source(cards, card_id, which), timeout=300, timing=timing)


# -- Nsight Compute: the same kernels, timed by the profiler ---------------------------------------
def ncu_target(flush_l2: bool) -> None:
    """Launch every answer at every timing shape NCU_LAUNCHES times (the process ncu profiles).

    With `flush_l2` the target flushes L2 before each launch the way the judge
    does (ncu then runs with --cache-control none and leaves every cache alone).
    """
    import torch
    from probe_label import empty_kernel

    from drill.judge.judging import load_harness
    from drill.judge.programs import build_cuda, build_triton
    from drill.judge.torch_kit import Kit

    cards = load_cards()
    torch.zeros(1, device="cuda")  # the context, before any module is loaded
    kit = Kit(True)

    def profiled(prepare: Any, run: Any) -> None:
        run()  # compiles (and autotunes) a Triton kernel for this shape, before profiling starts
        torch.cuda.synchronize()
        torch.cuda.profiler.start()  # ncu runs with --profile-from-start off: only these launches count
        for _ in range(NCU_LAUNCHES):
            # the GPU kept busy for a few ms first (not profiled: the spin does not match the filter), so the
            # clocks are up when the kernel starts, as in the judge; a spin, not matmuls, which draw enough
            # power to pull the clocks down (ncu saw the 4096³ GEMM at 1.58 GHz after 20 of them)
            torch.cuda._sleep(WARM_SPIN_CYCLES)
            prepare()
            if flush_l2:
                kit.flush_l2()
            run()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()

    x = torch.empty(1, device="cuda")
    profiled(lambda: None, lambda: empty_kernel[(1,)](x))
    major, minor = torch.cuda.get_device_capability(0)
    work = Path(tempfile.mkdtemp())
    for card_id in NCU_CARDS:
        files = kernel_files(cards[card_id])
        harness = load_harness(str(files.harness))
        text = files.solution.read_text()
        if cards[card_id].fields["language"] == "cuda":
            program: Any = build_cuda(
                text, files.starter.name, entry=harness.ENTRY, launch_keys=harness.LAUNCH_KEYS,
                arch=f"sm_{major}{minor}", load=True, workdir=work,
            )  # fmt: skip
            program.stream = lambda: torch.cuda.current_stream().cuda_stream
        else:
            program = build_triton(text, files.starter.name, entry=harness.ENTRY, workdir=work)
        for case in harness.timing_cases(kit):
            kit.begin_case()
            inputs = harness.make_inputs(case, kit)
            launch = harness.launcher(program, inputs, kit)
            launch.prepare()
            profiled(launch.prepare, launch.run)
            del inputs, launch
            torch.cuda.empty_cache()


CLOCK_METRICS = ("sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second")


def ncu_run(
    shapes: list[tuple[str, str]], metrics: tuple[str, ...], log: list[str], cache: str = "l2"
) -> dict[str, list[tuple[str, float]]]:
    """Per metric, (unit, value) for every profiled launch in order; {} when ncu is missing or failed.

    cache "l2": ncu leaves the caches alone and the target flushes L2 before each launch, as the
    judge does; "all": ncu flushes all of the GPU's caches itself (its default).
    """
    ncu = shutil.which("ncu")
    if not ncu:
        log.append("ncu not found")
        return {}
    cmd = [
        ncu, "--clock-control", "none", "--cache-control", "all" if cache == "all" else "none",
        "--profile-from-start", "off", "--metrics", ",".join(metrics), "--csv",
        "-k", NCU_KERNELS, sys.executable, str(Path(__file__).resolve()), "--ncu-target",
    ] + (["--ncu-flush-l2"] if cache == "l2" else [])  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
    log.append(proc.stdout[-6000:] + proc.stderr[-3000:])
    found: dict[str, list[tuple[str, float]]] = {m: [] for m in metrics}
    for cells in csv.reader(line for line in proc.stdout.splitlines() if any(m in line for m in metrics)):
        metric, unit, value = cells[-3], cells[-2], cells[-1].replace(",", "")
        try:
            found[metric].append((unit, float(value)))
        except (KeyError, ValueError):
            continue
    for metric, values in found.items():
        if len(values) != NCU_LAUNCHES * len(shapes):
            log.append(f"ncu gave {len(values)} readings of {metric}, expected {NCU_LAUNCHES * len(shapes)}")
            return {}
    return found


def per_shape(shapes: list[tuple[str, str]], values: list[float]) -> dict[tuple[str, str], float]:
    n = NCU_LAUNCHES
    return {shape: statistics.median(values[i * n : (i + 1) * n]) for i, shape in enumerate(shapes)}


def ncu_times(shapes: list[tuple[str, str]], log: list[str], cache: str = "l2") -> dict[tuple[str, str], float] | None:
    """Median gpu__time_duration.sum per (card, shape), in ms; None when ncu is missing or failed."""
    scale = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3}
    found = ncu_run(shapes, ("gpu__time_duration.sum",), log, cache)
    if not found:
        return None
    try:
        return per_shape(shapes, [v * scale[u] for u, v in found["gpu__time_duration.sum"]])
    except KeyError as exc:
        log.append(f"ncu time in an unknown unit: {exc}")
        return None


def vs_ncu(judged_ms: float, ncu_ms: float, fixed_ms: float) -> tuple[float, float]:
    """The judge against ncu in per cent: as read, and against ncu less its fixed part of a launch."""
    net = ncu_ms - fixed_ms
    return 100 * (judged_ms - ncu_ms) / ncu_ms, 100 * (judged_ms - net) / net


def ncu_clocks(shapes: list[tuple[str, str]], log: list[str], cache: str) -> dict[tuple[str, str], str]:
    """The SM and memory clocks ncu saw during each shape's launches (median), in words."""
    found = ncu_run(shapes, CLOCK_METRICS, log, cache)
    if not found:
        return {}
    words: dict[tuple[str, str], str] = {}
    for metric, short in zip(CLOCK_METRICS, ("SM", "memory")):
        unit = found[metric][0][0]
        for shape, value in per_shape(shapes, [v for _, v in found[metric]]).items():
            words[shape] = (words.get(shape, "") + f" {short} {value:,.3g} {unit}").strip()
    return words


# -- memory: the fused cross-entropy against F.cross_entropy ----------------------------------------
def cross_entropy_extra_peak(cards: dict[str, Any], rows: int = 8192, vocab: int = 128256) -> dict[str, float]:
    """Bytes of peak memory above what was allocated before the call (the logits, targets, loss): the answer's
    `cross_entropy` and F.cross_entropy forward + backward, on the same bf16 logits, each after one untimed call."""
    import torch

    from drill.judge.judging import load_harness
    from drill.judge.programs import build_triton

    files = kernel_files(cards["fused-cross-entropy"])
    harness = load_harness(str(files.harness))
    program = build_triton(
        files.solution.read_text(), files.starter.name, entry=harness.ENTRY, workdir=Path(tempfile.mkdtemp())
    )
    logits = torch.randn(rows, vocab, device="cuda", dtype=torch.bfloat16)
    targets = torch.randint(0, vocab, (rows,), device="cuda")
    loss = torch.empty(rows, device="cuda")
    leaf = logits.detach().clone().requires_grad_()

    def peak(step: Any) -> float:
        step()  # compiles the Triton kernel; autograd's first backward
        leaf.grad = None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        step()
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - before
        leaf.grad = None
        return float(extra)

    answer = peak(lambda: program.module.cross_entropy(logits, targets, loss))
    baseline = peak(lambda: torch.nn.functional.cross_entropy(leaf, targets).backward())
    return {"answer": answer, "F.cross_entropy": baseline}


# -- the grouped GEMM against a loop of torch.matmul; TFLOPS of the FP8 card ---------------------------------------
def moe_loop_ms(cards: dict[str, Any]) -> dict[str, float]:
    """Per timing shape of the grouped-GEMM card, the GPU time of a loop of torch.matmul over the experts (the
    harness's `loop_baseline`), timed as the judge times a baseline: L2 flushed, median of many launches."""
    import torch

    from drill.judge.judging import load_harness
    from drill.judge.torch_kit import Kit

    harness = load_harness(str(kernel_files(cards["moe-grouped-gemm-kernel"]).harness))
    kit = Kit(True)
    found = {}
    for case in harness.timing_cases(kit):
        kit.begin_case()
        inputs = harness.make_inputs(case, kit)
        found[case["name"]] = float(kit.measure(harness.loop_baseline(inputs, kit), poison=False).ms)
        del inputs
        torch.cuda.empty_cache()
    return found


def tensor_tflops(cards: dict[str, Any], card_id: str, shape: str, ms: float) -> float | None:
    """TFLOPS of a launch of `ms` at a timing shape, from the harness's FLOP count (`flops`); None for a card that
    counts no FLOPs (LayerNorm backward)."""
    from drill.judge.judging import load_harness

    harness = load_harness(str(kernel_files(cards[card_id]).harness))
    count = getattr(harness, "flops", None)
    if count is None:
        return None
    [case] = [c for c in harness.timing_cases(None) if c["name"] == shape]
    return count(case) / (ms * 1e-3) / 1e12


# -- start-up figures -----------------------------------------------------------------------------
def compile_and_first_launch(cards: dict[str, Any], n: int = 5) -> tuple[float, float]:
    """NVRTC compile + module load + first launch + synchronise, each time a new source."""
    import numpy as np
    import torch

    from drill.judge import cudadrv
    from drill.kernel_shared import nvrtc

    torch.zeros(1, device="cuda")
    major, minor = torch.cuda.get_device_capability(0)
    text = source(cards, "reduce", "solution")
    x = torch.randn(1 << 20, device="cuda")
    out = torch.zeros(1, device="cuda")
    times, compile_only = [], []
    for i in range(n):
        t0 = time.perf_counter()
        result = nvrtc.compile_cuda(text + f"\n// {i}\n", "reduce.cu", arch=f"sm_{major}{minor}")
        t1 = time.perf_counter()
        fn = cudadrv.Module(result.cubin).get_function("reduce_sum")
        fn.launch((528,), (512,), (np.uint64(x.data_ptr()), np.uint64(out.data_ptr()), np.int32(x.numel())))
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        compile_only.append(t1 - t0)
    return statistics.median(times), statistics.median(compile_only)


def edit_to_verdict(client: JudgeClient, cards: dict[str, Any], n: int = 5) -> list[float]:
    """Wall time of client.run for the reduce answer with a warm judge, a fresh edit each time."""
    text = source(cards, "reduce", "solution")
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        v = client.run(kernel_job(cards["reduce"]), text + f"\n// edit {i} {time.time()}\n", timeout=120)
        times.append(time.perf_counter() - t0)
        assert v.correct is True, v.errors
    return times


def cold_cli(data_dir: Path, file: Path | None = None) -> dict[str, Any]:
    """`drill kernel run reduce` from a new process, timed as bench/first_verdict.py times it: seconds until the
    verdict was printed (PyTorch's own time, on a GPU new to drill, follows it), and until it exited. The first
    run on a `data_dir` finds nothing kept: no figures for this GPU, and no CuPy kernels compiled."""
    from first_verdict import cli_run

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    # CuPy's compiled kernels kept beside the data: the first run finds none, as on a new machine
    env["CUPY_CACHE_DIR"] = str(data_dir / "cupy-kernels")
    run = cli_run(ROOT, data_dir, env, file)
    if run["verdict_s"] is None:
        return {"wall_s": run["exit_s"], "error": run["error"]}
    return {"wall_s": run["verdict_s"], "exit_s": run["exit_s"], "correct": run["correct"], "timing": run["timing"]}


def empty_record_ms() -> float:
    """The judge's figure for an empty Triton kernel (its own record; one launch alone after an L2 flush)."""
    import torch
    from probe_label import empty_kernel

    from drill.judge.torch_kit import Kit

    x = torch.empty(1, device="cuda")
    return float(Kit(True).measure(lambda: empty_kernel[(1,)](x), poison=False).ms)


def torch_floor() -> float:
    """Seconds until a new Python has imported torch and opened the GPU (its exit not counted): what no judge avoids."""
    from drill.kernel.bytecode import python_env

    code = "import torch; torch.zeros(1, device='cuda').add_(1); torch.cuda.synchronize(); print('up', flush=True)"
    env = python_env()  # torch's bytecode where the judge keeps it
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    up = time.perf_counter() - t0
    proc.kill()
    proc.wait()
    return up


# -- the report -----------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--no-ncu", action="store_true", help="skip the Nsight Compute comparison")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold `drill kernel run` timing")
    parser.add_argument("--ncu-clocks", action="store_true", help="also print the clocks ncu saw at each shape")
    parser.add_argument(
        "--ncu-cache", choices=("l2", "all"), default="l2",
        help="before each profiled launch the target flushes L2 as the judge does (l2), or ncu flushes every cache (all)",
    )  # fmt: skip
    parser.add_argument("--only", help="judge only these cards (comma-separated ids) and check only their targets")
    parser.add_argument("--ncu-target", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ncu-flush-l2", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ncu_target:
        ncu_target(args.ncu_flush_l2)
        return 0

    cards = load_cards()
    chosen = tuple(args.only.split(",")) if args.only else CARDS
    unknown = [c for c in chosen if c not in CARDS]
    if unknown:
        parser.error(f"--only: not a card of this benchmark: {', '.join(unknown)} (cards: {', '.join(CARDS)})")
    if args.only:  # the named cards' figures alone
        args.no_ncu = True
        args.no_cold = True
    report: dict[str, Any] = {"verdicts": {}}
    targets: list[tuple[str, bool, str]] = []  # (target, met, evidence)
    cold: dict[str, Any] = {}
    if not args.no_cold:  # first, while nothing of the judge is warm in this machine's caches but the files
        tmp = Path(tempfile.mkdtemp(prefix="drill-cold-"))
        cold = {"first, the starter (measures the GPU; no CuPy kernels kept)": cold_cli(tmp)}
        # later starts vary by a few tenths of a second (torch's import above all): the median of three
        for label, file in (("the starter", None), ("the reference answer", ROOT / "answers" / "reduce.cu")):
            runs = sorted((cold_cli(tmp, file) for _ in range(3)), key=lambda c: c["wall_s"])
            cold[f"again, {label} (median of 3)"] = dict(runs[1], all_wall_s=[round(c["wall_s"], 2) for c in runs])
        report["cold_cli"] = cold
        report["torch_floor_s"] = statistics.median(torch_floor() for _ in range(3))

    with JudgeClient(data_dir=Path(tempfile.mkdtemp(prefix="drill-bench-"))) as client:
        info = client.info()
        report["judge"] = info
        if not info.get("gpu"):
            print("no GPU: nothing to benchmark", file=sys.stderr)
            return 1
        cal = client.calibrate()
        report["calibration"] = cal
        answers: dict[str, list[Any]] = {}
        starters: dict[str, Any] = {}
        for card_id in chosen:
            starters[card_id] = judge(client, cards, card_id, "starter", "first")
            runs = SOFTMAX_RUNS if card_id == "softmax" else 1
            answers[card_id] = [judge(client, cards, card_id, "solution", "all", fresh=True) for _ in range(runs)]
            report["verdicts"][f"{card_id}:starter"] = starters[card_id].to_json()
            report["verdicts"][f"{card_id}:solution"] = [v.to_json() for v in answers[card_id]]
        edits = [] if args.only else edit_to_verdict(client, cards)
        report["edit_to_verdict_s"] = edits
    ce_memory = cross_entropy_extra_peak(cards) if "fused-cross-entropy" in chosen else {}
    report["cross_entropy_extra_peak_bytes"] = ce_memory
    loop_ms = moe_loop_ms(cards) if "moe-grouped-gemm-kernel" in chosen else {}
    report["moe_loop_ms"] = loop_ms
    first_launch, compile_s = (float("nan"), float("nan")) if args.only else compile_and_first_launch(cards)
    report["compile_first_launch_s"] = first_launch

    shapes = [EMPTY] + [(c, t.name) for c in NCU_CARDS if c in answers for t in answers[c][0].timings]
    ncu_log: list[str] = []
    profiled = None if args.no_ncu else ncu_times(shapes, ncu_log, args.ncu_cache)
    report["ncu"] = {f"{c} {s}": ms for (c, s), ms in (profiled or {}).items()}
    report["ncu_log"] = ncu_log
    clocks = ncu_clocks(shapes, ncu_log, args.ncu_cache) if args.ncu_clocks else {}
    # ncu's figure spans from a timestamp written before the launch to one after the grid (NVIDIA's forum: the two
    # tools' stamps differ by 0.5-2 µs); the judge reads the kernel's own record. The empty kernel's two figures
    # give that fixed part on this GPU, in this run.
    empty_ms = empty_record_ms()
    fixed_ms = (profiled or {}).get(EMPTY, empty_ms) - empty_ms
    report["ncu_fixed_ms"] = {"ncu empty kernel": (profiled or {}).get(EMPTY), "record": empty_ms, "fixed": fixed_ms}

    # -- the table
    print(f"\ndevice: {info.get('device')}   versions: {info.get('versions')}")
    print(f"judge start-up (s): {json.dumps({k: round(v, 3) for k, v in (info.get('startup') or {}).items()})}")
    print(
        f"ceilings: copy {cal.get('gbps', float('nan')):,.0f} GB/s (read + write), "
        f"read {cal.get('read_gbps', float('nan')):,.0f} GB/s ({cal.get('read_by')}); 1 GiB, L2 flushed"
    )
    print(
        f"event pair's own cost: {cal.get('event_us', float('nan')):.2f} µs (an empty kernel: pair"
        f" {cal.get('event_pair_us', float('nan')):.2f} µs, own record {cal.get('event_record_us', float('nan')):.2f} µs),"
        " taken off every event-timed figure"
    )
    if profiled and EMPTY in profiled:
        print(
            f"ncu ({args.ncu_cache}): empty kernel {profiled[EMPTY] * 1e3:.2f} µs, its own record {empty_ms * 1e3:.2f} µs:"
            f" ncu's fixed part {fixed_ms * 1e3:.2f} µs ('net' below: the judge against ncu less that part)"
        )
    print(f"matmul ceiling: {cal.get('tflops', float('nan')):,.0f} TFLOPS ({cal.get('tflops_by')}), L2 flushed")
    print(f"NVRTC compile + module load + first launch: {first_launch * 1e3:.0f} ms (compile {compile_s * 1e3:.0f} ms)")
    if edits:
        print(
            f"edit -> verdict, warm judge, reduce answer: median {statistics.median(edits):.2f} s, worst {max(edits):.2f} s"
        )
    header = f"{'kernel':<10} {'file':<8} {'shape':<20} {'ms':>9} {'TFLOPS':>7} {'GB/s':>7} {'% ceil':>7} {'x torch':>8} {'host us':>8} {'ncu ms':>8} {'vs ncu':>8} {'net':>8}  verdict"
    print("\n" + header)
    for card_id in chosen:
        for which, verdicts in (("starter", [starters[card_id]]), ("answer", answers[card_id])):
            for run, v in enumerate(verdicts, 1):
                label = which if len(verdicts) == 1 else f"{which}{run}"
                if v.correct is not True or v.errors:
                    problems = "; ".join(v.errors) or "; ".join(c.message for c in v.cases if not c.ok)
                    print(f"{card_id:<10} {label:<8} {'-':<20} NOT CORRECT: {problems[:200]}")
                    continue
                for t in v.timings:
                    ncu_ms = (profiled or {}).get((card_id, t.name)) if which == "answer" and run == 1 else None
                    compared = f"{'-':>8} {'-':>8} {'-':>8}"
                    if ncu_ms:
                        raw, net = vs_ncu(t.ms, ncu_ms, fixed_ms)
                        compared = f"{ncu_ms:8.4f} {raw:+7.1f}% {net:+7.1f}%"
                    tflops = t.tflops or (
                        tensor_tflops(cards, card_id, t.name, t.ms) if card_id == "fp8-block-gemm" else 0
                    )
                    print(
                        f"{card_id:<10} {label:<8} {t.name:<20} {t.ms:9.4f} {tflops:7,.0f} {t.gbps:7,.0f}"
                        f" {t.pct_of_ceiling or 0:6.1f}%"
                        f" {t.vs_torch or 0:7.2f}x {t.host_us or 0:8.1f} {compared}  {'ok' if not t.impossible else 'IMPOSSIBLE'} {t.method}"
                        + (
                            f"  ncu clocks: {clocks[(card_id, t.name)]}"
                            if (card_id, t.name) in clocks and ncu_ms
                            else ""
                        )
                    )

    for card_id in chosen:
        for run, v in enumerate(answers[card_id], 1):
            for t in v.timings:
                if t.method_note:
                    print(f"  {card_id} answer{run} {t.name}: timed with events: {t.method_note}")

    # -- the targets
    def pct(card_id: str) -> list[tuple[str, float]]:
        return [(t.name, t.pct_of_ceiling or 0.0) for v in answers[card_id] for t in v.timings]

    for card_id, floor in (("reduce", 95.0), ("transpose", 90.0), ("rmsnorm", 95.0), ("scan", 80.0)):
        if card_id not in chosen:
            continue
        figures = pct(card_id)
        ok = bool(figures) and all(v.correct is True and not v.errors for v in answers[card_id])
        ok = ok and all(p >= floor for _, p in figures)
        targets.append(
            (
                f"{card_id} answer >= {floor:g} % of the copy ceiling",
                ok,
                ", ".join(f"{n} {p:.1f} %" for n, p in figures),
            )
        )
    if "softmax" in chosen:
        ratios = [(t.name, t.vs_torch or 0.0) for v in answers["softmax"] for t in v.timings]
        ok = len(ratios) == 4 * SOFTMAX_RUNS and all(r >= 1.0 for _, r in ratios)
        ok = ok and all(v.correct is True and not v.errors for v in answers["softmax"])
        targets.append(
            (
                f"softmax answer >= 1.0x torch at all four shapes, {SOFTMAX_RUNS} runs",
                ok,
                ", ".join(f"{n} {r:.2f}x" for n, r in ratios),
            )
        )
    # FP8: torch._scaled_mm with row-wise scales is the baseline. 0.7x was the aim; the answer, plain Triton with a
    # scale per 128-wide K step, reaches 0.55-0.56x on an H200, and the target is 0.45x (answers/fp8_block_gemm.md)
    for card_id, shape, floor, what in (
        ("matmul", "4096x4096x4096 bf16", 0.85, "torch.matmul"),
        ("attention", "b2 h16 s4096 d128", 0.7, "SDPA"),
        ("attention", "b2 h32 s4096 d64", 0.7, "SDPA"),
        ("layernorm-backward", "16384x4096", 1.2, "torch's LayerNorm backward (aten.native_layer_norm_backward)"),
        ("fp8-block-gemm", "4096x4096x4096", 0.45, "torch._scaled_mm with row-wise scales"),
        ("moe-grouped-gemm-kernel", "E64 T24576 2048->1408", 0.7, "torch._grouped_mm"),
    ):
        if card_id not in chosen:
            continue
        v = answers[card_id][0]
        hit = [t for t in v.timings if t.name == shape]
        ratio = hit[0].vs_torch if hit else None
        ok = v.correct is True and not v.errors and ratio is not None and ratio >= floor
        evidence = "no figure"
        if hit and ratio:
            mine = hit[0].tflops or tensor_tflops(cards, card_id, shape, hit[0].ms)
            theirs = tensor_tflops(cards, card_id, shape, hit[0].torch_ms) if hit[0].torch_ms else None
            if mine is not None and theirs is not None:
                evidence = f"{ratio:.2f}x ({mine:,.0f} TFLOPS against {theirs:,.0f})"
            else:  # a card scored in bytes alone
                evidence = f"{ratio:.2f}x ({hit[0].gbps:,.0f} GB/s, {hit[0].ms:.3f} ms against {hit[0].torch_ms:.3f})"
        targets.append((f"{card_id} answer >= {floor:g}x {what} at {shape}", ok, evidence))
    if "moe-grouped-gemm-kernel" in chosen:
        # grouping pays with many small groups: >= 3x a loop of torch.matmul at 64 experts; at 8 large experts the
        # loop is already at cuBLAS speed (shown, not a target)
        v = answers["moe-grouped-gemm-kernel"][0]
        by_shape = {t.name: t for t in v.timings}
        fine = "E64 T24576 2048->1408"
        ratio = loop_ms[fine] / by_shape[fine].ms if fine in by_shape and fine in loop_ms else None
        ok = v.correct is True and not v.errors and ratio is not None and ratio >= 3.0
        figures = [
            f"{name}: answer {tensor_tflops(cards, 'moe-grouped-gemm-kernel', name, by_shape[name].ms):,.0f} TFLOPS,"
            f" loop {tensor_tflops(cards, 'moe-grouped-gemm-kernel', name, ms):,.0f}"
            f" ({ms / by_shape[name].ms:.2f}x)"
            for name, ms in loop_ms.items()
            if name in by_shape
        ]
        targets.append(
            ("moe-grouped-gemm-kernel answer >= 3x a loop of torch.matmul at 64 experts", ok, "; ".join(figures))
        )
    # a decode step is a read of the KV cache: its figure against the read ceiling, not the copy ceiling
    if "paged-decode-attention" in chosen:
        v = answers["paged-decode-attention"][0]
        read_gbps = cal.get("read_gbps") or 0.0
        first = v.timings[0] if v.timings else None
        share = first.gbps / read_gbps if first and read_gbps else None
        ok = v.correct is True and not v.errors and share is not None and share >= 0.8
        evidence = (
            f"{first.name}: {first.gbps:,.0f} GB/s, {100 * share:.1f} % of {read_gbps:,.0f}"
            if first and share
            else "no figure"
        )
        evidence += "; ".join([""] + [f"{t.name}: {t.vs_torch or 0:.2f}x gather + SDPA" for t in v.timings])
        targets.append(
            ("paged-decode-attention answer reads K and V at >= 80 % of the read ceiling (64 sequences)", ok, evidence)
        )
    if "fused-cross-entropy" in chosen:
        v = answers["fused-cross-entropy"][0]
        hit = [t for t in v.timings if t.name == "8192x128256"]
        ratio = hit[0].vs_torch if hit else None
        ok = v.correct is True and not v.errors and ratio is not None and ratio >= 1.0
        evidence = f"{ratio:.2f}x ({hit[0].ms:.2f} ms)" if hit and ratio else "no figure"
        targets.append(
            ("fused-cross-entropy answer >= 1.0x F.cross_entropy forward + backward at 8192x128256 bf16", ok, evidence)
        )
        gib = 2**30
        ok = ce_memory["answer"] <= ce_memory["F.cross_entropy"] / 4
        evidence = (
            f"answer {ce_memory['answer'] / gib:.3f} GiB, F.cross_entropy {ce_memory['F.cross_entropy'] / gib:.2f} GiB"
        )
        targets.append(
            ("fused-cross-entropy answer's extra peak memory <= 1/4 of F.cross_entropy's (8192x128256)", ok, evidence)
        )
    if not args.no_ncu:
        diffs = []  # (shape, judge vs ncu %, judge vs ncu less its fixed part %)
        for card_id, name in shapes[1:]:
            judged = next(t.ms for t in answers[card_id][0].timings if t.name == name)
            ncu_ms = (profiled or {}).get((card_id, name))
            if not ncu_ms or EMPTY not in (profiled or {}):
                diffs.append((f"{card_id} {name}", None, None))
                continue
            diffs.append((f"{card_id} {name}", *vs_ncu(judged, ncu_ms, fixed_ms)))
        ok = bool(profiled) and all(d is not None and abs(d) <= NCU_TOLERANCE_PCT for _, _, d in diffs)
        evidence = ", ".join(
            f"{n} {d:+.1f} % (as read {raw:+.1f} %)" if d is not None and raw is not None else f"{n} no reading"
            for n, raw, d in diffs
        )
        targets.append(
            (
                f"judge time within {NCU_TOLERANCE_PCT:g} % of ncu at every shape, ncu's fixed part"
                f" ({fixed_ms * 1e3:.2f} µs, from an empty kernel) taken off",
                ok,
                evidence,
            )
        )
    for label, c in cold.items():
        ok = "error" not in c and c["wall_s"] <= COLD_LIMIT_S and c.get("correct") is not False
        evidence = (
            f"verdict printed after {c['wall_s']:.2f} s"
            + (f" (runs {c['all_wall_s']})" if "all_wall_s" in c else "")
            + (f", exited after {c['exit_s']:.2f} s" if "exit_s" in c else "")
            + (f", {c['timing'][0]}" if c.get("timing") else "")
        )
        evidence += f"; python -c 'import torch' + a CUDA context alone: {report['torch_floor_s']:.2f} s (median of 3)"
        targets.append((f"`drill kernel run reduce`, new process, {label}: <= {COLD_LIMIT_S:g} s", ok, evidence))
    report["targets"] = [{"target": t, "pass": ok, "evidence": e} for t, ok, e in targets]
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    print("\ntargets:")
    for words, ok, evidence in targets:
        print(f"  {'PASS' if ok else 'FAIL'}  {words}: {evidence}")
    return 0 if all(ok for _, ok, _ in targets) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    # the judge's autotuning results on disk, so that the process ncu profiles times the same tiles
    os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")
    raise SystemExit(main())
