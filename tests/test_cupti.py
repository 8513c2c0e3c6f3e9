"""The judge's own CUPTI reader: which GPU work belongs to which launch, and the walk over CUPTI's records.

The library is replaced by a stand-in that fills the buffers CUPTI would, so
the record layout, the callbacks and the windows are all exercised on a CPU.
"""

import ctypes
import functools
import struct

import pytest

from drill.kernel import cupti


def test_work_belongs_to_the_window_it_starts_in_and_the_flush_between_windows_to_none():
    windows = [(100, 200), (300, 400), (500, 600)]
    spans = [
        (10, 90),  # the flush before the first launch
        (120, 130),
        (140, 165),  # a second kernel of the same launch
        (210, 290),  # a flush
        (310, 330),
        (405, 480),  # a flush that started after the window closed
    ]
    assert cupti.in_windows(windows, spans) == pytest.approx([35e-6, 20e-6, None])


class FakeCupti:
    """Just enough of libcupti: callbacks, a clock, and records written into the buffers it is handed."""

    def __init__(self, records: list[tuple[int, int, int]]) -> None:
        self.records = records  # (kind, start, end)
        self.clock = 0
        self.enabled: set[int] = set()
        self.registered = 0
        self.pending: list[tuple[int, int, int]] = []
        for name in ("cuptiActivityGetNextRecord", "cuptiGetTimestamp", "cuptiGetResultString"):
            setattr(self, name, functools.partial(getattr(self, "_" + name)))  # takes `argtypes`, as ctypes' do

    def cuptiActivityRegisterCallbacks(self, requested, completed) -> int:
        self.requested, self.completed = requested, completed
        self.registered += 1
        return 0

    def cuptiActivityEnable(self, kind: int) -> int:
        self.enabled.add(kind)
        return 0

    def cuptiActivityDisable(self, kind: int) -> int:
        self.enabled.discard(kind)
        return 0

    def launch(self) -> None:
        """The launch's work: the next records, stamped as CUPTI would."""
        if self.enabled:
            self.pending.append(self.records.pop(0))

    def cuptiActivityFlushAll(self, flag: int) -> int:
        assert flag == cupti.FLUSH_FORCED
        buffer, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
        self.requested(ctypes.byref(buffer), ctypes.byref(size), ctypes.byref(most))
        blob = b"".join(struct.pack("<I12xQQ16x", *rec) for rec in self.pending)
        assert len(blob) <= size.value and buffer.value % 8 == 0
        ctypes.memmove(buffer.value, blob, len(blob))
        self.completed(None, 0, buffer.value, size.value, len(blob))
        self.pending.clear()
        return 0

    def _cuptiActivityGetNextRecord(self, buffer: int, valid: int, record) -> int:
        current = record._obj
        at = buffer if not current.value else current.value + 48
        if at >= buffer + valid:
            return 12  # CUPTI_ERROR_MAX_LIMIT_REACHED
        current.value = at
        return 0

    def _cuptiGetTimestamp(self, stamp) -> int:
        self.clock += 100
        stamp._obj.value = self.clock
        return 0

    def _cuptiGetResultString(self, code: int, text) -> int:
        text._obj.value = b"CUPTI_ERROR_UNKNOWN"
        return 0


def test_each_launch_reads_the_records_of_its_own_work_from_cuptis_buffers():
    # clock: 100 before launch 1, 200 after; 300 / 400 around launch 2; 500 / 600 around launch 3
    lib = FakeCupti(
        [
            (cupti.CONCURRENT_KERNEL, 120, 150),  # launch 1: a kernel of 30 ns
            (cupti.MEMSET, 310, 315),  # launch 2: a memset and (below) a kernel
            (7, 320, 390),  # a kind the judge does not time (not GPU work of the launch)
            (cupti.MEMCPY, 520, 560),  # launch 3: a copy
        ]
    )
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    launches = iter([[lib.launch], [lib.launch, lib.launch], [lib.launch]])

    def fn() -> None:
        for step in next(launches):
            step()

    times = recorder.launch_times(fn, lambda: None, 3, lambda: None)
    assert times == pytest.approx([30e-6, 5e-6, 40e-6])
    assert lib.enabled == set() and lib.registered == 1  # recording stops with the repetitions
    assert recorder._buffers == {} and recorder._full == []  # every buffer handed back


def test_a_cupti_error_names_the_call_and_stops_recording():
    lib = FakeCupti([])
    lib.cuptiActivityFlushAll = lambda flag: 17
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    with pytest.raises(cupti.CuptiError, match="cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN"):
        recorder.launch_times(lambda: None, lambda: None, 2, lambda: None)
    assert lib.enabled == set()


def test_no_cupti_library_means_no_recorder_and_says_why(monkeypatch):
    monkeypatch.setattr(cupti, "_recorder", None)
    monkeypatch.setattr(cupti, "_why_not", None)
    monkeypatch.setattr(cupti, "library_paths", lambda: ["/nowhere/libcupti.so.99"])
    recorder, why = cupti.recorder()
    assert recorder is None
    assert "CUPTI could not be loaded" in why and "/nowhere/libcupti.so.99" in why
