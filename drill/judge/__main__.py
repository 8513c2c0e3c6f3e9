"""The judge process: `python -m drill.judge`. Reads requests on stdin, writes events on stdout.

The app starts it as its child (drill.kernel.client); over SSH it starts as
`python3 -m drill.judge --remote` on the GPU host (drill.kernel.remote), where
each run's harness is this host's own copy (drill.judge.remote_requests). The
learner's own prints go to stderr, so they can never corrupt the protocol on
stdout.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO, cast

from drill.judge import cudadrv, kit_choice, readahead


def import_cupy_ahead() -> threading.Thread:
    """Import CuPy in a thread while the rest of the judge imports and the first request is awaited: `drill kernel
    run` sends it only once its decks have loaded, and CuPy's import (about 0.6 s on an H200 host, 1.25 s with its
    files not yet cached) is most of a CUDA card's first verdict. A torch run that comes first imports torch beside
    it; CuPy stays unused."""

    def load() -> None:
        try:
            import cupy  # noqa: F401 - kept in sys.modules for the kit
        except Exception:  # broken here: the runtime's own import reports it and judges with torch
            pass

    thread = threading.Thread(target=load, name="cupy-import", daemon=True)
    thread.start()
    return thread


# CuPy's import, when begun on the judge's first lines (None: not begun there)
EARLY_CUPY_IMPORT: threading.Thread | None = None
if __name__ == "__main__" and not os.environ.get("DRILL_JUDGE_CPU"):  # started as the judge process, on a GPU:
    cudadrv.open_primary_context_early()  # the GPU's context first (see there)
    readahead.start_reading_ahead()  # and the files a CUDA card's first run loads, off disk together
    if kit_choice.may_use_cupy():
        EARLY_CUPY_IMPORT = import_cupy_ahead()  # beside the judge's own imports below

from drill.judge.devices import cuda_device_count  # noqa: E402 - after the context's thread has started
from drill.judge.judging import Fatal, Judge, describe_fault  # noqa: E402
from drill.judge.runtime import Runtime, build_cupy_ops_ahead  # noqa: E402
from drill.kernel_shared import protocol  # noqa: E402
from drill.kernel_shared.protocol import CalibratedEvent, Emit, JudgeEvent  # noqa: E402


def serve(stdin: Iterable[str], out: TextIO, runtime: Runtime) -> int:
    """Answer requests until `quit` or the end of stdin; the exit code (3: the CUDA context is broken)."""
    judge = Judge(runtime)

    def emit_for(request_id: object) -> Emit:
        def emit(event: JudgeEvent) -> None:
            protocol.write(out, {"id": request_id, **event})

        return emit

    protocol.write(
        out,
        {
            "event": "ready",
            "pid": os.getpid(),
            "device": runtime.device_words,
            "gpu": runtime.gpu,
            "versions": runtime.versions,
            "startup": runtime.startup,
        },
    )
    for line in stdin:
        message = protocol.decode(line)
        if message is None:
            continue
        emit = emit_for(message.get("id"))
        request = protocol.as_request(message)
        if request is None:
            emit({"event": "error", "kind": "usage", "fatal": False, "message": f"unknown op {message.get('op')!r}"})
            emit({"event": "finished"})
        elif request["op"] == "quit":
            return 0
        elif request["op"] == "run":
            os.chdir(runtime.open_workdir())  # what the learner's code writes by a relative name lands there
            try:
                judge.run(request["job"], request["source"], request["timing"], emit)
            except Fatal:
                return 3  # the CUDA context is broken: the client starts a fresh judge
            except Exception as exc:  # a bug in the judge or a harness: report it, stay alive
                emit(
                    {
                        "event": "error",
                        "kind": "internal",
                        "fatal": False,
                        "message": f"judge error: {type(exc).__name__}: {exc}",
                    }
                )
                traceback.print_exc()
                emit({"event": "finished"})
            runtime.time_torch_now(emit)  # after `finished`: the verdict is out, torch may take its seconds
        elif request["op"] == "calibrate":
            calibrate(runtime, emit)
    return 0


def calibrate(runtime: Runtime, emit: Emit) -> None:
    """Measure this GPU's ceilings again and send them (or why not), then `finished`."""
    if not runtime.gpu:
        emit({"event": "error", "kind": "usage", "fatal": False, "message": "no GPU here: nothing to calibrate"})
    else:
        try:
            measured = runtime.calibrate(runtime.kit(), compute=True)
            emit(cast(CalibratedEvent, {"event": "calibrated", **measured}))  # as saved for this GPU
        except Exception as exc:
            kind, words = describe_fault(exc)
            emit({"event": "error", "kind": kind, "fatal": False, "message": words})
    emit({"event": "finished"})


def forget_start_folder() -> None:
    """Take the start folder off the import path when this judge was started without `-P` (by hand, say, as
    `python -m drill.judge`): numpy, torch and the rest are then found where they are installed, never in the
    folder it was started from. The app starts it isolated from the outset (drill.kernel_shared.judge_python)."""
    if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]


def main(argv: list[str] | None = None) -> int:
    forget_start_folder()
    parser = argparse.ArgumentParser(prog="python -m drill.judge")
    parser.add_argument("--calibration", type=Path, help="JSON file where each GPU's copy bandwidth is kept")
    parser.add_argument(
        "--remote",
        action="store_true",
        help="started over SSH: each run's harness is this host's bundled copy of that name",
    )
    args = parser.parse_args(argv)
    # keep the real stdout for the protocol; everything else printed goes to stderr
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from drill.judge.inbox import Inbox, is_cuda_run
    from drill.judge.remote_requests import Requests

    stdin: Iterable[str] = Requests(sys.stdin) if args.remote else sys.stdin
    requests = Inbox(stdin)  # read from now on: a first CUDA job compiles while torch (or CuPy) imports
    # a GPU and CuPy: whether torch is imported at start depends on the first request, if it comes soon
    may_go_lean = kit_choice.may_use_cupy() and cuda_device_count() > 0
    cupy_import = None
    if may_go_lean:
        cupy_import = EARLY_CUPY_IMPORT or import_cupy_ahead()
        build_cupy_ops_ahead()
    first = requests.first_request() if may_go_lean else None
    # a CUDA card first: judged with CuPy's kit, which measures a GPU new to drill too; torch's own time for the
    # card, where it is not kept, is taken after the verdict is sent (Runtime.torch_later)
    lean = is_cuda_run(first)
    if lean and cupy_import is not None:
        cupy_import.join()  # the kit is made on this thread, from the module as imported
    runtime = Runtime(args.calibration, torch_now=not lean)
    # torch and the rest imported so far live as long as the judge: the collection after each case skips them
    # (a full one over torch and triton takes 0.1 s); what is imported later is frozen likewise (Runtime)
    gc.freeze()
    try:
        code = serve(requests, out, runtime)
    finally:
        runtime.remove_workdir()
    out.flush()
    os._exit(code)  # skip interpreter teardown: a broken CUDA context can hang it


if __name__ == "__main__":
    main()
