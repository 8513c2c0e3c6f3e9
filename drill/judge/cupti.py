"""The GPU's own start and end stamps for the work a launch did, from CUPTI's activity API through ctypes.

Imported only by the judge child. torch.profiler reads the same records, but
its first session in a process spends 1-5 s starting its own machinery
(Kineto), and a cold verdict waited for it; CUPTI alone starts in about 20 ms.

How a launch is timed (`Recorder.launch_times`): the host waits until the GPU
is idle, queues a marker (a memset of MARK_BYTES bytes to BEGIN), the launch,
and a second marker (to END), and waits again. The GPU work (kernels, memsets,
copies, on any stream) that starts between the two markers on the GPU's own
clock is the launch's; its durations are summed. The markers are found among
the records by their size and value, so nothing depends on how CUPTI lines the
GPU's clock up with the host's (that drifted by tens of microseconds in one
run, enough to count an L2 flush into a launch).

What a stream audit (`StreamAudit`) is for: the judge times the stream it
launches on, from the thread that calls the launch. Work the learner's code
puts on another stream, or starts from another thread, can finish after the
launch's end is stamped and still leave the right output by the time it is
checked, so a figure would leave it out. The audit records everything the GPU
does while a launch is timed, with the CUDA call that asked for it, and names
the work on any stream or from any thread but the judge's (known by a marker
the audit queues first).
"""

from __future__ import annotations

import bisect
import ctypes
import glob
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from drill.judge.evidence import Work, WorkKind

# CUpti_ActivityKind: work on the GPU
MEMCPY = 1
MEMSET = 2
CONCURRENT_KERNEL = 10
# ... and the CUDA calls that ask for it (CUpti_ActivityAPI records)
DRIVER = 4
RUNTIME = 5
KINDS = (MEMCPY, MEMSET, CONCURRENT_KERNEL)
AUDIT_KINDS = (*KINDS, DRIVER, RUNTIME)
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
# in the kernel, memcpy and memset records of CUDA 11 to 13 alike
START_OFFSET = 16
END_OFFSET = 24
# the uint32 value and the uint64 byte count of a memset record
MEMSET_VALUE_OFFSET = 4
MEMSET_BYTES_OFFSET = 8
# CUPTI's id of the stream the work ran on (uint32): CUpti_ActivityKernel4 to 10, Memcpy5/6, Memset4
STREAM_OFFSET = {CONCURRENT_KERNEL: 48, MEMCPY: 40, MEMSET: 40}
# the id that ties the work to the call that asked for it (uint32), in the same records
CORRELATION_OFFSET = {CONCURRENT_KERNEL: 92, MEMCPY: 44, MEMSET: 44}
# in a CUpti_ActivityAPI record
API_START_OFFSET = 8
API_THREAD_OFFSET = 28
API_CORRELATION_OFFSET = 32
# the kernel's name (const char*) in CUpti_ActivityKernel4 to 10, and a copy's kind (uint8) in a memcpy record
KERNEL_NAME_OFFSET = 104
MEMCPY_KIND_OFFSET = 4
MARK_BYTES = 13  # an odd size no launch's own memset is likely to have
BEGIN = 0xB1
END = 0xE1
AUDIT = 0xA5
BUFFER_BYTES = 1 << 20

# kind, start (ns), end (ns), memset value, memset bytes, stream id, correlation id
Span = tuple[int, int, int, int, int, int, int]

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
        lib.cuptiGetResultString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self._buffers: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self._full: list[tuple[int, int]] = []
        self._depth = 0  # recordings open: a launch's timing may run inside a stream audit
        self._spans: list[Span] = []  # what the outermost recording has read so far
        self.threads: dict[int, int] = {}  # correlation id -> the thread that made the call (AUDIT_KINDS only)
        self.called_at: dict[int, int] = {}  # correlation id -> when the call was made (CUPTI's clock, ns)
        self.work: list[tuple[int, Work]] = []  # (correlation id, what ran) since the outermost `start`
        self._enabled: tuple[int, ...] = ()
        self._requested = _Requested(self._on_requested)  # kept: CUPTI holds only the function pointers
        self._completed = _Completed(self._on_completed)

    def _on_requested(self, buffer: Any, size: Any, max_records: Any) -> None:
        raw = ctypes.create_string_buffer(BUFFER_BYTES + 8)
        address = (ctypes.addressof(raw) + 7) & ~7  # records are 8-byte aligned
        self._buffers[address] = raw
        buffer[0] = address
        size[0] = BUFFER_BYTES
        max_records[0] = 0  # as many as fit

    def _on_completed(self, _ctx: Any, _stream: int, buffer: int, _size: int, valid: int) -> None:
        if buffer:
            self._full.append((buffer, valid))

    def _call(self, name: str, *args: Any) -> None:
        code = getattr(self.lib, name)(*args)
        if code != 0:
            text = ctypes.c_char_p()
            self.lib.cuptiGetResultString(code, ctypes.byref(text))
            raise CuptiError(f"{name}: {(text.value or b'').decode(errors='replace') or code}")

    def start(self, kinds: Sequence[int] = KINDS) -> None:
        """Start recording `kinds`, or go on recording inside a recording already open."""
        if self._depth == 0:
            # again each time: another user of CUPTI in this process (torch.profiler) may have put in its own
            self._call("cuptiActivityRegisterCallbacks", self._requested, self._completed)
            self._spans = []
            self.threads = {}
            self.called_at = {}
            self.work = []
            self._enabled = tuple(kinds)
            for kind in self._enabled:
                self._call("cuptiActivityEnable", kind)
        self._depth += 1

    def stop(self) -> list[Span]:
        """Close one recording (the last one stops CUPTI); the work recorded since the outermost `start`."""
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            for kind in self._enabled:
                self.lib.cuptiActivityDisable(kind)
        self.read()
        return list(self._spans)

    def read(self) -> int:
        """Take in the records of the work finished so far (recording goes on); how many are held now."""
        self._call("cuptiActivityFlushAll", FLUSH_FORCED)
        self._walk()
        return len(self._spans)

    def _walk(self) -> None:
        record = ctypes.c_void_p()
        for buffer, valid in self._full:
            record.value = None
            while self.lib.cuptiActivityGetNextRecord(buffer, valid, ctypes.byref(record)) == 0 and record.value:
                at = record.value
                kind = ctypes.c_uint32.from_address(at).value
                if kind in KINDS:
                    start = ctypes.c_uint64.from_address(at + START_OFFSET).value
                    end = ctypes.c_uint64.from_address(at + END_OFFSET).value
                    stream = ctypes.c_uint32.from_address(at + STREAM_OFFSET[kind]).value
                    correlation = ctypes.c_uint32.from_address(at + CORRELATION_OFFSET[kind]).value
                    value = nbytes = 0
                    if kind == MEMSET:
                        value = ctypes.c_uint32.from_address(at + MEMSET_VALUE_OFFSET).value
                        nbytes = ctypes.c_uint64.from_address(at + MEMSET_BYTES_OFFSET).value
                    self._spans.append((kind, start, end, value, nbytes, stream, correlation))
                    self.work.append((correlation, _work(kind, at)))
                elif kind in (DRIVER, RUNTIME):
                    correlation = ctypes.c_uint32.from_address(at + API_CORRELATION_OFFSET).value
                    self.threads[correlation] = ctypes.c_uint32.from_address(at + API_THREAD_OFFSET).value
                    self.called_at[correlation] = ctypes.c_uint64.from_address(at + API_START_OFFSET).value
            self._buffers.pop(buffer, None)
        self._full.clear()

    def now(self) -> int:
        """CUPTI's clock now (ns): the clock its records of CUDA calls are stamped with."""
        stamp = ctypes.c_uint64()
        self._call("cuptiGetTimestamp", ctypes.byref(stamp))
        return stamp.value

    def work_of_calls(self, windows: Sequence[tuple[int, int]]) -> list[list[Work]]:
        """Per window of CUPTI's clock (a call of the learner's code), the GPU work asked for by a CUDA call made
        inside it, from the records read so far."""
        found: list[list[Work]] = [[] for _ in windows]
        starts = [w[0] for w in windows]
        for correlation, item in self.work:
            at = self.called_at.get(correlation)
            if at is None:
                continue
            index = bisect.bisect_right(starts, at) - 1
            if index >= 0 and at <= windows[index][1]:
                found[index].append(item)
        return found

    def launch_times(
        self,
        fn: Callable[[], object],
        setup: Callable[[], object],
        reps: int,
        synchronize: Callable[[], object],
        mark: Callable[[int], object],
    ) -> list[float | None]:
        """Per repetition, the summed GPU milliseconds of the work `fn` launched (None: none was recorded).

        `mark(value)` queues a memset of MARK_BYTES bytes to `value` on the stream `fn` launches on.
        """
        synchronize()
        self.start()
        try:
            first = self.read()  # inside an audit: what came before is not these launches' work
            for _ in range(reps):
                setup()
                synchronize()
                mark(BEGIN)
                fn()
                mark(END)
                synchronize()
        finally:
            spans = self.stop()
        found = between_marks(spans[first:])
        return found + [None] * (reps - len(found))


def _work(kind: int, at: int) -> Work:
    """The kernel, memset or copy of the record at address `at`."""
    if kind == CONCURRENT_KERNEL:
        pointer = ctypes.c_void_p.from_address(at + KERNEL_NAME_OFFSET).value
        name = ctypes.string_at(pointer).decode(errors="replace") if pointer else "?"
        return Work(WorkKind.KERNEL, name)
    if kind == MEMSET:
        return Work(WorkKind.MEMSET)
    return Work(WorkKind.MEMCPY, copy_kind=ctypes.c_uint8.from_address(at + MEMCPY_KIND_OFFSET).value)


def _is_mark(span: Span, value: int) -> bool:
    return span[0] == MEMSET and span[3] == value and span[4] == MARK_BYTES


def between_marks(spans: Sequence[Span]) -> list[float | None]:
    """For each BEGIN ... END pair of markers in GPU time, the summed ms of the work that starts between
    them; None for a pair with nothing between."""
    result: list[float | None] = []
    inside: list[int] | None = None
    for span in sorted(spans, key=lambda s: (s[1], s[2])):
        if _is_mark(span, BEGIN):
            inside = []
        elif _is_mark(span, END):
            if inside is not None:
                result.append(sum(inside) / 1e6 if inside else None)
            inside = None
        elif inside is not None and span[2] >= span[1]:
            inside.append(span[2] - span[1])
    return result


def stray_work(spans: Sequence[Span], threads: dict[int, int] | None = None) -> str:
    """In words, the work of `spans` on a stream other than the first AUDIT marker's, or asked for from a
    thread other than the one that queued that marker (`threads`: correlation id -> thread); "" if none."""
    audit = next((s for s in spans if _is_mark(s, AUDIT)), None)
    if audit is None:
        return ""
    threads = threads or {}
    own_thread = threads.get(audit[6])
    streams = [s for s in spans if s[5] != audit[5]]
    elsewhere = [s for s in spans if own_thread is not None and threads.get(s[6], own_thread) != own_thread]
    found = []
    if streams:
        n = len({s[5] for s in streams})
        found.append(f"on {'another stream' if n == 1 else f'{n} other streams'} ({_counted(streams)})")
    if elsewhere:
        n = len({threads[s[6]] for s in elsewhere})
        found.append(f"from {'another thread' if n == 1 else f'{n} other threads'} ({_counted(elsewhere)})")
    if not found:
        return ""
    return (
        f"the launch put GPU work {' and '.join(found)}, outside what the judge times, so the figure would"
        " leave that work out; launch on torch.cuda.current_stream() from the calling thread"
    )


def _counted(spans: Sequence[Span]) -> str:
    names = {CONCURRENT_KERNEL: "kernel", MEMSET: "memset", MEMCPY: "copy"}
    counts: dict[str, int] = {}
    for span in spans:
        counts[names[span[0]]] = counts.get(names[span[0]], 0) + 1
    return ", ".join(f"{n} {kind}{'s' * (n != 1)}" for kind, n in counts.items())


class StreamAudit:
    """Records what the GPU does while a launch is timed, and which thread asked for it; `finish` names
    work on any stream but the judge's or from any thread but the judge's.

    `mark(value)` queues a memset of MARK_BYTES bytes to `value` on the judge's stream, from its thread.
    `enter` and `leave` bracket each call of the learner's code (host time only, no GPU work): `calls` then
    gives the GPU work each call asked for.
    """

    def __init__(self, recorder: Recorder, mark: Callable[[int], object]) -> None:
        self.recorder = recorder
        self.windows: list[tuple[int, int]] = []
        self._entered = 0
        recorder.start(AUDIT_KINDS)
        try:
            mark(AUDIT)
        except BaseException:
            recorder.stop()
            raise

    def finish(self, synchronize: Callable[[], object]) -> str:
        """Wait for the GPU, stop recording; "" when all the work ran on the judge's stream, from its thread."""
        try:
            synchronize()
        finally:
            spans = self.recorder.stop()
        return stray_work(spans, self.recorder.threads)

    def enter(self) -> None:
        self._entered = self.recorder.now()

    def leave(self) -> None:
        self.windows.append((self._entered, self.recorder.now()))

    def calls(self) -> list[list[Work]]:
        """After `finish`: per call of the learner's code, the GPU work it asked for."""
        return self.recorder.work_of_calls(self.windows)


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
