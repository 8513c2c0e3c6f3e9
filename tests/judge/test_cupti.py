"""The judge's own CUPTI reader: which GPU work belongs to which launch, and the walk over CUPTI's records.

The library is replaced by a stand-in that fills the buffers CUPTI would, so
the record layout, the callbacks and the windows are all exercised on a CPU.
"""

import ctypes
import functools
import struct

import pytest

from drill.judge import cupti


def mark(value: int, at: int, stream: int = 7, call: int = 0) -> cupti.Span:
    return (cupti.MEMSET, at, at + 1, value, cupti.MARK_BYTES, stream, call)


def work(
    kind: int, start: int, end: int, value: int = 0, nbytes: int = 0, stream: int = 7, call: int = 0
) -> cupti.Span:
    return (kind, start, end, value, nbytes, stream, call)


def call(correlation: int, thread: int, kind: int = cupti.RUNTIME) -> cupti.Span:
    """A CUDA call's record: only its kind, correlation id (as `call`) and thread (as `stream`) are written."""
    return (kind, 0, 0, 0, 0, thread, correlation)


def test_work_belongs_to_the_markers_it_starts_between_and_the_flush_between_them_to_none():
    spans = [
        work(cupti.CONCURRENT_KERNEL, 10, 90, 0, 0),  # the flush before the first launch
        mark(cupti.BEGIN, 100),
        work(cupti.CONCURRENT_KERNEL, 140, 165, 0, 0),  # listed out of order: a second kernel of the same launch
        work(cupti.CONCURRENT_KERNEL, 120, 130, 0, 0),
        mark(cupti.END, 170),
        work(cupti.CONCURRENT_KERNEL, 210, 290, 0, 0),  # a flush
        work(cupti.MEMSET, 295, 296, 0, cupti.MARK_BYTES),  # a memset of the marker's size but not its value
        mark(cupti.BEGIN, 300),
        work(cupti.MEMSET, 310, 330, cupti.BEGIN, 4096),  # the launch's own memset, of another size
        mark(cupti.END, 340),
        mark(cupti.BEGIN, 500),
        mark(cupti.END, 600),  # a launch with nothing recorded
        work(cupti.CONCURRENT_KERNEL, 605, 680, 0, 0),  # after the last marker: no launch's
    ]
    assert cupti.between_marks(spans) == pytest.approx([35e-6, 20e-6, None])


RECORD_BYTES = 112  # up to a kernel record's name (a null pointer here) at 104


class FakeCupti:
    """Just enough of libcupti: callbacks, a clock, and records written into the buffers it is handed."""

    def __init__(self, records: list[cupti.Span]) -> None:
        self.records = records  # (kind, start, end, memset value, memset bytes, stream)
        self.enabled: set[int] = set()
        self.registered = 0
        self.pending: list[cupti.Span] = []
        for name in ("cuptiActivityGetNextRecord", "cuptiGetResultString"):
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
        """The launch's work: the next records, stamped as CUPTI would (none once they run out)."""
        if self.enabled and self.records:
            self.pending.append(self.records.pop(0))

    def cuptiActivityFlushAll(self, flag: int) -> int:
        assert flag == cupti.FLUSH_FORCED
        buffer, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
        self.requested(ctypes.byref(buffer), ctypes.byref(size), ctypes.byref(most))
        blob = b"".join(self._record(*span) for span in self.pending)
        assert len(blob) <= size.value and buffer.value % 8 == 0
        ctypes.memmove(buffer.value, blob, len(blob))
        self.completed(None, 0, buffer.value, size.value, len(blob))
        self.pending.clear()
        return 0

    @staticmethod
    def _record(kind: int, start: int, end: int, value: int, nbytes: int, stream: int, correlation: int) -> bytes:
        if kind in (cupti.DRIVER, cupti.RUNTIME):  # CUpti_ActivityAPI: thread at 28, correlation id at 32
            return struct.pack("<IIQQIIII72x", kind, 0, start, end, 0, stream, correlation, 0)
        # a memset or copy keeps its stream at 40 and correlation id at 44; a kernel at 48 and 92
        return struct.pack(
            "<IIQQQ8xIII40xI16x", kind, value, nbytes, start, end, stream, correlation, stream, correlation
        )

    def _cuptiActivityGetNextRecord(self, buffer: int, valid: int, record) -> int:
        current = record._obj
        at = buffer if not current.value else current.value + RECORD_BYTES
        if at >= buffer + valid:
            return 12  # CUPTI_ERROR_MAX_LIMIT_REACHED
        current.value = at
        return 0

    def _cuptiGetResultString(self, code: int, text) -> int:
        text._obj.value = b"CUPTI_ERROR_UNKNOWN"
        return 0


def test_each_launch_reads_the_records_of_its_own_work_from_cuptis_buffers():
    lib = FakeCupti(
        [
            work(cupti.CONCURRENT_KERNEL, 20, 40, 0, 0),  # each repetition's setup: an L2 flush
            work(cupti.MEMSET, 100, 101, cupti.BEGIN, cupti.MARK_BYTES),
            work(cupti.CONCURRENT_KERNEL, 120, 150, 0, 0),  # launch 1: a kernel of 30 ns
            work(cupti.MEMSET, 160, 161, cupti.END, cupti.MARK_BYTES),
            work(cupti.CONCURRENT_KERNEL, 220, 240, 0, 0),
            work(cupti.MEMSET, 300, 301, cupti.BEGIN, cupti.MARK_BYTES),
            work(cupti.MEMSET, 310, 315, 0, 64),  # launch 2: a memset, a kind the judge does not time, and a copy
            work(7, 320, 390, 0, 0),
            work(cupti.MEMCPY, 395, 435, 0, 0),
            work(cupti.MEMSET, 440, 441, cupti.END, cupti.MARK_BYTES),
        ]
    )
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    launches = iter([[lib.launch], [lib.launch, lib.launch, lib.launch]])

    def fn() -> None:
        for step in next(launches):
            step()

    def mark(value: int) -> None:
        assert lib.records[0][3] == value  # the marker the GPU records next is the one asked for
        lib.launch()

    times = recorder.launch_times(fn, lib.launch, 2, lambda: None, mark)
    assert times == pytest.approx([30e-6, 45e-6])
    assert lib.enabled == set() and lib.registered == 1  # recording stops with the repetitions
    assert recorder._buffers == {} and recorder._full == []  # every buffer handed back


def test_repetitions_whose_markers_were_not_recorded_have_no_figure():
    lib = FakeCupti([work(cupti.MEMSET, 1, 2, cupti.BEGIN, cupti.MARK_BYTES), work(cupti.CONCURRENT_KERNEL, 3, 9)])
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    times = recorder.launch_times(lambda: None, lambda: None, 3, lambda: None, lambda value: lib.launch())
    assert times == [None, None, None]  # a BEGIN with no END closes nothing


def test_a_cupti_error_names_the_call_and_stops_recording():
    lib = FakeCupti([])
    lib.cuptiActivityFlushAll = lambda flag: 17
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    with pytest.raises(cupti.CuptiError, match="cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN"):
        recorder.launch_times(lambda: None, lambda: None, 2, lambda: None, lambda value: None)
    assert lib.enabled == set()


def test_no_cupti_library_means_no_recorder_and_says_why(monkeypatch):
    monkeypatch.setattr(cupti, "_recorder", None)
    monkeypatch.setattr(cupti, "_why_not", None)
    monkeypatch.setattr(cupti, "library_paths", lambda: ["/nowhere/libcupti.so.99"])
    recorder, why = cupti.recorder()
    assert recorder is None
    assert "CUPTI could not be loaded" in why and "/nowhere/libcupti.so.99" in why


def test_work_on_the_judges_stream_alone_passes_the_audit_and_other_streams_are_named():
    own = [mark(cupti.AUDIT, 1), work(cupti.CONCURRENT_KERNEL, 5, 9), mark(cupti.BEGIN, 10), mark(cupti.END, 20)]
    assert cupti.stray_work(own) == ""
    one = own + [work(cupti.CONCURRENT_KERNEL, 12, 30, stream=9), work(cupti.MEMCPY, 31, 40, stream=9)]
    words = cupti.stray_work(one)
    assert "on another stream (1 kernel, 1 copy)" in words and "torch.cuda.current_stream()" in words
    two = one + [work(cupti.CONCURRENT_KERNEL, 41, 50, stream=11), work(cupti.CONCURRENT_KERNEL, 51, 60, stream=11)]
    assert "2 other streams (3 kernels, 1 copy)" in cupti.stray_work(two)
    assert cupti.stray_work(one[1:]) == ""  # no audit marker recorded: nothing to tell the judge's stream by


def test_records_carry_the_stream_and_the_call_each_kind_keeps_at_its_own_offsets():
    lib = FakeCupti(
        [
            work(cupti.MEMSET, 1, 2, 5, 64, stream=3, call=40),
            work(cupti.CONCURRENT_KERNEL, 3, 9, stream=12, call=41),
            call(40, thread=1234, kind=cupti.DRIVER),
            call(41, thread=99),
        ]
    )
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    recorder.start(cupti.AUDIT_KINDS)
    for _ in range(4):
        lib.launch()
    assert recorder.stop() == [(cupti.MEMSET, 1, 2, 5, 64, 3, 40), (cupti.CONCURRENT_KERNEL, 3, 9, 0, 0, 12, 41)]
    assert recorder.threads == {40: 1234, 41: 99}


def test_work_asked_for_from_another_thread_is_named_whatever_its_stream():
    spans = [mark(cupti.AUDIT, 1, call=1), work(cupti.CONCURRENT_KERNEL, 5, 9, call=2)]
    threads = {1: 500, 2: 500}
    assert cupti.stray_work(spans, threads) == ""
    late = spans + [work(cupti.CONCURRENT_KERNEL, 10, 30, call=3), work(cupti.MEMSET, 31, 33, call=4)]
    words = cupti.stray_work(late, {**threads, 3: 777, 4: 777})
    assert "from another thread (1 kernel, 1 memset)" in words and "on another stream" not in words
    both = late + [work(cupti.CONCURRENT_KERNEL, 40, 50, stream=9, call=5)]
    words = cupti.stray_work(both, {**threads, 3: 777, 4: 777, 5: 888})
    assert "on another stream (1 kernel) and from 2 other threads (2 kernels, 1 memset)" in words
    assert cupti.stray_work(late, {}) == ""  # no record of the calls: the thread cannot be told


def test_an_audit_records_through_a_launchs_timing_and_names_the_work_hidden_on_another_stream():
    lib = FakeCupti(
        [
            mark(cupti.AUDIT, 1),
            work(cupti.CONCURRENT_KERNEL, 2, 8),  # an untimed launch before the timing: the audit's, not the timing's
            mark(cupti.BEGIN, 10),
            work(cupti.CONCURRENT_KERNEL, 11, 15),
            mark(cupti.END, 16),
            work(cupti.CONCURRENT_KERNEL, 17, 90, stream=9),  # the rest of the work, after the END marker
        ]
    )
    recorder = cupti.Recorder(lib)  # type: ignore[arg-type]
    audit = cupti.StreamAudit(recorder, lambda value: lib.launch())
    lib.launch()
    times = recorder.launch_times(lambda: lib.launch(), lambda: None, 1, lambda: None, lambda value: lib.launch())
    assert times == pytest.approx([4e-6])  # the timing counts what started between its own markers
    assert lib.enabled == set(cupti.AUDIT_KINDS)  # still recording: the audit is open
    lib.launch()
    assert "on another stream (1 kernel)" in audit.finish(lambda: None)
    assert lib.enabled == set() and lib.registered == 1
