"""Verdicts from judge events, their JSON, exit codes and the suggested SM-2 grade."""

import json

import pytest

from drill.kernel.verdict import (
    CaseResult,
    Timing,
    Verdict,
    VerdictBuilder,
    format_verdict,
    suggest_kernel_grade,
)


def verdict(compiled=True, correct=True, pct=None, errors=(), started=True):
    v = Verdict(card="k", compiled=compiled, correct=correct, errors=list(errors), started=started)
    if pct is not None:
        v.timings.append(Timing(name="big", ms=1.0, gbps=pct * 40, pct_of_ceiling=pct, ceiling_gbps=4000.0))
    return v


@pytest.mark.parametrize(
    "v, target, grade",
    [
        (verdict(compiled=False, correct=None), 90, 1),
        (verdict(correct=False, pct=99.0), 90, 1),
        (verdict(correct=True, pct=2.3 / 42.2), 90, 3),  # one atomic per element: correct but slow
        (verdict(correct=True, pct=44.9), 90, 3),
        (verdict(correct=True, pct=45.0), 90, 4),
        (verdict(correct=True, pct=80.9), 90, 4),
        (verdict(correct=True, pct=81.0), 90, 5),  # within 10 % of the target counts as near it
        (verdict(correct=True, pct=99.5), 90, 5),
        (verdict(correct=True, pct=None), 90, 3),  # correct, but no GPU to time it
        (verdict(correct=None), 90, None),  # compiled only: nothing shows it works, the learner grades it
        (verdict(correct=None, errors=["timeout"]), 90, 2),
        # the judge never took the job (it could not start, its host was unreachable): not the kernel's doing
        (verdict(compiled=None, correct=None, errors=["the judge could not start: ssh"], started=False), 90, None),
    ],
)
def test_suggest_kernel_grade(v, target, grade):
    assert suggest_kernel_grade(v, target) == grade


def feed(events):
    b = VerdictBuilder("reduce")
    for e in events:
        b.feed(e)
    return b


def test_builder_names_the_case_in_flight_when_the_run_dies():
    b = feed(
        [
            {"event": "started", "device": "GPU", "gpu": True},
            {"event": "compiled", "ok": True, "messages": [], "resources": []},
            {"event": "case_started", "name": "n=1"},
            {"event": "case", "name": "n=1", "ok": True},
            {"event": "case_started", "name": "n=31"},
        ]
    )
    b.fail("the judge process was killed by SIGKILL", crashed=True)
    v = b.result()
    assert v.correct is False and v.crashed
    assert v.errors == ["the judge process was killed by SIGKILL (during case n=31)"]
    assert [(c.name, c.ok) for c in v.cases] == [("n=1", True), ("n=31", False)]


def test_an_error_while_timing_counts_as_a_failed_case():
    b = feed(
        [
            {"event": "compiled", "ok": True},
            {"event": "case", "name": "a", "ok": True},
            {"event": "case_started", "name": "timing big"},
            {"event": "error", "kind": "oom", "message": "out of GPU memory"},
            {"event": "finished"},
        ]
    )
    v = b.result()
    assert v.correct is False  # the kernel broke on the big input: it is not right for every size
    assert v.errors == ["case timing big: out of GPU memory"]


def test_a_compile_error_leaves_correctness_unchecked():
    v = feed(
        [
            {"event": "compiled", "ok": False, "messages": [{"line": 4, "severity": "error", "message": "x"}]},
            {"event": "finished"},
        ]
    ).result()
    assert v.compiled is False and v.correct is None and v.exit_code() == 1


def test_json_has_the_documented_keys_and_is_valid_json():
    v = feed(
        [
            {"event": "started", "device": "H100", "gpu": True},
            {"event": "compiled", "ok": True, "seconds": 0.05, "resources": [{"name": "k", "registers": 32}]},
            {"event": "case", "name": "n=1", "ok": True, "max_error": 0.0, "tolerance": 1e-6},
            {
                "event": "timing",
                "name": "n=2^28",
                "ms": 0.3,
                "gbps": 3579.0,
                "pct_of_ceiling": 95.0,
                "ceiling_gbps": 3767.0,
                "torch_ms": 0.28,
                "vs_torch": 0.93,
            },
            {"event": "finished", "seconds": 0.6},
        ]
    ).result()
    data = json.loads(json.dumps(v.to_json()))
    for key in ("card", "device", "compiled", "correct", "errors", "cases", "gbps", "pct_of_ceiling", "vs_torch"):
        assert key in data
    assert (data["correct"], data["gbps"], data["pct_of_ceiling"], data["vs_torch"]) == (True, 3579.0, 95.0, 0.93)
    assert data["cases"][0]["name"] == "n=1"
    assert v.exit_code() == 0


def test_format_verdict_shows_the_failing_source_line():
    v = Verdict(card="reduce", device="CPU", compiled=False)
    v.messages = [{"line": 2, "column": 5, "severity": "error", "message": 'identifier "q" is undefined'}]
    text = format_verdict(v, source_lines=["int a;", "    q = 1;"])
    assert 'line 2:5: error: identifier "q" is undefined' in text
    assert "    q = 1;" in text and "compiled: NO" in text


def test_format_verdict_reports_cases_and_figures():
    v = Verdict(card="t", device="H100", compiled=True, correct=False)
    v.cases = [CaseResult("1x1", True), CaseResult("33x65", False, "3 of 2,145 elements wrong")]
    v.timings = [
        Timing("16384x16384", 1.2, 1789.0, pct_of_ceiling=60.0, ceiling_gbps=2982.0, torch_ms=3.6, vs_torch=3.0)
    ]
    text = format_verdict(v)
    assert "FAIL 33x65  3 of 2,145 elements wrong" in text
    assert "60.0 % of the measured copy ceiling" in text and "3.00x PyTorch" in text


def test_nothing_built_is_not_a_failure():
    # e.g. a Triton card where torch is not installed: the judge says so and checks nothing
    v = feed(
        [{"event": "compiled", "ok": None}, {"event": "note", "text": "torch is not installed"}, {"event": "finished"}]
    ).result()
    assert v.compiled is None and v.correct is None and v.exit_code() == 0
    assert suggest_kernel_grade(v, 70) is None


NO_GPU = "correctness and speed: no GPU here, so the CUDA kernel was only compiled (for sm_90)"


def compiled_only():
    """A CUDA card judged where there is no GPU: compiled, nothing run, and the judge's note says why."""
    return feed(
        [
            {"event": "started", "device": "CPU only", "gpu": False},
            {"event": "compiled", "ok": True, "seconds": 0.01, "messages": [], "resources": []},
            {"event": "note", "text": NO_GPU},
            {"event": "finished"},
        ]
    ).result()


def test_the_panel_says_once_that_correctness_was_not_checked_and_why():
    from drill.ui.verdict_view import render_verdict

    panel = render_verdict(compiled_only(), "", 90, None).plain
    assert panel.count("not checked") == 1 and panel.count("correctness") == 1
    assert panel.splitlines()[0] == f"not checked: {NO_GPU}"  # the outcome and its reason, first
    assert "no suggested grade: reveal the reference and grade yourself" in panel


def test_the_panel_gives_the_outcome_and_the_grade_once():
    from drill.ui.verdict_view import render_verdict

    v = verdict(correct=True, pct=95.0)
    v.device = "H100"
    v.cases = [CaseResult("n=1", True)]
    panel = render_verdict(v, "", 90, 5).plain
    assert panel.splitlines()[0] == "correct, 95 % of the copy ceiling · suggested grade 5"
    assert panel.count("suggested grade") == 1
    assert "target 90 %" in panel


def test_a_kernel_that_did_not_compile_is_said_once():
    from drill.ui.verdict_view import render_verdict

    panel = render_verdict(verdict(compiled=False, correct=None), "", 90, 1).plain
    assert panel.count("did not compile") == 1


def test_the_command_line_report_says_once_what_was_not_checked():
    text = format_verdict(compiled_only())
    assert text.count("not checked") == 1 and f"not checked: {NO_GPU}" in text
    assert "correctness: not checked" in format_verdict(Verdict(card="k", compiled=True, correct=None))  # no note
