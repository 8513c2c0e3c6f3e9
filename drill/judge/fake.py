"""A stand-in judge that needs no GPU and no torch: `python -m drill.judge.fake`.

It speaks the real protocol, sending only the fields the client needs (as
plain dicts: the client takes a missing figure as unknown). What it does for
a run is chosen by a line in the submitted source, `fake: <behaviour>`:

    ok (default)      stream started, compiled, three passing cases, a timing, finished
    slow SECONDS      as ok, pausing between events
    hang              stop answering during the second case
    crash             exit abruptly (signal) during the second case
    fatal             report an illegal address in the second case, then exit like the real judge
    wrong             the second case fails
    compile-error N   a compile error at line N
    noise             print junk lines on stdout between events (they must be ignored)
    collective        as ok, timed as a collective card is (with --gpu): bus bandwidth against NCCL's on 2 GPUs
    torch-later S     as ok (with --gpu), but torch's own time comes S seconds after `finished`, as from a judge
                      that started without torch on a GPU new to drill
    torch-later-dies  as torch-later, but the judge dies before torch's own time is sent

Tests use it to drive the client and the kernel screen through timeouts, crashes, cancel and replacement.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time

from drill.kernel_shared import protocol

_DIRECTIVE = re.compile(r"fake:\s*(?P<what>[a-z-]+)(?:\s+(?P<arg>[\d.]+))?")


# What drill.judge.collective.run sends for a timed size: 256 MiB in 1.2 ms on 2 GPUs, NCCL in 0.96 ms.
COLLECTIVE_TIMING = {
    "event": "timing",
    "name": "256 MiB",
    "ms": 1.2,
    "reps": 20,
    "bytes": 2**28,
    "gbps": 223.7,
    "ceiling_gbps": 279.6,
    "pct_of_ceiling": 80.0,
    "bound": "collective",
    "torch_ms": 0.96,
    "torch_gbps": 279.6,
    "vs_torch": 0.8,
    "algbw_gbps": 223.7,
    "busbw_gbps": 223.7,
    "baseline": "NCCL",
    "baseline_busbw_gbps": 279.6,
    "world": 2,
    "bus_factor": 1.0,
}


def behaviour(source: str) -> tuple[str, str | None]:
    m = _DIRECTIVE.search(source)
    return (m["what"], m["arg"]) if m else ("ok", None)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calibration")
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--die-at-start", action="store_true")
    parser.add_argument("--gpu", action="store_true", help="claim to have a GPU (timings are reported)")
    args = parser.parse_args()
    out = sys.stdout
    if args.die_at_start:
        print("fake judge: cannot start (asked to fail)", file=sys.stderr)
        return 7
    time.sleep(args.start_delay)
    device = "Fake GPU (sm_90, 132 SMs)" if args.gpu else "CPU (fake judge)"
    protocol.write(out, {"event": "ready", "pid": os.getpid(), "device": device, "gpu": args.gpu, "versions": {}})
    runs = 0  # run requests seen, told in each `started` event (a request sent twice would show)
    for line in sys.stdin:
        request = protocol.decode(line)
        if request is None:
            continue
        if request.get("op") == "quit":
            return 0
        rid = request.get("id")

        def emit(event: dict[str, object], rid: object = rid) -> None:
            protocol.write(out, {"id": rid, **event})

        if request.get("op") == "calibrate":
            emit({"event": "calibrated", "gbps": 3000.0, "device": device})
            emit({"event": "finished"})
            continue
        what, arg = behaviour(str(request.get("source", "")))
        pause = float(arg) if what == "slow" and arg else 0.0
        job = request.get("job")
        card = job.get("card", "?") if isinstance(job, dict) else "?"
        runs += 1
        emit({"event": "started", "card": card, "device": device, "gpu": args.gpu, "runs": runs})
        if what == "compile-error":
            line_no = int(float(arg or 1))
            emit(
                {
                    "event": "compiled",
                    "ok": False,
                    "log": f'kernel.cu({line_no}): error: expected a ";"',
                    "messages": [{"line": line_no, "column": 5, "severity": "error", "message": 'expected a ";"'}],
                    "resources": [],
                    "seconds": 0.01,
                }
            )
            emit({"event": "finished", "seconds": 0.01})
            continue
        emit(
            {
                "event": "compiled",
                "ok": True,
                "log": "",
                "messages": [],
                "resources": [{"name": "fake_kernel", "registers": 16, "shared_bytes": 1024, "stack_bytes": 0}],
                "seconds": 0.01,
            }
        )
        for index, name in enumerate(("n=1", "n=31", "n=1,025")):
            emit({"event": "case_started", "name": name})
            if what == "noise":
                print("stray output from the learner's code", flush=True)
            time.sleep(pause)
            if index == 1 and what == "hang":
                time.sleep(3600)
            if index == 1 and what == "crash":
                out.flush()
                os.kill(os.getpid(), signal.SIGSEGV)
            if index == 1 and what == "fatal":
                emit(
                    {
                        "event": "error",
                        "kind": "cuda",
                        "fatal": True,
                        "case": name,
                        "message": "CUDA said: an illegal memory access was encountered",
                    }
                )
                emit({"event": "finished"})
                return 3
            ok = not (index == 1 and what == "wrong")
            emit(
                {
                    "event": "case",
                    "name": name,
                    "ok": ok,
                    "message": "" if ok else "1 of 31 elements wrong; first out = 0, expected 1.5",
                    "max_error": 0.0 if ok else 1.5,
                    "tolerance": 1e-6,
                }
            )
        if args.gpu and what == "collective":
            emit(COLLECTIVE_TIMING)
        elif args.gpu and what != "wrong":
            timing: dict[str, object] = {
                "event": "timing",
                "name": "n=2^28",
                "ms": 0.3,
                "reps": 50,
                "bytes": 2**30,
                "gbps": 3579.1,
                "ceiling_gbps": 4000.0,
                "pct_of_ceiling": 89.5,
                "torch_ms": 0.27,
                "torch_gbps": 3976.8,
                "vs_torch": 0.9,
            }
            if what.startswith("torch-later"):
                timing.update(torch_ms=None, torch_gbps=None, vs_torch=None, torch_later=True)
            emit(timing)
        elif not args.gpu:
            emit({"event": "note", "text": "speed: no GPU here (fake judge)"})
        emit({"event": "finished", "seconds": 0.05})
        if args.gpu and what == "torch-later-dies":
            out.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if args.gpu and what == "torch-later":
            time.sleep(float(arg or 0))  # torch imports, then times its own way once
            emit({"event": "torch_time", "name": "n=2^28", "torch_ms": 0.27, "torch_host_us": 6.0})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
