"""Two ways to time a short launch, side by side, to set beside Nsight Compute's figure.

    python bench/probe_timing.py

For an empty Triton kernel, the softmax answer at two shapes and the matmul
answer at 16 x 4096 x 4096 (a few skinny tiles, then the answer's own
choice): the median µs from the kernels' own records (CUPTI, the
judge's method for a launch under 0.1 ms) and from a CUDA event pair around
each launch, the launches queued behind a long spin so the GPU never waits for
Python (the span ncu's gpu__time_duration covers: from the launch command to
the grid's end). Says whether the spin outlasted the queueing. L2 is flushed
before every launch in both. Needs a GPU.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402
from probe_label import empty_kernel, load  # noqa: E402  (the same empty kernel and answer loader)

from drill.judge.torch_kit import Kit  # noqa: E402


def queued_events(kit: Kit, fn: Callable[[], object], reps: int = 100, hold_ms: float = 40.0) -> tuple[float, bool]:
    """Median µs of an event pair around each launch, all queued behind a spin; True if the spin outlasted them."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]  # type: ignore[no-untyped-call]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]  # type: ignore[no-untyped-call]
    held = torch.cuda.Event()  # type: ignore[no-untyped-call]
    torch.cuda.synchronize()
    torch.cuda._sleep(int(hold_ms * 1e-3 * 2.5e9))  # type: ignore[no-untyped-call]
    held.record()
    for s, e in zip(starts, ends):
        kit.flush_l2()
        s.record()
        fn()
        e.record()
    outlasted = not held.query()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)), outlasted


def row(kit: Kit, label: str, fn: Callable[[], object]) -> None:
    fn()
    torch.cuda.synchronize()
    cupti = kit.measure(fn, poison=False).ms * 1e3
    events, outlasted = queued_events(kit, fn)
    again, outlasted2 = queued_events(kit, fn)
    print(
        f"{label:<44} records {cupti:8.2f} µs   queued events {events:8.2f} / {again:8.2f} µs"
        f"   spin outlasted the queue: {outlasted and outlasted2}"
    )


def judge_path(kit: Kit, card_id: str) -> None:
    """The card's answer at its timing shapes, launched as the judge launches it: what the records show."""
    from torch.autograd import DeviceType  # type: ignore[attr-defined]
    from torch.profiler import ProfilerActivity, profile, record_function

    from drill import paths
    from drill.cards.loader import load_decks
    from drill.judge import measure as m
    from drill.judge import profiled
    from drill.judge.judging import load_harness
    from drill.judge.programs import build_triton
    from drill.kernel.cards import kernel_files

    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards[card_id]
    files = kernel_files(card)
    harness = load_harness(str(files.harness))
    import tempfile

    program = build_triton(
        files.solution.read_text(), files.starter.name, entry=harness.ENTRY, workdir=Path(tempfile.mkdtemp())
    )
    for case in harness.timing_cases(kit):
        kit.begin_case()
        inputs = harness.make_inputs(case, kit)
        launch = harness.launcher(program, inputs, kit)
        launch.prepare()
        launch.run()
        torch.cuda.synchronize()

        def setup() -> None:
            launch.prepare()
            kit.poison_outputs()
            kit.flush_l2()

        for attempt, reps in enumerate((100, 100, 30)):  # one session each, as the judge's first try
            times, whole, why = m._kernel_times(launch.run, setup, reps, tries=1)
            got = "none" if times is None else f"{len(times)} launches, median {statistics.median(times) * 1e3:.2f} µs"
            how = "the GPU ranges" if whole else f"the CPU side only ({why})"
            print(f"{card_id} {case['name']}: reps {reps} try {attempt + 1}: from {how}: {got}")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                setup()
                torch.cuda.synchronize()
                with record_function(profiled.LAUNCH_LABEL):
                    launch.run()
            torch.cuda.synchronize()
        gpu = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
        for e in gpu[:12]:
            print(
                f"   gpu record {e.name[:50]!r} start {e.time_range.start:.1f} dur {e.time_range.elapsed_us():.2f} µs"
            )
        print(f"{card_id} {case['name']}: kit.measure {kit.measure(launch.run, launch.prepare).ms * 1e3:.2f} µs")


def main() -> None:
    kit = Kit(True)
    if len(sys.argv) > 1:
        for card_id in sys.argv[1:]:
            judge_path(kit, card_id)
        return
    print(torch.cuda.get_device_name())
    x = torch.empty(1, device="cuda")
    row(kit, "empty Triton kernel", lambda: empty_kernel[(1,)](x))
    softmax = load("softmax")
    for rows, cols in ((4096, 1024), (4096, 4096)):
        a = torch.randn(rows, cols, device="cuda")
        out = torch.empty_like(a)
        row(kit, f"softmax answer {rows}x{cols}", lambda a=a, out=out: softmax.softmax(a, out))  # type: ignore[attr-defined, misc]
        row(kit, f"torch.softmax {rows}x{cols}", lambda a=a, out=out: torch.softmax(a, dim=1, out=out))  # type: ignore[misc]
    mm = load("matmul")
    m, n, k = 16, 4096, 4096
    p = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    q = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    args = (p, q, c, m, n, k, p.stride(0), p.stride(1), q.stride(0), q.stride(1), c.stride(0), c.stride(1))
    candidates = [(16, 64, 128, 4), (16, 32, 256, 4), (16, 128, 128, 3), (32, 64, 128, 4)]  # (M, N, K tile, stages)
    for bm, bn, bk, stages in candidates:
        meta = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 1, "num_stages": stages, "num_warps": 4}

        def fixed(meta: dict = meta) -> None:  # type: ignore[type-arg]
            grid = (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
            mm.matmul_kernel[grid](*args, **meta)  # type: ignore[attr-defined]

        row(kit, f"matmul 16x4096x4096 tile {bm}x{bn}x{bk} s{stages} w4", fixed)
    row(kit, "matmul 16x4096x4096, the answer", lambda: mm.matmul(p, q, c))  # type: ignore[attr-defined]
    row(kit, "torch.matmul 16x4096x4096", lambda: torch.mm(p, q, out=c))


if __name__ == "__main__":
    main()
