"""What the judge's CUPTI figure for a short launch is made of, beside Nsight Compute's.

    python bench/probe_label.py [--empty-only]

(`--empty-only` launches only the empty kernel, 30 times: run it under
`ncu -k regex:^empty_kernel` for Nsight Compute's figure of the same launch.)

For an empty Triton kernel and the softmax answer at 4096 x 1024, each launch
alone after an L2 flush (the judge's method): the device time torch.profiler
gives the judge's label, the kernels it attached to the label with their own
durations, and the kernels' durations read straight from their records. Then
the SM clock nvidia-smi saw while the judge timed the matmul answer at 4096³
(Nsight Compute reported its own clock for the same launch in bench/kernels.py
--ncu-clocks).
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402

from drill.judge import profiled  # noqa: E402
from drill.judge.torch_kit import Kit  # noqa: E402


@triton.jit
def empty_kernel(x_ptr):  # type: ignore[no-untyped-def]
    pass


def load(name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, ROOT / "answers" / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def detail(kit: Kit, label: str, fn: Callable[[], object], reps: int = 30) -> None:
    from torch.autograd import DeviceType  # type: ignore[attr-defined]
    from torch.profiler import ProfilerActivity, profile, record_function

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            kit.flush_l2()
            torch.cuda.synchronize()
            with record_function(profiled.LAUNCH_LABEL):
                fn()
        torch.cuda.synchronize()
    events = prof.events()
    labels = [e for e in events if e.name == profiled.LAUNCH_LABEL and e.device_type == DeviceType.CPU]
    totals = [e.device_time_total for e in labels]
    attached = [[(k.name[:30], round(k.duration, 2)) for k in e.kernels] for e in labels[:2]]
    kernels: dict[str, list[float]] = {}
    for e in events:
        if e.device_type == DeviceType.CUDA:
            kernels.setdefault(e.name[:40], []).append(e.time_range.elapsed_us())
    print(f"{label}: label device time median {statistics.median(totals):.2f} µs over {len(totals)}")
    print(f"{label}: kernels attached to the first two labels: {attached}")
    for name, d in kernels.items():
        print(f"{label}: device record {name!r}: n={len(d)} median {statistics.median(d):.2f} µs")
    print(f"{label}: kit.measure (the judge) {kit.measure(fn, poison=False).ms * 1e3:.2f} µs")


def clocks_during(kit: Kit, fn: Callable[[], object]) -> None:
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    ms = kit.measure(fn, poison=False, budget_s=1.0, max_reps=400).ms
    smi.terminate()
    out, _ = smi.communicate(timeout=5)
    rows = [line.split(",") for line in out.splitlines() if "," in line]
    busy = [(float(c), float(p)) for c, p in rows if float(p) > 200]
    print(f"matmul 4096^3: judge {ms * 1e3:.1f} µs; nvidia-smi samples {len(rows)}, above 200 W: {len(busy)}")
    if busy:
        print(
            f"  SM clock while busy: median {statistics.median(c for c, _ in busy):.0f} MHz,"
            f" min {min(c for c, _ in busy):.0f}; power median {statistics.median(p for _, p in busy):.0f} W"
        )


def main() -> None:
    kit = Kit(True)
    x = torch.empty(1, device="cuda")
    detail(kit, "empty", lambda: empty_kernel[(1,)](x))
    if "--empty-only" in sys.argv:
        return
    softmax = load("softmax")
    a = torch.randn(4096, 1024, device="cuda")
    out = torch.empty_like(a)
    detail(kit, "softmax 4096x1024", lambda: softmax.softmax(a, out))  # type: ignore[attr-defined]
    detail(kit, "torch softmax 4096x1024", lambda: torch.softmax(a, dim=1, out=out))
    matmul = load("matmul")
    p = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    q = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)
    run = lambda: matmul.matmul(p, q, c)  # type: ignore[attr-defined]  # noqa: E731
    run()
    torch.cuda.synchronize()
    clocks_during(kit, run)


if __name__ == "__main__":
    main()
