"""drill gpu calibrate: a data folder named like an option, and a judge that cannot start, are one line each."""

from __future__ import annotations

from pathlib import Path

from drill.cli import main
from drill.kernel import client
from drill.kernel.client import JudgeError, default_command


def test_the_calibration_file_travels_as_one_word():
    command = default_command(Path("-1/calibration.json"))
    # never read by the judge as an option of its own; absolute, as the judge starts in a folder of its own
    assert command[-1] == f"--calibration={Path.cwd() / '-1/calibration.json'}"


def test_a_judge_that_cannot_start_is_one_line(tmp_path, monkeypatch, capsys):
    class NoJudge:
        def __init__(self, **kwargs):
            raise JudgeError("the judge could not start: python: no such file")

    monkeypatch.setattr(client, "JudgeClient", NoJudge)
    assert main(["gpu", "calibrate", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "drill gpu calibrate: the judge could not start: python: no such file"
