"""The judge's honesty checks on a CPU, with fake timings and fake outputs: physical bounds, the timed output."""

from types import SimpleNamespace

import pytest

from drill.judge.calibration import FP8_CEILING, MATMUL_CEILING, compute_ceiling
from drill.judge.judging import Judge
from drill.judge.timing_event import timing_event
from drill.kernel.verdict import (
    BOUND_SLACK,
    Timing,
    VerdictBuilder,
    format_verdict,
    impossible_reason,
    suggest_kernel_grade,
)

GIB = 2**30
COPY, READ = 4220.0, 4480.0  # GB/s, an H200's copy and pure-read ceilings


def timing(ratio: float, *, read_only: bool = False, dram_bytes: int = 0, ms: float | None = None) -> Timing:
    """A reduce-like (1 GiB read) or copy-like (1 GiB read + 1 GiB written) launch at `ratio` x the copy ceiling."""
    moved = GIB if read_only else 2 * GIB
    ms = moved / (ratio * COPY * 1e9) * 1e3 if ms is None else ms
    gbps = moved / (ms * 1e-3) / 1e9 if ms else float("inf")
    return Timing("n", ms, gbps, bytes=moved, dram_bytes=dram_bytes or moved, ceiling_gbps=COPY, read_ceiling_gbps=READ)


# -- the bound ------------------------------------------------------------------------------------
@pytest.mark.parametrize("ratio", [0.5, 1.0, 1.04])
def test_figures_up_to_a_few_per_cent_over_the_copy_ceiling_are_measurements(ratio):
    assert impossible_reason(timing(ratio)) == ""


def test_a_pure_read_is_held_against_the_read_ceiling():
    # 1.10x the copy figure is 1.036x the read figure: a fast read-only kernel, not a cheat
    assert impossible_reason(timing(1.10, read_only=True)) == ""
    assert impossible_reason(timing(1.15, read_only=True)) != ""


def test_twice_the_ceiling_is_impossible_and_says_why():
    reason = impossible_reason(timing(2.01))
    assert reason.startswith("2.01× the copy ceiling: the kernel cannot have moved the bytes it claims")
    assert "4,220 GB/s for a copy" in reason and "4,480 GB/s for a pure read" in reason


def test_the_slack_is_measured_against_the_faster_ceiling():
    limit = READ * (1 + BOUND_SLACK) / COPY
    assert impossible_reason(timing(limit * 0.999)) == ""
    assert impossible_reason(timing(limit * 1.001)) != ""


def test_writes_that_fit_in_l2_need_not_reach_memory_within_the_launch():
    # 16 MB in, 16 MB out: the output can sit in L2, so 1.6x the copy figure can be real
    small = 32 * 2**20
    t = timing(1.6, dram_bytes=small // 2)
    t.bytes = small
    t.ms = small / (1.6 * COPY * 1e9) * 1e3
    t.gbps = 1.6 * COPY
    assert impossible_reason(t) == ""
    t.ms /= 2  # but not 3.2x: even the reads alone could not have arrived that fast
    t.gbps *= 2
    assert impossible_reason(t).startswith("3.20× the copy ceiling")


def test_a_launch_that_took_no_time_is_impossible():
    assert impossible_reason(timing(1.0, ms=0.0)).startswith("inf× the copy ceiling")


def test_without_a_ceiling_nothing_is_judged():
    t = timing(5.0)
    t.ceiling_gbps = None
    assert impossible_reason(t) == ""


# -- what the verdict does with an impossible figure ---------------------------------------------
def timing_event_at(ratio: float) -> dict:
    t = timing(ratio)
    return {
        "event": "timing",
        "name": "n=2^28",
        "ms": t.ms,
        "gbps": t.gbps,
        "bytes": t.bytes,
        "dram_bytes": t.dram_bytes,
        "ceiling_gbps": COPY,
        "read_ceiling_gbps": READ,
        "pct_of_ceiling": 100 * ratio,
        "torch_ms": 2 * t.ms,
        "vs_torch": 2.0,
        "host_us": 14.5,
    }


def run_events(*timings: dict):
    b = VerdictBuilder("reduce")
    for e in (
        {"event": "started", "device": "H200", "gpu": True},
        {"event": "compiled", "ok": True},
        {"event": "case", "name": "n=1", "ok": True},
        {"event": "case", "name": "timing n=2^28", "ok": True},
        *timings,
        {"event": "finished", "seconds": 1.0},
    ):
        b.feed(e)
    return b.result()


def test_an_impossible_figure_is_never_scored():
    v = run_events(timing_event_at(2.01))
    assert v.correct is True  # the outputs were right; the figure is what cannot be
    assert v.pct_of_ceiling is None and v.vs_torch is None
    assert v.impossible and v.impossible[0].startswith("n=2^28: 2.01× the copy ceiling")
    assert v.errors[0].startswith("timing n=2^28: impossible measurement: 2.01× the copy ceiling")
    assert v.exit_code() == 1 and suggest_kernel_grade(v, 90) == 1
    data = v.to_json()
    assert data["pct_of_ceiling"] is None and data["impossible"] == v.impossible
    assert data["timings"][0]["impossible"].startswith("2.01×")
    assert "IMPOSSIBLE, not scored: 2.01× the copy ceiling" in format_verdict(v)


def test_a_real_figure_is_scored_with_the_host_overhead_apart():
    v = run_events(timing_event_at(0.96))
    assert v.errors == [] and v.impossible == []
    assert v.pct_of_ceiling == pytest.approx(96.0) and v.vs_torch == pytest.approx(2.0)
    assert v.host_us == pytest.approx(14.5) and v.to_json()["host_launch_us"] == pytest.approx(14.5)
    assert suggest_kernel_grade(v, 90) == 5
    assert "host launch overhead 14.5 µs per call, not in the time" in format_verdict(v)


def test_a_plausible_figure_with_work_on_another_stream_is_never_scored():
    hidden = "the launch put GPU work on another stream (2 kernels), outside the stream the judge times"
    v = run_events({**timing_event_at(0.8), "stray_work": hidden})
    assert v.correct is True and v.pct_of_ceiling is None and v.vs_torch is None
    assert v.impossible == [f"n=2^28: {hidden}"]
    assert v.exit_code() == 1 and suggest_kernel_grade(v, 50) == 1
    assert f"IMPOSSIBLE, not scored: {hidden}" in format_verdict(v)


def test_the_timing_event_carries_what_the_stream_audit_found():
    harness = SimpleNamespace(bytes_moved=lambda case: GIB, bytes_written=lambda case: 0)
    mine = SimpleNamespace(ms=1.0, reps=5, host_us=3.0, method="events", why="", less_us=3.0, stray_work="two kernels")
    event = timing_event("n", harness, {}, mine, (2.0, 4.0), {"gbps": COPY, "read_gbps": READ}, 50 * 2**20)
    assert event["stray_work"] == "two kernels"
    del mine.stray_work  # a measurement taken without the audit (the baseline)
    assert timing_event("n", harness, {}, mine, (2.0, 4.0), {"gbps": COPY}, 0)["stray_work"] == ""


# -- the timed output, checked after the timing ----------------------------------------------------
class FakeKit:
    name = "fake"

    def __init__(self, log):
        self.log = log
        self.l2_bytes = 50 * 2**20

    @staticmethod
    def to_torch(inputs):
        return inputs

    def begin_case(self):
        self.log.append("begin")

    def measure(self, fn, prepare=None, **options):
        kind = "baseline" if options.get("poison") is False else "learner"
        self.log.append(f"measure {kind}")
        fn()
        return SimpleNamespace(ms=0.25, reps=40, host_us=9.0)

    def synchronize(self):
        self.log.append("sync")

    def check_guards(self):
        return None


def fake_harness(log, *, wrong: bool):
    drawn = []

    def make_inputs(case, kit):
        drawn.append(object())  # fresh inputs each time: nothing to cache across runs
        log.append("inputs")
        return {"x": drawn[-1]}

    def launcher(program, inputs, kit):
        return SimpleNamespace(run=lambda: log.append("run"), prepare=lambda: None, result=lambda: "out")

    def compare(result, ref, inputs, kit):
        log.append("compare")
        if wrong:
            return SimpleNamespace(ok=False, message="1 of 1 elements wrong", max_error=9.0, tolerance=0.1)
        return SimpleNamespace(ok=True, message="", max_error=0.0, tolerance=0.1)

    return SimpleNamespace(
        timing_cases=lambda kit: [{"name": "n=2^28", "n": 1 << 28}, {"name": "n=2^20", "n": 1 << 20}],
        make_inputs=make_inputs,
        launcher=launcher,
        reference=lambda inputs, kit: log.append("reference"),
        compare=compare,
        baseline=lambda inputs, kit: lambda: log.append("torch"),
        bytes_moved=lambda case: 4 * case["n"],
        bytes_written=lambda case: 0,
        drawn=drawn,
    )


def judge_time(harness, log, timing="first", fresh=False, kept=None):
    """The timing step with a fake kit; `kept`: torch's figures saved for this GPU, by (card, shape)."""
    kit = FakeKit(log)
    events = []
    Judge(fake_runtime(kit, kept))._time("reduce", harness, object(), kit, events.append, timing, fresh)
    return events


def fake_runtime(kit, kept=None):
    kept = {} if kept is None else kept
    return SimpleNamespace(
        calibrated=lambda compute=False: True,
        ceilings=lambda kit, compute=False: {"gbps": COPY, "read_gbps": READ},
        release_memory=lambda: None,
        saved_baseline=lambda card, shape: kept.get((card, shape)),
        save_baseline=lambda card, shape, figures: kept.__setitem__((card, shape), figures),
        torch_later=lambda card, shape, harness, case: False,  # torch is loaded: its time is taken in the run
        torch_kit=lambda: kit,
    )


def test_torch_is_timed_once_per_gpu_and_shape_unless_a_fresh_figure_is_asked_for():
    kept = {}
    log = []
    judge_time(fake_harness(log, wrong=False), log, kept=kept)
    assert log.count("measure baseline") == 1 and kept == {("reduce", "n=2^28"): (0.25, 9.0)}
    log.clear()
    events = judge_time(fake_harness(log, wrong=False), log, kept=kept)  # a new judge: the kept figure
    assert "measure baseline" not in log
    [timing] = [e for e in events if e["event"] == "timing"]
    assert timing["kit"] == "fake" and timing["torch_ms"] == 0.25
    log.clear()
    judge_time(fake_harness(log, wrong=False), log, fresh=True, kept=kept)
    assert log.count("measure baseline") == 1


def test_a_kernel_wrong_at_the_timed_size_is_wrong_and_gets_no_figure():
    log = []
    events = judge_time(fake_harness(log, wrong=True), log)
    [case] = [e for e in events if e["event"] == "case"]
    assert case["name"] == "timing n=2^28" and case["ok"] is False
    assert case["message"] == "wrong at the timed size n=2^28, though the small cases passed: 1 of 1 elements wrong"
    assert not any(e["event"] == "timing" for e in events)
    # the check comes after the timing (it costs no timed time), and PyTorch is not timed for a wrong kernel
    assert log == ["begin", "inputs", "measure learner", "run", "sync", "reference", "compare"]
    v = VerdictBuilder("reduce")
    for e in [{"event": "compiled", "ok": True}, {"event": "case", "name": "n=1", "ok": True}, *events]:
        v.feed(e)
    assert v.result().correct is False and v.result().timings == []


def test_a_right_kernel_is_checked_then_scored():
    log = []
    events = judge_time(fake_harness(log, wrong=False), log)
    kinds = [e["event"] for e in events]
    assert kinds == ["case_started", "case", "timing"]
    assert events[1] == {**events[1], "name": "timing n=2^28", "ok": True}
    t = events[2]
    assert t["bytes"] == t["dram_bytes"] == 4 << 28 and t["reps"] == 40 and t["host_us"] == 9.0
    assert t["read_ceiling_gbps"] == READ and t["vs_torch"] == pytest.approx(1.0)
    assert log.index("compare") < log.index("measure baseline")


def test_every_run_draws_fresh_inputs_at_the_timed_size():
    log = []
    harness = fake_harness(log, wrong=False)
    kit = FakeKit(log)
    judge = Judge(fake_runtime(kit))
    events = []
    for _ in range(3):
        judge._time("reduce", harness, object(), kit, events.append, "first", False)
    assert [e["event"] for e in events].count("timing") == 3
    assert len(harness.drawn) == 3 and len({id(x) for x in harness.drawn}) == 3
    assert log.count("measure baseline") == 1  # PyTorch's time at a shape is kept; the learner's never is


def test_the_l2_rule_counts_only_writes_beyond_the_cache():
    harness = SimpleNamespace(bytes_moved=lambda case: 32 << 20, bytes_written=lambda case: 16 << 20)
    mine = SimpleNamespace(ms=0.01, reps=10, host_us=5.0)
    small = timing_event("4096x1024", harness, {}, mine, (0.011, 4.0), {"gbps": COPY, "read_gbps": READ}, 50 << 20)
    assert small["dram_bytes"] == 16 << 20  # reads only: the output fits in L2
    big = timing_event("x", harness, {}, mine, (0.011, 4.0), {"gbps": COPY, "read_gbps": READ}, 8 << 20)
    assert big["dram_bytes"] == (16 << 20) + (8 << 20)


# -- compute-bound cards: TFLOPS against the measured matmul ceiling --------------------------------
MATMUL = 760.0  # TFLOPS, a torch.matmul ceiling of the order an H100 measures
GEMM_FLOPS = 2 * 4096**3


def gemm_timing(ratio: float) -> Timing:
    """A 4096^3 bf16 GEMM at `ratio` x the matmul ceiling (its bytes are far below the memory bound)."""
    ms = GEMM_FLOPS / (ratio * MATMUL * 1e12) * 1e3
    moved = 2 * 3 * 4096 * 4096
    return Timing(
        "4096x4096x4096 bf16", ms, moved / (ms * 1e-3) / 1e9, bytes=moved, dram_bytes=moved,
        ceiling_gbps=COPY, read_ceiling_gbps=READ, bound="compute", flops=GEMM_FLOPS,
        tflops=ratio * MATMUL, ceiling_tflops=MATMUL,
    )  # fmt: skip


@pytest.mark.parametrize("ratio", [0.5, 0.92, 1.0 + BOUND_SLACK - 0.01])
def test_gemm_figures_up_to_the_slack_over_the_matmul_ceiling_are_measurements(ratio):
    assert impossible_reason(gemm_timing(ratio)) == ""


def test_a_gemm_faster_than_the_matmul_ceiling_is_impossible():
    reason = impossible_reason(gemm_timing(1.2))
    assert reason.startswith("1.20× the matmul ceiling: the kernel cannot have done the arithmetic it claims")
    assert "912 TFLOPS claimed" in reason and "760 TFLOPS for torch.matmul" in reason
    # a result copied back from a cache: 32 MiB in about 10 µs is 13,700 TFLOPS of "GEMM"
    cached = gemm_timing(18.0)
    assert impossible_reason(cached).startswith("18.00× the matmul ceiling")


def test_the_memory_bound_still_holds_for_a_compute_bound_card():
    # a decode-like GEMM: 16 x 4096 x 4096 streams the 32 MiB weight; 10x the copy ceiling cannot be
    moved = 2 * (16 * 4096 + 4096 * 4096 + 16 * 4096)
    ms = moved / (10 * COPY * 1e9) * 1e3
    t = Timing("16x4096x4096 bf16", ms, moved / (ms * 1e-3) / 1e9, bytes=moved, dram_bytes=moved,
               ceiling_gbps=COPY, read_ceiling_gbps=READ, bound="compute", flops=2 * 16 * 4096 * 4096,
               ceiling_tflops=MATMUL)  # fmt: skip
    assert impossible_reason(t).startswith("10.00× the copy ceiling")


def gemm_harness():
    return SimpleNamespace(
        BOUND="compute",
        flops=lambda case: 2 * case["m"] * case["n"] * case["k"],
        bytes_moved=lambda case: 2 * (case["m"] * case["k"] + case["k"] * case["n"] + case["m"] * case["n"]),
        bytes_written=lambda case: 2 * case["m"] * case["n"],
    )


def test_a_compute_bound_card_is_scored_against_the_matmul_ceiling():
    case = {"m": 4096, "n": 4096, "k": 4096}
    mine = SimpleNamespace(ms=0.2, reps=20, host_us=6.0)
    ceilings = {"gbps": COPY, "read_gbps": READ, "tflops": MATMUL}
    e = timing_event("4096x4096x4096 bf16", gemm_harness(), case, mine, (0.18, 5.0), ceilings, 50 << 20)
    assert e["bound"] == "compute" and e["flops"] == GEMM_FLOPS
    assert e["tflops"] == pytest.approx(GEMM_FLOPS / 0.2e-3 / 1e12)  # 687 TFLOPS
    assert e["pct_of_ceiling"] == pytest.approx(100 * e["tflops"] / MATMUL)
    assert e["torch_tflops"] == pytest.approx(GEMM_FLOPS / 0.18e-3 / 1e12) and e["vs_torch"] == pytest.approx(0.9)
    v = run_events(e)
    assert v.errors == [] and v.pct_of_ceiling == pytest.approx(90.4, abs=0.1)
    assert suggest_kernel_grade(v, 80) == 5
    text = format_verdict(v)
    assert "687 TFLOPS" in text and "90.4 % of the measured matmul ceiling (760 TFLOPS)" in text
    assert v.to_json()["tflops"] == pytest.approx(687.2, abs=0.1)


def test_a_memory_bound_card_without_flops_is_scored_as_before():
    harness = SimpleNamespace(bytes_moved=lambda case: 2 * GIB, bytes_written=lambda case: GIB)
    mine = SimpleNamespace(ms=2 * GIB / (0.9 * COPY * 1e9) * 1e3, reps=10, host_us=5.0)
    e = timing_event("x", harness, {}, mine, (mine.ms, 4.0), {"gbps": COPY, "read_gbps": READ}, 50 << 20)
    assert e["bound"] == "memory" and e["flops"] == 0 and e["tflops"] is None
    assert e["pct_of_ceiling"] == pytest.approx(90.0)


def test_only_a_card_that_counts_flops_asks_for_a_compute_ceiling_and_an_fp8_card_for_fp8s():
    asked = []

    def ceilings(kit, compute=None):
        asked.append(compute)
        return {"gbps": COPY, "read_gbps": READ, **({compute.key: MATMUL} if compute else {})}

    runtime = SimpleNamespace(calibrated=lambda compute=None: True, ceilings=ceilings, release_memory=lambda: None)
    for harness in (
        fake_harness([], wrong=False),
        SimpleNamespace(**vars(fake_harness([], wrong=False)), flops=lambda c: 1),
        SimpleNamespace(**vars(fake_harness([], wrong=False)), flops=lambda c: 1, COMPUTE_CEILING="fp8_tflops"),
    ):
        Judge(runtime)._time("card", harness, object(), FakeKit([]), lambda e: None, "first", False)
    assert asked == [None, MATMUL_CEILING, FP8_CEILING]


def test_a_harness_naming_no_known_compute_ceiling_is_told_which_there_are():
    with pytest.raises(ValueError, match="COMPUTE_CEILING 'int4' is none of tflops, fp8_tflops"):
        compute_ceiling(SimpleNamespace(flops=lambda c: 1, COMPUTE_CEILING="int4"))


FP8_MATMUL = 1_400.0  # TFLOPS, a torch._scaled_mm ceiling of the order an H200 measures


def test_an_fp8_card_is_scored_against_the_fp8_matmul_ceiling_and_named_so():
    from drill.ui.verdict_view import one_line

    harness = SimpleNamespace(**vars(gemm_harness()), COMPUTE_CEILING="fp8_tflops")
    case = {"m": 4096, "n": 4096, "k": 4096}
    ceilings = {"gbps": COPY, "read_gbps": READ, "tflops": MATMUL, "fp8_tflops": FP8_MATMUL}
    ms = GEMM_FLOPS / (700.0 * 1e12) * 1e3  # 700 TFLOPS: past the bf16 ceiling, half of FP8's
    mine = SimpleNamespace(ms=ms, reps=20, host_us=6.0)
    event = timing_event("4096x4096x4096", harness, case, mine, (ms * 0.56, 5.0), ceilings, 50 << 20)
    assert event["ceiling_tflops"] == FP8_MATMUL and event["compute_ceiling"] == "FP8 matmul"
    assert event["pct_of_ceiling"] == pytest.approx(50.0)
    v = run_events(event)
    assert v.timing.impossible == ""  # above the bf16 ceiling, yet a measurement
    assert one_line(v) == "correct, 50 % of the FP8 matmul ceiling, 0.56× PyTorch"
    fast = timing_event("4096x4096x4096", harness, case, SimpleNamespace(ms=ms / 2.4, reps=20, host_us=6.0), None,
                        ceilings, 50 << 20)  # fmt: skip
    assert run_events(fast).timing.impossible.startswith("1.20× the FP8 matmul ceiling")
    assert "1,400 TFLOPS for torch._scaled_mm with row-wise scales" in run_events(fast).timing.impossible


def test_the_kernel_screen_names_the_matmul_ceiling_for_a_compute_bound_card():
    from drill.ui.verdict_view import one_line, render_verdict

    case = {"m": 4096, "n": 4096, "k": 4096}
    mine = SimpleNamespace(ms=0.2, reps=20, host_us=6.0)
    ceilings = {"gbps": COPY, "read_gbps": READ, "tflops": MATMUL}
    v = run_events(timing_event("4096x4096x4096 bf16", gemm_harness(), case, mine, (0.18, 5.0), ceilings, 50 << 20))
    assert one_line(v) == "correct, 90 % of the matmul ceiling, 0.90× PyTorch"
    panel = render_verdict(v, "", 80, 5).plain
    assert "687 TFLOPS" in panel and "90.4 % of 760 TFLOPS" in panel
    memory = run_events(timing_event_at(0.96))
    assert one_line(memory) == "correct, 96 % of the copy ceiling, 2.00× PyTorch"
    assert "TFLOPS" not in render_verdict(memory, "", 90, 5).plain


def test_a_saved_calibration_without_the_event_cost_is_measured_again_once(tmp_path, monkeypatch):
    import json

    from drill.judge.runtime import Runtime

    saved = tmp_path / "calibration.json"
    saved.write_text(json.dumps({"gpu-x": {"gbps": 3000.0, "read_gbps": 3100.0}}))  # from before event_us
    measured = []

    def judge_runtime(calibrate):
        runtime = Runtime(saved)
        monkeypatch.setattr(runtime, "device_key", lambda: "gpu-x")
        monkeypatch.setattr(runtime, "calibrate", calibrate)
        monkeypatch.setattr(runtime, "torch_kit", lambda: SimpleNamespace(event_overhead_ms=0.0))  # no torch here
        return runtime

    def calibrate(kit, compute=False):
        entry = {"gbps": 3040.0, "read_gbps": 3060.0, "event_us": 2.9}
        measured.append(entry)
        first._save_entry(entry)
        return entry

    first = judge_runtime(calibrate)
    kit = SimpleNamespace(event_overhead_ms=0.0)
    assert not first.calibrated()
    assert first.ceilings(kit)["gbps"] == 3040.0 and len(measured) == 1
    assert first.calibrated() and not first.calibrated(compute=MATMUL_CEILING)  # the matmul ceiling is still to measure
    assert kit.event_overhead_ms == pytest.approx(0.0029)

    again = judge_runtime(lambda kit, compute=False: pytest.fail("measured again"))
    kit = SimpleNamespace(event_overhead_ms=0.0)
    assert again.ceilings(kit)["read_gbps"] == 3060.0 and kit.event_overhead_ms == pytest.approx(0.0029)


@pytest.mark.parametrize("saved", [False, True], ids=["first run on this GPU", "calibration saved"])
def test_measuring_the_gpu_shows_as_a_step_only_when_it_happens(saved):
    from drill.judge.judging import CALIBRATING

    log = []
    runtime = SimpleNamespace(
        calibrated=lambda compute=False: saved,
        ceilings=lambda kit, compute=False: {"gbps": COPY, "read_gbps": READ},
        release_memory=lambda: None,
    )
    events = []
    Judge(runtime)._time(
        "reduce", fake_harness(log, wrong=False), object(), FakeKit(log), events.append, "first", False
    )
    started = [e["name"] for e in events if e["event"] == "case_started"]
    assert started == (["timing n=2^28"] if saved else [CALIBRATING, "timing n=2^28"])
    v = VerdictBuilder("reduce")
    for e in [{"event": "compiled", "ok": True}, *events]:
        v.feed(e)
    assert [c.name for c in v.result().cases] == ["timing n=2^28"]  # the step is no case of the verdict
