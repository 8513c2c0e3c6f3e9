"""The judge client against a fake child: streaming, timeout, crash, cancel, replacement."""

import sys
import threading
import time

import pytest

from drill.kernel.client import JudgeClient
from drill.kernel_shared import judge_python
from tests.conftest import stretched

JOB = {"card": "reduce", "language": "cuda", "harness": "unused", "filename": "reduce.cu"}


def fake(*flags: str) -> list[str]:
    return judge_python.command("drill.judge.fake", *flags)  # started as every judge is: isolated


@pytest.fixture
def client():
    c = JudgeClient(fake("--gpu"), start_timeout=stretched(20))
    yield c
    c.close()


def test_streams_events_in_order_and_builds_the_verdict(client):
    seen = []
    verdict = client.run(JOB, "// fake: ok", on_event=lambda e: seen.append(e["event"]), timeout=stretched(10))
    assert seen[:2] == ["started", "compiled"]
    assert seen.count("case") == 3 and seen[-2:] == ["timing", "finished"]
    assert verdict.compiled is True and verdict.correct is True and verdict.errors == []
    assert [c.name for c in verdict.cases] == ["n=1", "n=31", "n=1,025"]
    assert verdict.gbps == pytest.approx(3579.1) and verdict.pct_of_ceiling == pytest.approx(89.5)
    assert verdict.vs_torch == pytest.approx(0.9)
    assert verdict.resources[0]["registers"] == 16
    assert verdict.exit_code() == 0


def test_the_child_stays_warm_between_runs(client):
    client.run(JOB, "// fake: ok", timeout=stretched(10))
    pid = client.pid
    client.run(JOB, "// fake: ok", timeout=stretched(10))
    assert client.pid == pid and client.replacements == 0


def test_a_hang_is_killed_after_the_timeout_and_named(client):
    client.info()
    before = client.pid
    started = time.monotonic()
    verdict = client.run(JOB, "// fake: hang", timeout=1.5)
    assert 1.4 < time.monotonic() - started < stretched(8)
    assert verdict.timed_out and verdict.correct is False
    assert any("did not finish within 1.5 s" in e and "n=31" in e for e in verdict.errors)
    assert [c.ok for c in verdict.cases] == [True, False]
    after = client.run(JOB, "// fake: ok", timeout=stretched(10))
    assert after.correct is True
    assert client.pid != before and client.replacements == 1


def test_a_crash_is_reported_in_words_with_its_case(client):
    client.info()
    before = client.pid
    verdict = client.run(JOB, "// fake: crash", timeout=stretched(10))
    assert verdict.crashed and verdict.correct is False
    [error] = verdict.errors
    assert "SIGSEGV" in error and "n=31" in error and "restarted" in error
    assert client.run(JOB, "// fake: ok", timeout=stretched(10)).correct is True
    assert client.pid != before


def test_a_fatal_cuda_error_replaces_the_child(client):
    client.info()
    before = client.pid
    verdict = client.run(JOB, "// fake: fatal", timeout=stretched(10))
    assert verdict.correct is False
    assert verdict.errors == ["case n=31: CUDA said: an illegal memory access was encountered"]
    assert client.run(JOB, "// fake: ok", timeout=stretched(10)).correct is True
    assert client.pid != before


def test_cancel_from_another_thread(client):
    client.info()
    before = client.pid
    timer = threading.Timer(0.5, client.cancel)
    timer.start()
    started = time.monotonic()
    verdict = client.run(JOB, "// fake: slow 0.4", timeout=stretched(30))
    assert time.monotonic() - started < stretched(5)
    assert verdict.cancelled and verdict.errors == [] and verdict.correct is None
    assert verdict.exit_code() == 1
    assert client.run(JOB, "// fake: ok", timeout=stretched(10)).correct is True
    assert client.pid != before


def test_a_wrong_result_keeps_the_child(client):
    client.info()
    before = client.pid
    verdict = client.run(JOB, "// fake: wrong", timeout=stretched(10))
    assert verdict.correct is False and not verdict.crashed
    assert "expected 1.5" in verdict.cases[1].message
    assert client.pid == before


def test_compile_errors_carry_lines(client):
    verdict = client.run(JOB, "// fake: compile-error 7", timeout=stretched(10))
    assert verdict.compiled is False and verdict.correct is None
    assert verdict.messages[0]["line"] == 7
    assert verdict.exit_code() == 1


def test_stray_output_on_stdout_is_ignored(client):
    verdict = client.run(JOB, "// fake: noise", timeout=stretched(10))
    assert verdict.correct is True and verdict.errors == []


def test_a_child_that_cannot_start_is_reported():
    c = JudgeClient(fake("--die-at-start"), start_timeout=stretched(10))
    try:
        verdict = c.run(JOB, "// fake: ok", timeout=stretched(5))
    finally:
        c.close()
    assert verdict.crashed and verdict.correct is None
    assert any("could not start" in e and "exited with code 7" in e and "asked to fail" in e for e in verdict.errors)


def test_a_child_too_slow_to_start_is_stopped():
    c = JudgeClient(fake("--start-delay", "30"), start_timeout=1)
    try:
        verdict = c.run(JOB, "// fake: ok", timeout=stretched(5))
    finally:
        c.close()
    assert any("did not start within 1 s" in e for e in verdict.errors)


def test_no_gpu_means_no_timing_and_says_so():
    c = JudgeClient(fake(), start_timeout=stretched(20))
    try:
        verdict = c.run(JOB, "// fake: ok", timeout=stretched(10))
    finally:
        c.close()
    assert verdict.correct is True and verdict.gbps is None
    assert verdict.not_checked == ["speed: no GPU here (fake judge)"]


def test_calibrate_returns_the_measurement(client):
    result = client.calibrate(timeout=stretched(10))
    assert result["event"] == "calibrated" and result["gbps"] == 3000.0


def test_close_ends_the_child(client):
    client.info()
    proc = client._child.proc
    client.close()
    assert proc.wait(timeout=stretched(5)) is not None


def test_a_program_that_does_not_exist_is_a_verdict_not_an_exception():
    c = JudgeClient(["/no/such/python", "-m", "drill.judge.runtime"], start_timeout=stretched(5))
    try:
        verdict = c.run(JOB, "// fake: ok", timeout=stretched(5))
    finally:
        c.close()
    assert verdict.crashed and verdict.correct is None
    assert verdict.errors[0].startswith("the judge could not start: /no/such/python: No such file or directory")


# -- the real judge's work folder -------------------------------------------------------------------
def test_the_judge_makes_its_folder_with_the_first_job_and_removes_it_on_quit(tmp_path):
    from drill import paths
    from drill.judge.runtime import WORKDIR_PREFIX
    from drill.kernel.job import kernel_job

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    c = JudgeClient(data_dir=tmp_path / "data", env={"DRILL_JUDGE_CPU": "1", "TMPDIR": str(tmp)})
    try:
        assert c.info()["gpu"] is False
        assert list(tmp.glob(WORKDIR_PREFIX + "*")) == []  # started, given nothing: nothing made
        from drill.cards.loader import load_decks

        card = load_decks([paths.cards_dir()]).cards["reduce"]  # a CUDA card: built here, then judged no further
        source = (paths.kernels_dir() / "reduce.cu").read_text()
        assert c.run(kernel_job(card), source, timeout=stretched(120)).compiled is True
        made = list(tmp.glob(f"{WORKDIR_PREFIX}{c.pid}-*"))
        assert len(made) == 1 and made[0].is_dir()
    finally:
        c.close()
    assert list(tmp.glob(WORKDIR_PREFIX + "*")) == []


def test_the_folders_of_killed_judges_are_swept_and_live_ones_kept(tmp_path, monkeypatch):
    import subprocess

    from drill.judge import runtime

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        keep = tmp_path / f"{runtime.WORKDIR_PREFIX}{alive.pid}-abc"
        dead = tmp_path / f"{runtime.WORKDIR_PREFIX}{gone.pid}-def"
        other = tmp_path / f"{runtime.WORKDIR_PREFIX}notapid"
        for folder in (keep, dead, other):
            folder.mkdir()
            (folder / "kernel.py").write_text("x = 1\n")
        runtime.sweep_workdirs()
        assert keep.exists() and other.exists() and not dead.exists()
    finally:
        alive.kill()
        alive.wait()


def test_abandon_kills_the_child_without_asking_it_to_quit(client):
    import signal

    client.run(JOB, "// fake: ok", timeout=stretched(10))
    child = client._child
    sent = []
    child.send = sent.append  # a quit would go through here
    client.abandon()
    assert child.proc.wait(timeout=stretched(10)) == -signal.SIGKILL
    assert sent == [] and client.pid is None


def test_a_run_asked_for_while_the_judge_starts_is_sent_once():
    """The request goes to a judge still starting (it compiles while torch imports), and never again."""
    c = JudgeClient(fake("--gpu", "--start-delay", "0.5"), start_timeout=stretched(20))
    try:
        c.start()
        runs = []
        keep = lambda e: runs.append(e["runs"]) if e["event"] == "started" else None  # noqa: E731
        assert c.run(JOB, "// fake: ok", on_event=keep, timeout=stretched(10)).correct is True
        assert c.run(JOB, "// fake: ok", on_event=keep, timeout=stretched(10)).correct is True
        assert runs == [1, 2]
    finally:
        c.close()


def test_closing_a_judge_that_is_still_starting_does_not_wait_for_it():
    c = JudgeClient(fake("--start-delay", "30"), start_timeout=stretched(20))
    c.start()
    proc = c._child.proc
    t0 = time.monotonic()
    c.close()
    assert time.monotonic() - t0 < stretched(2)  # it was not asked to quit and waited on: it could not answer yet
    assert proc.wait(timeout=stretched(5)) is not None


# -- a verdict before torch's own time (a judge that started without torch, on a GPU new to drill) ---------------
def test_the_verdict_is_handed_over_before_torchs_own_time_and_the_returned_one_has_it(client):
    from drill.kernel.verdict import format_verdict

    seen: list[str] = []
    shown = []

    def on_verdict(verdict):
        seen.append("verdict")
        shown.append((verdict.vs_torch, verdict.timing.torch_later, format_verdict(verdict)))

    verdict = client.run(
        JOB,
        "// fake: torch-later 0.2",
        on_event=lambda e: seen.append(e["event"]),
        timeout=stretched(10),
        on_verdict=on_verdict,
    )
    assert seen[-3:] == ["finished", "verdict", "torch_time"]  # shown first, completed after
    [(vs_torch, later, words)] = shown
    assert vs_torch is None and later is True and "PyTorch's own time: being taken now" in words
    assert verdict.correct is True and verdict.vs_torch == pytest.approx(0.9) and not verdict.timing.torch_later
    assert verdict.timing.torch_gbps == pytest.approx(2**30 / 0.27e-3 / 1e9)
    assert client.replacements == 0


def test_a_judge_that_dies_before_torchs_own_time_leaves_the_verdict_standing(client):
    from drill.kernel.verdict import torch_time_words

    verdict = client.run(JOB, "// fake: torch-later-dies", timeout=stretched(10))
    assert verdict.correct is True and verdict.pct_of_ceiling == pytest.approx(89.5)
    assert verdict.vs_torch is None and not verdict.timing.torch_later
    assert any(n.startswith("PyTorch's own time at n=2^28: the judge process was killed") for n in verdict.not_checked)
    assert torch_time_words(verdict, verdict.timing).startswith("time n=2^28: no ratio to PyTorch (")
    assert client.replacements == 1  # and the next run has a judge again
    assert client.run(JOB, "// fake: ok", timeout=stretched(10)).vs_torch == pytest.approx(0.9)
