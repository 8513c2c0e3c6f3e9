"""The judge's reading of the profiler: each timed launch's GPU work, from the records on the GPU."""

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from torch.autograd import DeviceType  # noqa: E402

from drill.kernel.measure import LAUNCH_LABEL, launch_times  # noqa: E402


def record(name: str, start: float, end: float, device: object = DeviceType.CUDA) -> SimpleNamespace:
    span = SimpleNamespace(start=start, end=end, elapsed_us=lambda: end - start)
    return SimpleNamespace(name=name, device_type=device, time_range=span, device_time_total=0.0)


def timeline() -> list[SimpleNamespace]:
    """Two launches, each after a flush: the second launch runs a memset and two kernels."""
    return [
        record(LAUNCH_LABEL, 1.0, 300.0, DeviceType.CPU),  # the CPU side: CUPTI tied no kernel to it
        record("reduce_kernel (the L2 flush)", 0.0, 40.0),
        record(LAUNCH_LABEL, 50.0, 59.75),
        record("softmax_whole_row", 50.0, 59.75),
        record("reduce_kernel (the L2 flush)", 100.0, 140.0),
        record(LAUNCH_LABEL, 150.0, 170.0),
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
                events.append(record(LAUNCH_LABEL, 100.0 * i + 50, 100.0 * i + 60))
            events.append(record("kernel", 100.0 * i + 50, 100.0 * i + 60))
        return events

    assert launch_times(launches(10, set(range(10)) - {3, 7}), reps=10) == pytest.approx([0.01] * 8)
    assert launch_times(launches(10, {0, 1, 2, 3}), reps=10) is None
    assert launch_times(launches(4, {0, 1}), reps=4) is None  # fewer than three


def test_a_range_with_no_work_in_it_is_not_a_launch_of_no_time():
    events = [e for e in timeline() if e.name != "softmax_whole_row"]
    assert launch_times(events, reps=2) is None  # one launch left: too few to stand for two
