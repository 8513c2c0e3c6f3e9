"""The judge's reading of the profiler: each timed launch's GPU work, from the records on the GPU."""

import importlib.util
from types import SimpleNamespace

import pytest

# torch is imported by the tests, not at collection, so only the worker that runs them pays for it
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (pip install 'drill[kernels]')"),
    pytest.mark.xdist_group("torch"),
]


def label() -> str:
    from drill.judge.profiled import LAUNCH_LABEL

    return LAUNCH_LABEL


def launch_times(events: list[SimpleNamespace], reps: int) -> list[float] | None:
    from drill.judge.profiled import launch_times

    return launch_times(events, reps)


def record(name: str, start: float, end: float, device: str = "CUDA") -> SimpleNamespace:
    from torch.autograd import DeviceType

    span = SimpleNamespace(start=start, end=end, elapsed_us=lambda: end - start)
    return SimpleNamespace(name=name, device_type=getattr(DeviceType, device), time_range=span, device_time_total=0.0)


def timeline() -> list[SimpleNamespace]:
    """Two launches, each after a flush: the second launch runs a memset and two kernels."""
    return [
        record(label(), 1.0, 300.0, "CPU"),  # the CPU side: CUPTI tied no kernel to it
        record("reduce_kernel (the L2 flush)", 0.0, 40.0),
        record(label(), 50.0, 59.75),
        record("softmax_whole_row", 50.0, 59.75),
        record("reduce_kernel (the L2 flush)", 100.0, 140.0),
        record(label(), 150.0, 170.0),
        record("Memset (Device)", 150.0, 151.0),
        record("pass_one", 152.0, 160.0),
        record("pass_two", 163.0, 170.0),
    ]


def test_each_launch_gets_the_gpu_work_inside_its_range_and_nothing_of_the_flush():
    times = launch_times(timeline(), reps=2)
    assert times == pytest.approx([9.75e-3, (1.0 + 8.0 + 7.0) * 1e-3])  # ms; the gap between passes not billed


def test_most_launches_recorded_is_enough_and_fewer_gives_no_figure():
    def launches(n: int, recorded: set[int]) -> list[SimpleNamespace]:
        events = []
        for i in range(n):
            events.append(record("flush", 100.0 * i, 100.0 * i + 40))
            if i in recorded:
                events.append(record(label(), 100.0 * i + 50, 100.0 * i + 60))
            events.append(record("kernel", 100.0 * i + 50, 100.0 * i + 60))
        return events

    assert launch_times(launches(10, set(range(10)) - {3, 7}), reps=10) == pytest.approx([0.01] * 8)
    assert launch_times(launches(10, {0, 1, 2, 3}), reps=10) is None
    assert launch_times(launches(4, {0, 1}), reps=4) is None  # fewer than three


def test_a_range_with_no_work_in_it_is_not_a_launch_of_no_time():
    events = [e for e in timeline() if e.name != "softmax_whole_row"]
    assert launch_times(events, reps=2) is None  # one launch left: too few to stand for two


def test_the_event_pairs_cost_comes_off_each_figure_but_never_more_than_half():
    from drill.judge.measure import less_overhead

    assert less_overhead([0.130, 0.2, 0.0031], 0.003) == pytest.approx([0.127, 0.197, 0.00155])
    assert less_overhead([0.130], 0.0) == [0.130]


def test_what_the_judge_imports_for_a_triton_card_is_left_out_of_its_collections(monkeypatch):
    """The judge collects garbage after every case; a full pass over torch and triton took 0.1 s each time."""
    import gc
    import sys
    import types

    from drill.judge import runtime as judge_runtime

    monkeypatch.setenv("DRILL_JUDGE_CPU", "1")
    if "triton" not in sys.modules:  # triton's own import is not what is checked here, and it is slow
        monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(__version__="(stand-in)"))
    runtime = judge_runtime.Runtime(None)
    before = gc.get_freeze_count()
    try:
        assert runtime.ensure_torch(lambda event: None)
        assert gc.get_freeze_count() > before + 10_000  # torch's objects (and triton's), frozen once imported
        frozen = gc.get_freeze_count()
        assert runtime.ensure_torch(lambda event: None)
        assert gc.get_freeze_count() == frozen  # once
    finally:
        gc.unfreeze()
