"""The GPU's own start and end stamps for the work a launch did, from CUPTI's activity API through ctypes.

Imported only by the judge child. torch.profiler reads the same records, but
its first session in a process spends 1-5 s starting its own machinery
(Kineto), and a cold verdict waited for it; CUPTI alone starts in about 20 ms.

How a launch is timed (`Recorder.launch_times`): the host waits until the GPU
is idle, reads CUPTI's clock, issues the launch, waits for the GPU again and
reads the clock once more. The GPU work (kernels, memsets, copies, on any
stream) whose start falls between the two readings is the launch's; its
durations are summed. CUPTI puts the GPU's stamps on the host's clock, so both
sides compare.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

MEMCPY, MEMSET, CONCURRENT_KERNEL = 1, 2, 10  # CUpti_ActivityKind
KINDS = (MEMCPY, MEMSET, CONCURRENT_KERNEL)
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
START_OFFSET, END_OFFSET = 16, 24  # in the kernel, memcpy and memset records of CUDA 11 to 13 alike
BUFFER_BYTES = 1 << 20

_Requested = ctypes.CFUNCTYPE(
    None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)
)
_Completed = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class CuptiError(RuntimeError):
    pass


def library_paths() -> list[str]:
    """Where libcupti may be: already loaded in this process, the NVIDIA wheels torch came with, the toolkit."""
    found: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            found += sorted({line.split()[-1] for line in maps if "libcupti.so" in line})
    except OSError:
        pass
    roots = [os.path.join(p, "nvidia") for p in sys.path if p]
    for root in roots:
        for pattern in ("cu*/lib/libcupti.so*", "cuda_cupti/lib/libcupti.so*"):
            found += sorted(glob.glob(os.path.join(root, pattern)), reverse=True)
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            found += sorted(glob.glob(os.path.join(home, "extras/CUPTI/lib64/libcupti.so*")), reverse=True)
    return list(dict.fromkeys(found + ["libcupti.so"]))


class Recorder:
    """CUPTI's activity records for this process (one per process: CUPTI has one set of callbacks)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiGetTimestamp.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        lib.cuptiGetResultString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self._buffers: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self._full: list[tuple[int, int]] = []
        self._requested = _Requested(self._on_requested)  # kept: CUPTI holds only the function pointers
        self._completed = _Completed(self._on_completed)

    def _on_requested(self, buffer: Any, size: Any, max_records: Any) -> None:
        raw = ctypes.create_string_buffer(BUFFER_BYTES + 8)
        address = (ctypes.addressof(raw) + 7) & ~7  # records are 8-byte aligned
        self._buffers[address] = raw
        buffer[0], size[0], max_records[0] = address, BUFFER_BYTES, 0

    def _on_completed(self, _ctx: Any, _stream: int, buffer: int, _size: int, valid: int) -> None:
        if buffer:
            self._full.append((buffer, valid))

    def _call(self, name: str, *args: Any) -> None:
        code = getattr(self.lib, name)(*args)
        if code != 0:
            text = ctypes.c_char_p()
            self.lib.cuptiGetResultString(code, ctypes.byref(text))
            raise CuptiError(f"{name}: {(text.value or b'').decode(errors='replace') or code}")

    def now(self) -> int:
        stamp = ctypes.c_uint64()
        self._call("cuptiGetTimestamp", ctypes.byref(stamp))
        return stamp.value

    def start(self) -> None:
        # again each time: another user of CUPTI in this process (torch.profiler) may have put in its own
        self._call("cuptiActivityRegisterCallbacks", self._requested, self._completed)
        for kind in KINDS:
            self._call("cuptiActivityEnable", kind)

    def stop(self) -> list[tuple[int, int]]:
        """Stop recording; the (start, end) stamps in ns of the work recorded since `start`."""
        for kind in KINDS:
            self.lib.cuptiActivityDisable(kind)
        self._call("cuptiActivityFlushAll", FLUSH_FORCED)
        spans: list[tuple[int, int]] = []
        record = ctypes.c_void_p()
        for buffer, valid in self._full:
            record.value = None
            while self.lib.cuptiActivityGetNextRecord(buffer, valid, ctypes.byref(record)) == 0 and record.value:
                if ctypes.c_uint32.from_address(record.value).value in KINDS:
                    start = ctypes.c_uint64.from_address(record.value + START_OFFSET).value
                    end = ctypes.c_uint64.from_address(record.value + END_OFFSET).value
                    spans.append((start, end))
            self._buffers.pop(buffer, None)
        self._full.clear()
        return spans

    def launch_times(
        self, fn: Callable[[], Any], setup: Callable[[], Any], reps: int, synchronize: Callable[[], Any]
    ) -> list[float | None]:
        """Per repetition, the summed GPU milliseconds of the work `fn` launched (None: none was recorded)."""
        windows = []
        self.start()
        try:
            for _ in range(reps):
                setup()
                synchronize()
                before = self.now()
                fn()
                synchronize()
                windows.append((before, self.now()))
        finally:
            spans = self.stop()
        return in_windows(windows, spans)


def in_windows(windows: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[float | None]:
    """For each (from, to) window in ns, the summed ms of the spans that start inside it; None for none."""
    result: list[float | None] = []
    for lo, hi in windows:
        inside = [end - start for start, end in spans if lo <= start <= hi and end >= start]
        result.append(sum(inside) / 1e6 if inside else None)
    return result


_recorder: Recorder | None = None
_why_not: str | None = None


def recorder() -> tuple[Recorder | None, str]:
    """This process's recorder, made on first use; (None, why) when CUPTI cannot be loaded here."""
    global _recorder, _why_not
    if _recorder is None and _why_not is None:
        errors = []
        for path in library_paths():
            try:
                _recorder = Recorder(ctypes.CDLL(path))
                break
            except (OSError, AttributeError) as exc:
                errors.append(f"{path}: {exc}")
        else:
            _why_not = "CUPTI could not be loaded (" + "; ".join(errors[-2:]) + ")"
    return _recorder, _why_not or ""
