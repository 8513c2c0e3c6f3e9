"""`drill kernel run|list` and `drill gpu calibrate` on a machine without a GPU."""

import json

import pytest

from drill.cli import main
from drill.kernel import drafts
from drill.kernel_shared import nvrtc

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch, tmp_path):
    monkeypatch.setenv("DRILL_JUDGE_CPU", "1")
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))


def run_json(capsys, *argv):
    code = main(["kernel", "run", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_list_shows_the_kernel_cards(capsys, tmp_path):
    drafts.save_draft(tmp_path / "home", "softmax", "py", "# mine")
    assert main(["kernel", "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) >= {"reduce", "transpose", "softmax", "rmsnorm"}
    assert rows["softmax"]["draft"] is True and rows["reduce"]["draft"] is False
    assert main(["kernel", "list"]) == 0
    text = capsys.readouterr().out
    assert "transpose" in text and "(draft)" in text


@needs_nvrtc
def test_run_compiles_a_cuda_card_and_says_what_was_not_checked(capsys):
    code, data = run_json(capsys, "reduce")
    assert code == 0
    assert (data["card"], data["compiled"], data["correct"]) == ("reduce", True, None)
    assert data["errors"] == [] and data["cases"] == []
    assert data["gbps"] is None and data["pct_of_ceiling"] is None and data["vs_torch"] is None
    assert data["compiler"]["resources"][0]["name"] == "reduce_sum"
    assert any("only compiled" in n for n in data["not_checked"])
    assert data["file"].endswith("reduce.cu") and data["suggested_grade"] is None


@needs_nvrtc
def test_run_uses_the_draft_first_and_reports_compile_errors_at_its_lines(capsys, tmp_path):
    source = '// drill: block=256 grid=auto\nextern "C" __global__ void reduce_sum(const float* x, float* out, int n)\n{\n    atomicAdd(out, x[n] + bad);\n}\n'
    drafts.save_draft(tmp_path / "home", "reduce", "cu", source)
    code, data = run_json(capsys, "reduce")
    assert code == 1
    assert data["compiled"] is False and data["correct"] is None
    assert data["file"].endswith("drafts/reduce.cu")
    [message] = data["compiler"]["messages"]
    assert (message["line"], message["severity"]) == (4, "error") and "bad" in message["message"]


@needs_nvrtc
def test_run_with_a_file_and_a_bad_launch_line(capsys, tmp_path):
    path = tmp_path / "mine.cu"
    path.write_text(
        '// drill: block=4096\nextern "C" __global__ void reduce_sum(const float* x, float* out, int n) {}\n'
    )
    code = main(["kernel", "run", "reduce", "--file", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "compiled: NO" in out
    assert "line 1: error: block=4096 is 4096 threads; a block holds at most 1024" in out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["kernel", "run", "no-such-card"], "no kernel card 'no-such-card'"),
        (["kernel", "run", "reduce", "--file", "/no/such/file.cu"], "cannot read"),
        (["kernel", "run", "reduce", "--timeout", "0"], "--timeout must be positive"),
        (["kernel"], "usage: drill kernel"),
        (["gpu"], "usage: drill gpu calibrate"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, words):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_calibrate_without_a_gpu_fails_plainly(capsys):
    assert main(["gpu", "calibrate"]) == 1
    assert "no GPU here" in capsys.readouterr().err


@needs_nvrtc
def test_run_records_the_attempt_in_the_database(capsys, tmp_path):
    from drill.store.store import Store

    code, data = run_json(capsys, "reduce")
    assert code == 0
    store = Store(tmp_path / "home")
    (attempt,) = store.kernel_attempts("reduce")
    assert "reduce_sum" in attempt.source and json.loads(attempt.result)["compiled"] is True
    store.close()
