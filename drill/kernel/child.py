"""The judge process: `python -m drill.kernel.child`. Reads requests on stdin, writes events on stdout.

It imports torch once and stays warm (triton is imported by the Triton files
that use it; CUDA kernels are loaded and launched through the driver API).
The learner's own prints go to stderr, so they can never corrupt the protocol
on stdout.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import gc
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO, TypeGuard

from drill.kernel import nvrtc, protocol
from drill.kernel.judging import Fatal, Judge, describe_fault

COMPUTE = "tflops"  # the fastest torch.matmul measured, for compute-bound cards
CEILINGS = ("gbps", "read_gbps")  # GB/s: a device-to-device copy (read + write), and the fastest pure read
EVENT_US = "event_us"  # what a CUDA event pair adds to a launch here, taken off event-timed figures


def _installed(name: str) -> str:
    """A package's version without importing it."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # torch makes the context itself, and reports what went wrong
        pass


def cuda_device_count() -> int:
    """GPUs the driver sees, asked without importing torch (0 when there is no driver)."""
    if os.environ.get("DRILL_JUDGE_CPU"):
        return 0
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    if lib.cuInit(0) != 0:
        return 0
    count = ctypes.c_int()
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def _complete(entry: Any, keys: tuple[str, ...]) -> TypeGuard[dict[str, Any]]:
    """A saved calibration entry that holds a number for each of `keys`."""
    return isinstance(entry, dict) and all(isinstance(entry.get(k), (int, float)) for k in keys)


WORKDIR_PREFIX = "drill-judge-"


def sweep_workdirs() -> None:
    """Remove the work folders of judges that were killed (their process is gone) before they could."""
    for folder in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        pid = folder.name.removeprefix(WORKDIR_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # alive, or someone else's
            pass


class Runtime:
    """What the judge knows about this machine; imports the heavy packages once."""

    def __init__(self, calibration: Path | None) -> None:
        self.calibration = calibration
        self.gpu = cuda_device_count() > 0
        self._workdir: Path | None = None
        self.arch = os.environ.get("DRILL_CUDA_ARCH", nvrtc.DEFAULT_ARCH)
        self.torch: Any = None
        self._kit: Any = None
        self.device_words = "CPU (no GPU): CUDA kernels are compiled only; Triton runs in its interpreter"
        self.versions: dict[str, str] = {"python": platform.python_version()}
        self.startup: dict[str, float] = {}
        self._ceilings: dict[str, float] | None = None
        try:
            self.versions["nvrtc"] = "%d.%d" % nvrtc.version()
        except nvrtc.NvrtcUnavailable:
            self.versions["nvrtc"] = "missing"
        if self.gpu:
            try:
                self._start_gpu()
            except ImportError as exc:  # a GPU, but not the packages to drive it: judge as on a CPU
                self.gpu = False
                self.device_words = (
                    f"GPU present, but {exc.name or 'torch'} is missing from the judge's Python ({sys.executable}):"
                    " CUDA kernels are compiled only"
                )

    @property
    def workdir(self) -> Path:
        """This judge's folder for the learner's Triton files (see open_workdir)."""
        return self.open_workdir()

    def open_workdir(self) -> Path:
        """Make the folder when the first job arrives (a judge never sent one leaves nothing); removed on quit."""
        if self._workdir is None:
            sweep_workdirs()
            self._workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
        return self._workdir

    def remove_workdir(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _start_gpu(self) -> None:
        import threading

        from drill.kernel import cudadrv

        t0 = time.perf_counter()
        # the GPU's context is made while torch imports (both take a while on a cold start)
        context = threading.Thread(target=_quietly, args=(cudadrv.retain_primary_context,), daemon=True)
        context.start()
        import torch  # triton is imported by the Triton files that need it, not here: it costs a cold start

        self.startup["import torch"] = time.perf_counter() - t0
        context.join()
        t0 = time.perf_counter()
        self.torch = torch
        torch.zeros(1, device="cuda").add_(1)  # create the context now, not during the first run
        major, minor = torch.cuda.get_device_capability(0)
        self.arch = f"sm_{major}{minor}"
        props = torch.cuda.get_device_properties(0)
        self.device_words = f"{props.name} ({self.arch}, {props.multi_processor_count} SMs)"
        self.versions.update(torch=torch.__version__, triton=_installed("triton"))
        self.startup["CUDA context"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.kit()
        self.startup["kit"] = time.perf_counter() - t0

    def ensure_torch(self, emit: Callable[[dict[str, Any]], None]) -> bool:
        """Import torch and triton (the interpreter on a CPU); say so when they are missing."""
        if self.torch is not None:
            return True
        if not self.gpu:
            os.environ.setdefault("TRITON_INTERPRET", "1")
        try:
            import torch
            import triton
        except ImportError as exc:
            emit({"event": "compiled", "ok": None, "log": "", "messages": [], "resources": []})
            emit(
                {
                    "event": "note",
                    "text": f"correctness and speed: {exc.name or 'torch/triton'} is not installed in the judge's Python"
                    f" ({sys.executable}); pip install torch triton numpy",
                }
            )
            return False
        self.torch = torch
        self.versions.update(torch=torch.__version__, triton=triton.__version__)
        return True

    def kit(self) -> Any:
        if self._kit is None:
            from drill.kernel.kit import Kit

            self._kit = Kit(self.gpu)
        return self._kit

    def release_memory(self) -> None:
        gc.collect()
        if self.gpu and self.torch is not None:
            self.torch.cuda.empty_cache()

    def context_healthy(self) -> bool:
        """After a CUDA error: can this process still use the GPU? Errors like an illegal address are sticky."""
        if not self.gpu:
            return True
        torch = self.torch
        try:
            torch.cuda.synchronize()
            probe = torch.ones(8, device="cuda")
            return float(probe.sum().item()) == 8.0
        except Exception:
            return False

    # -- the copy-bandwidth ceiling, measured once per GPU ------------------------
    def device_key(self) -> str:
        props = self.torch.cuda.get_device_properties(0)
        uuid = getattr(props, "uuid", "")
        return f"{props.name}|{uuid}|{props.total_memory}"

    def _saved(self) -> dict[str, Any]:
        if self.calibration is None or not self.calibration.exists():
            return {}
        try:
            data = json.loads(self.calibration.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def calibrated(self, compute: bool = False) -> bool:
        """Whether `ceilings` can answer without measuring (saved for this GPU, or measured in this judge)."""
        if self._ceilings is not None:
            return not compute or COMPUTE in self._ceilings
        return _complete(self._saved().get(self.device_key()), (*CEILINGS, EVENT_US, *((COMPUTE,) if compute else ())))

    def ceilings(self, kit: Any, compute: bool = False) -> dict[str, float]:
        """This GPU's copy and read ceilings in GB/s (and, for a compute-bound card, its matmul ceiling
        in TFLOPS): saved, else measured now (and saved)."""
        if self._ceilings is None:
            entry = self._saved().get(self.device_key())
            if not _complete(entry, (*CEILINGS, EVENT_US)):
                entry = self.calibrate(kit)
            kit.event_overhead_ms = float(entry[EVENT_US]) / 1e3
            self._ceilings = {k: float(entry[k]) for k in CEILINGS}
            if isinstance(entry.get(COMPUTE), (int, float)):
                self._ceilings[COMPUTE] = float(entry[COMPUTE])
        if compute and COMPUTE not in self._ceilings:
            self._ceilings[COMPUTE] = float(self.calibrate_compute(kit)[COMPUTE])
        return self._ceilings

    def calibrate_compute(self, kit: Any) -> dict[str, Any]:
        """Measure the matmul ceiling (only when a compute-bound card is timed: it costs a second or two)."""
        result = self._measure_matmul(kit)
        self._save_entry(result)
        return result

    def _measure_matmul(self, kit: Any) -> dict[str, Any]:
        from drill.kernel.measure import measure_matmul_tflops

        result = measure_matmul_tflops(kit)
        self.release_memory()
        return result

    def _save_entry(self, result: dict[str, Any]) -> None:
        """Merge `result` into this GPU's saved calibration."""
        if self.calibration is None:
            return
        data = self._saved()
        entry = data.get(self.device_key())
        data[self.device_key()] = {**(entry if isinstance(entry, dict) else {}), **result}
        self.calibration.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.calibration.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, self.calibration)

    def calibrate(self, kit: Any, compute: bool = False) -> dict[str, Any]:
        """Measure the copy and read ceilings (and the matmul ceiling with `compute`), and save them."""
        from drill.kernel.measure import event_overhead, measure_copy_gbps, measure_read_gbps

        result = event_overhead(kit)  # first: the ceilings below are timed with events too
        kit.event_overhead_ms = float(result[EVENT_US]) / 1e3
        result.update(measure_copy_gbps(kit))
        self.release_memory()
        result.update(measure_read_gbps(kit, self.arch))
        self.release_memory()
        self._ceilings = {k: float(result[k]) for k in CEILINGS}
        result.update(device=self.device_words, measured_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        result["method"] = (
            "1 GiB: device-to-device copy (bytes read + written) and the fastest pure read; median of CUDA-event"
            " timings less the event pair's own cost (event_us), L2 flushed before each"
        )
        if compute:
            result.update(self._measure_matmul(kit))
            self._ceilings[COMPUTE] = float(result[COMPUTE])
        self._save_entry(result)
        return result


def serve(stdin: Iterable[str], out: TextIO, runtime: Runtime) -> int:
    judge = Judge(runtime)

    def emit_for(request_id: Any) -> Callable[[dict[str, Any]], None]:
        def emit(event: dict[str, Any]) -> None:
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
        request = protocol.decode(line)
        if request is None:
            continue
        op = request.get("op")
        emit = emit_for(request.get("id"))
        if op == "quit":
            return 0
        if op == "run":
            runtime.open_workdir()
            try:
                judge.run(
                    request.get("job") or {}, str(request.get("source", "")), str(request.get("timing", "first")), emit
                )
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
        elif op == "calibrate":
            if not runtime.gpu:
                emit(
                    {"event": "error", "kind": "usage", "fatal": False, "message": "no GPU here: nothing to calibrate"}
                )
            else:
                try:
                    emit({"event": "calibrated", **runtime.calibrate(runtime.kit(), compute=True)})
                except Exception as exc:
                    emit(
                        {
                            "event": "error",
                            "kind": describe_fault(exc)[0],
                            "fatal": False,
                            "message": describe_fault(exc)[1],
                        }
                    )
            emit({"event": "finished"})
        else:
            emit({"event": "error", "kind": "usage", "fatal": False, "message": f"unknown op {op!r}"})
            emit({"event": "finished"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drill.kernel.child")
    parser.add_argument("--calibration", type=Path, help="JSON file where each GPU's copy bandwidth is kept")
    args = parser.parse_args(argv)
    # keep the real stdout for the protocol; everything else printed goes to stderr
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from drill.kernel.inbox import Inbox

    requests = Inbox(sys.stdin)  # read from now on: a first CUDA job compiles while torch imports
    runtime = Runtime(args.calibration)
    gc.freeze()  # torch and the rest imported so far live as long as the judge: the collection after each case skips them
    try:
        code = serve(requests, out, runtime)
    finally:
        runtime.remove_workdir()
    out.flush()
    os._exit(code)  # skip interpreter teardown: a broken CUDA context can hang it


if __name__ == "__main__":
    main()
