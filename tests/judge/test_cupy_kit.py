"""CuPy's kit, its checks run with NumPy in CuPy's place: the same verdicts as torch's kit gives."""

import math

import numpy as np
import pytest

from drill.judge.cupy_kit import CupyKit
from drill.judge.kitbase import GUARD_ELEMENTS, HOST_CHECK_ELEMENTS, OUTPUT_GUARD


@pytest.fixture
def kit():
    return CupyKit(np)


def test_inputs_are_fresh_each_time_with_a_nan_guard_after_them(kit):
    a, b = kit.randn(3, 5), kit.randn(3, 5)
    assert a.shape == (3, 5) and a.dtype == np.float32 and not np.array_equal(a, b)
    base = a.base if a.base is not None else a
    while base.base is not None:
        base = base.base
    assert base.size == 15 + GUARD_ELEMENTS and np.isnan(base[15:]).all()


def test_whole_inputs_are_scaled_and_rounded(kit):
    x = kit.randn(10_000, scale=8.0, whole=True)
    assert np.array_equal(x, np.round(x)) and x.std() > 4


def test_outputs_start_as_nan_and_a_write_past_the_end_is_named(kit):
    kit.begin_case()
    out = kit.output(4, 8)
    assert np.isnan(out).all() and kit.check_guards() is None
    out[...] = 1.0
    base = out.base
    while base.base is not None:
        base = base.base
    base[32 + 2] = 0.0  # the third element past the end
    assert (
        kit.check_guards() == "wrote past the end of output 1: element 34 (the output has 32), 1 guard element changed"
    )
    kit.poison_outputs()
    assert np.isnan(out).all() and kit.check_guards() is None and base[40] == OUTPUT_GUARD


def test_allclose_names_the_first_wrong_element_and_never_passes_nan(kit):
    ref = np.arange(12, dtype=np.float64).reshape(3, 4)
    got = ref.astype(np.float32)
    assert kit.allclose(got, ref, rtol=0, atol=0).ok
    got[1, 2] = 99.0
    got[2, 3] = np.nan
    check = kit.allclose(got, ref, rtol=1e-3, atol=1e-6, label="out")
    assert not check.ok
    assert check.message.startswith("2 of 12 elements wrong; first out[1, 2] = 99, expected 6")
    nan_only = ref.astype(np.float32)
    nan_only[0, 0] = np.nan
    assert "NaN: never written" in kit.allclose(nan_only, ref, rtol=1, atol=1).message
    assert not kit.allclose(got[:2], ref, rtol=1, atol=1).ok  # a size mismatch never passes


def test_exact_compares_a_transposed_reference_in_its_own_order(kit):
    x = kit.randn(33, 65)
    ref = kit.float64(x).T
    assert kit.exact(np.ascontiguousarray(x.T), ref).ok
    wrong = np.ascontiguousarray(x.T).copy()
    wrong[64, 32] += 1.0
    check = kit.exact(wrong, ref)
    assert not check.ok and "first out[64, 32]" in check.message


@pytest.mark.parametrize("n", [1000, HOST_CHECK_ELEMENTS + 1])
def test_sum_and_norm_accumulate_in_float64(kit, n):
    x = kit.randn(n)
    assert float(kit.sum64(x)) == pytest.approx(float(np.sum(x, dtype=np.float64)), abs=1e-9)
    assert kit.norm64(x) == pytest.approx(math.sqrt(float(np.sum(x.astype(np.float64) ** 2))), rel=1e-6)
    assert kit.allclose(
        np.array([float(kit.sum64(x))], np.float32), np.array([float(kit.sum64(x))]), rtol=1e-6, atol=0
    ).ok


def test_kernel_arguments_are_pointers_and_sized_integers(kit):
    x = kit.scratch(4)
    ptr, n = kit.args(x, kit.int32(4))
    assert ptr == np.uint64(x.ctypes.data) and n.dtype == np.int32
    with pytest.raises(TypeError, match="C type"):
        kit.args(x, 4)


def test_the_cuda_harnesses_use_only_what_both_kits_have(kit):
    """reduce and transpose: inputs, reference and check through CuPy's kit (NumPy here), right and wrong."""
    from drill import paths
    from drill.judge.judging import load_harness

    reduce = load_harness(str(paths.kernels_dir() / "harness" / "reduce_harness.py"))
    for case in reduce.cases(kit):
        inputs = reduce.make_inputs(case, kit)
        ref = reduce.reference(inputs, kit)
        right = np.array([np.sum(inputs["x"], dtype=np.float32)], np.float32)
        assert reduce.compare(right[0], ref, inputs, kit).ok, case["name"]
        assert not reduce.compare(right[0] + 1000, ref, inputs, kit).ok, case["name"]
    transpose = load_harness(str(paths.kernels_dir() / "harness" / "transpose_harness.py"))
    for case in transpose.cases(kit):
        kit.begin_case()
        inputs = transpose.make_inputs(case, kit)
        ref = transpose.reference(inputs, kit)
        inputs["out"][...] = inputs["x"].T
        assert kit.check_guards() is None and transpose.compare(inputs["out"], ref, inputs, kit).ok, case["name"]
        inputs["out"][-1, -1] = 0.5
        assert not transpose.compare(inputs["out"], ref, inputs, kit).ok, case["name"]


class _TorchKitStub:
    """torch's kit as the runtime uses it for torch's own time: fresh inputs, one measurement."""

    name = "torch"

    def __init__(self) -> None:
        self.measured = 0

    def begin_case(self) -> None:
        pass

    def measure(self, fn, poison, budget_s):
        from types import SimpleNamespace

        fn()
        self.measured += 1
        return SimpleNamespace(ms=0.5, host_us=7.0)

    def release(self) -> None:
        pass


class _SumHarness:
    def make_inputs(self, case, kit):
        return {"n": case["n"]}

    def baseline(self, inputs, kit):
        return lambda: sum(range(inputs["n"]))


def _runtime_without_torch(tmp_path, monkeypatch):
    from drill.judge import cudadrv
    from drill.judge import runtime as judge_runtime

    monkeypatch.setattr(
        cudadrv, "device_identity", lambda device=0: {"name": "H200", "uuid": "ab", "total_memory": 141}
    )
    runtime = judge_runtime.Runtime(tmp_path / "gpu_calibration.json", torch_now=False)
    kit = _TorchKitStub()

    def torch_kit(self):
        self.torch = "torch, imported"
        self._kit = kit
        return kit

    monkeypatch.setattr(judge_runtime.Runtime, "torch_kit", torch_kit)
    return runtime, kit


def test_a_judge_without_torch_leaves_torchs_own_time_for_after_the_verdict_and_keeps_it(tmp_path, monkeypatch):
    runtime, kit = _runtime_without_torch(tmp_path, monkeypatch)
    assert runtime.torch_later("reduce", "n=2^28", _SumHarness(), {"n": 1000}) is True
    assert kit.measured == 0 and runtime.torch is None  # nothing of torch's before the verdict
    events = []
    runtime.time_torch_now(events.append)
    assert events == [{"event": "torch_time", "name": "n=2^28", "torch_ms": 0.5, "torch_host_us": 7.0}]
    assert runtime.saved_baseline("reduce", "n=2^28") == (0.5, 7.0)  # kept for this GPU: the next run has it
    assert runtime.torch_later("reduce", "n=2^27", _SumHarness(), {"n": 10}) is False  # torch is here now
    runtime.time_torch_now(events.append)
    assert len(events) == 1


def test_torchs_own_time_that_cannot_be_taken_is_said_and_nothing_is_kept(tmp_path, monkeypatch):
    runtime, _ = _runtime_without_torch(tmp_path, monkeypatch)

    class Broken(_SumHarness):
        def baseline(self, inputs, kit):
            raise RuntimeError("no such op here")

    runtime.torch_later("reduce", "n=2^28", Broken(), {"n": 10})
    events = []
    runtime.time_torch_now(events.append)
    [event] = events
    assert event["torch_ms"] is None and "no such op here" in event["message"]
    assert runtime.saved_baseline("reduce", "n=2^28") is None


def test_a_judge_meant_to_start_with_cupy_starts_with_torch_when_cupy_fails_here(monkeypatch):
    """CuPy installed but broken (a build for another CUDA, say): the GPU is still judged, with torch's kit."""
    from types import SimpleNamespace

    from drill.judge import cudadrv
    from drill.judge import runtime as judge_runtime

    monkeypatch.setattr(judge_runtime, "cuda_device_count", lambda: 1)
    monkeypatch.setattr(cudadrv, "retain_primary_context", lambda device=0: None)
    monkeypatch.setattr(cudadrv, "compute_capability", lambda device=0: (9, 0))
    monkeypatch.setattr(cudadrv, "device_identity", lambda device=0: {"name": "H100", "sm_count": 132})
    monkeypatch.setattr(judge_runtime, "cupy_installed", lambda: True)
    started = []

    def broken(self):
        raise ImportError("libcudart.so.12: cannot open shared object file")

    def torch_kit(self):
        started.append("torch")
        self._kit = SimpleNamespace(name="torch")
        return self._kit

    monkeypatch.setattr(judge_runtime.Runtime, "cupy_kit", broken)
    monkeypatch.setattr(judge_runtime.Runtime, "torch_kit", torch_kit)
    runtime = judge_runtime.Runtime(None, torch_now=False)
    assert runtime.gpu and started == ["torch"] and "libcudart" in runtime.cupy_broken
    assert runtime.kit("cuda").name == "torch"  # and every CUDA card after it
    assert runtime.device_words == "H100 (sm_90, 132 SMs)"


def test_a_run_in_a_judge_without_torch_sends_its_timing_first_and_torchs_own_time_after(tmp_path, monkeypatch):
    """The judge's timing step with the runtime above: the figure goes out without torch's time, marked to
    follow; torch is timed only when the runtime is asked to, after the verdict."""
    from drill.judge.judging import Judge
    from tests.judge.test_bounds import FakeKit, fake_harness

    runtime, torch_kit = _runtime_without_torch(tmp_path, monkeypatch)
    monkeypatch.setattr(type(runtime), "ceilings", lambda self, kit, compute=False: {"gbps": 4220.0})
    log: list[str] = []
    kit = FakeKit(log)
    harness = fake_harness(log, wrong=False)
    events: list[dict] = []
    Judge(runtime)._time("reduce", harness, object(), kit, events.append, "first", False)
    [timing] = [e for e in events if e["event"] == "timing"]
    assert timing["torch_later"] is True and timing["torch_ms"] is None and timing["vs_torch"] is None
    assert timing["gbps"] > 0 and "measure baseline" not in log and torch_kit.measured == 0
    runtime.time_torch_now(events.append)
    assert events[-1] == {"event": "torch_time", "name": "n=2^28", "torch_ms": 0.5, "torch_host_us": 7.0}
