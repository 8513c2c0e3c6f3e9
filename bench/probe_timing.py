"""Where a short kernel's time goes: the softmax answer at 4096 x 1024 timed several ways on a GPU.

    python bench/probe_timing.py

Prints the median kernel time (µs) from the judge's method (each launch on an
idle GPU) and from variants that drop or change one step at a time (the L2
flush, the pause after it, the profiler),
and from a CUDA graph of back-to-back launches, to set beside Nsight Compute's
gpu__time_duration for the same launch (bench/kernels.py prints that).
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from drill.kernel import measure as m  # noqa: E402
from drill.kernel.kit import Kit  # noqa: E402


def main() -> None:
    spec = importlib.util.spec_from_file_location("answer", ROOT / "answers" / "softmax.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kit = Kit(True)
    for rows, cols in ((4096, 1024), (32768, 2048)):
        x = torch.randn(rows, cols, device="cuda")
        out = torch.empty_like(x)

        def fn() -> None:
            mod.softmax(x, out)

        fn()
        torch.cuda.synchronize()
        figures = {"judge (flush, pause, idle GPU, CUPTI)": kit.measure(fn, poison=False).ms * 1e3}
        drain = kit._drain_cycles
        kit._drain_cycles = 0
        figures["flush, no pause, CUPTI"] = kit.measure(fn, poison=False).ms * 1e3
        kit._drain_cycles = drain
        flush = kit.flush_l2
        kit.flush_l2 = lambda: None  # type: ignore[method-assign]
        figures["no flush, CUPTI"] = kit.measure(fn, poison=False).ms * 1e3
        kit.flush_l2 = flush  # type: ignore[method-assign]

        def flush_and_touch() -> None:  # one element per 64 KiB of x and out: their pages mapped, 1/512 cached
            flush()
            x.view(-1)[::16384].sum()
            out.view(-1)[::16384].sum()

        kit.flush_l2 = flush_and_touch  # type: ignore[method-assign]
        figures["flush, pause, pages touched, CUPTI"] = kit.measure(fn, poison=False).ms * 1e3
        kit.flush_l2 = flush  # type: ignore[method-assign]

        old = m.EXACT_BELOW_MS
        m.EXACT_BELOW_MS = 0.0
        figures["flush, pause, CUDA events"] = kit.measure(fn, poison=False).ms * 1e3
        m.EXACT_BELOW_MS = old
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(50):
                    fn()
        torch.cuda.synchronize()
        runs = []
        for _ in range(10):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            graph.replay()
            e.record()
            e.synchronize()
            runs.append(s.elapsed_time(e) * 1e3 / 50)
        figures["CUDA graph of 50, no flush (L2 warm)"] = statistics.median(runs)
        for name, us in figures.items():
            print(f"softmax {rows}x{cols}: {name:<40} {us:8.2f} µs")


if __name__ == "__main__":
    main()
