"""Does a long-lived judge lose its kernel records? Many profiler sessions in one process, as a warm judge runs them.

    python bench/probe_sessions.py [--sessions N]

PyTorch issue 192021: each profiler session registers CUPTI's timestamp
callback again, and the first k kernel records of session k come back with
timestamps from another clock, so they fall outside every launch's range.
Times the softmax answer at 4096 x 1024 (30 launches a session) over N sessions,
first as the judge did, then with tiny kernels launched first in each session
to take those bad records, and prints, every so often, how many launches each
session could time and how many records carried a stray timestamp. Needs a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from probe_label import load  # noqa: E402  (the answer loader the other probes use)
from torch.autograd import DeviceType  # type: ignore[attr-defined]  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

from drill.judge import profiled  # noqa: E402
from drill.judge.torch_kit import Kit  # noqa: E402

REPS = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=120)
    args = parser.parse_args()
    mod = load("softmax")
    kit = Kit(True)
    x = torch.randn(4096, 1024, device="cuda")
    out = torch.empty_like(x)
    mod.softmax(x, out)
    tiny = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    total = 0  # sessions so far in this process
    for padded in (False, True):
        for session in range(1, args.sessions + 1):
            total += 1
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                if padded:
                    for _ in range(total * 2 + 16):
                        tiny.add_(1)
                    torch.cuda.synchronize()
                for _ in range(REPS):
                    kit.flush_l2()
                    torch.cuda.synchronize()
                    with record_function(profiled.LAUNCH_LABEL):
                        mod.softmax(x, out)
                torch.cuda.synchronize()
            events = prof.events()
            gpu = [e for e in events if e.device_type == DeviceType.CUDA]
            starts = [e.time_range.start for e in gpu]
            middle = statistics.median(starts) if starts else 0.0
            stray = sum(1 for s in starts if abs(s - middle) > 60e6)  # a minute away from the rest
            times = profiled.launch_times(events, REPS)
            ranges = sum(1 for e in gpu if e.name == profiled.LAUNCH_LABEL)
            if session in (1, 2, 5) or session % 20 == 0 or times is None:
                found = "none" if times is None else f"{len(times)}, median {statistics.median(times) * 1e3:.2f} µs"
                print(
                    f"{'padded' if padded else 'plain '} session {session:4d}: {len(gpu)} GPU records,"
                    f" {stray} stray, {ranges} ranges, launches timed: {found}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
