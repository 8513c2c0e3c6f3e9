"""The judge imports nothing from the folder drill was started in, nor from a PYTHONPATH left set.

Planted modules (`numpy`, `torch`, `triton`, `json`, `sitecustomize`), as source or as sourceless bytecode,
each leave a marker file when imported. A plain Python started the old way (`python -c` / `python -m` in
that folder, with that PYTHONPATH) imports them: the plants work. The real judge, the stand-in judge, the
ranks' command line and the judge over SSH must not, and the verdict still comes back.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from drill.kernel.client import JudgeClient, default_command
from drill.kernel.remote import ssh_command
from drill.kernel_shared import judge_python
from tests.conftest import stretched

PLANTED = ("numpy", "torch", "triton", "json", "sitecustomize")


def plant(folder: Path, markers: Path, *, bytecode: bool) -> Path:
    """A folder of modules named after what the judge imports, each touching markers/<name> when imported;
    `bytecode`: only their compiled form (a sourceless `name.pyc`, and `__pycache__/name.<tag>.pyc`)."""
    folder.mkdir(parents=True)
    markers.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        source = folder / f"{name}.py"
        source.write_text(f"import pathlib\npathlib.Path({str(markers)!r}, {name!r}).touch()\n")
        if bytecode:
            py_compile.compile(str(source), cfile=str(folder / f"{name}.pyc"), doraise=True)
            cached = folder / "__pycache__" / f"{name}.{sys.implementation.cache_tag}.pyc"
            py_compile.compile(str(source), cfile=str(cached), doraise=True)
            source.unlink()
    return folder


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


@pytest.fixture(params=["source", "bytecode"])
def planted(request, tmp_path, monkeypatch) -> Path:
    """The plants in the current folder and on PYTHONPATH, as a learner's shell inside a deck folder has them;
    returns the markers' folder, empty, after proving that a Python started the old way fills it."""
    markers = tmp_path / "markers"
    folder = plant(tmp_path / "deck", markers, bytecode=request.param == "bytecode")
    old_way = subprocess.run(
        [sys.executable, "-c", "import numpy, torch, triton, json"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=stretched(60),
    )
    assert ran(markers) == sorted(PLANTED), old_way.stderr  # the plants do run where they are reachable
    for marker in markers.iterdir():
        marker.unlink()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("PYTHONPATH", str(folder))
    return markers


def test_the_real_judge_judges_a_triton_card_without_importing_the_planted_modules(planted, tmp_path):
    from drill import paths
    from drill.cards.loader import load_decks
    from drill.kernel.cards import kernel_files
    from drill.kernel.job import kernel_job

    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards["softmax"]
    source = kernel_files(card).solution.read_text()
    with JudgeClient(data_dir=tmp_path / "data", env={"DRILL_JUDGE_CPU": "1"}) as client:
        verdict = client.run(kernel_job(card), source, timeout=stretched(300))
    assert verdict.errors == [] and verdict.correct is True, [(c.name, c.message) for c in verdict.cases]
    assert ran(planted) == []


def test_the_stand_in_judge_starts_isolated_too(planted):
    with JudgeClient(judge_python.command("drill.judge.fake", "--gpu"), start_timeout=stretched(30)) as client:
        verdict = client.run({"card": "reduce", "language": "cuda", "harness": "x", "filename": "r.cu"}, "// fake: ok")
    assert verdict.correct is True
    assert ran(planted) == []


def test_the_stand_in_judge_started_the_old_way_would_have_imported_them(planted):
    """The check above can fail: `python -m` in that folder puts the folder first on the path."""
    subprocess.run(
        [sys.executable, "-m", "drill.judge.fake", "--die-at-start"],
        capture_output=True,
        timeout=stretched(60),
        check=False,
    )
    assert "json" in ran(planted)


def test_a_rank_process_command_line_imports_nothing_planted(planted):
    """The ranks of a collective card start with this command line (drill.judge.collective.rank_group), from the judge."""
    command = judge_python.command("drill.judge.collective.rank_process", "not a spec", python=sys.executable)
    done = subprocess.run(
        command,
        env=judge_python.environment(os.environ),
        capture_output=True,
        text=True,
        timeout=stretched(60),
        check=False,
    )
    assert "JSONDecodeError" in done.stderr  # it ran as far as reading its spec, with the real json
    assert ran(planted) == []


def test_the_judge_command_line_is_isolated_and_names_the_running_drill():
    command = default_command(Path("data/gpu_calibration.json"))
    assert command[1:3] == ["-P", "-c"] and command[4] == str(judge_python.package_root())
    assert command[5] == "drill.judge"
    assert command[6] == f"--calibration={Path.cwd() / 'data/gpu_calibration.json'}"  # absolute: it starts elsewhere


def test_drill_judge_python_still_chooses_the_python(monkeypatch):
    monkeypatch.setenv("DRILL_JUDGE_PYTHON", "/opt/gpu/bin/python3")
    assert default_command()[0] == "/opt/gpu/bin/python3"


def test_pythonpath_is_dropped_and_only_absolute_judge_folders_are_kept():
    env = judge_python.environment(
        {"PYTHONPATH": "/left/by/accident", "DRILL_JUDGE_PYTHONPATH": os.pathsep.join(["/opt/site", "rel", ""])}
    )
    assert env["PYTHONPATH"] == "/opt/site"
    assert "PYTHONPATH" not in judge_python.environment({"PYTHONPATH": "/left/by/accident"})


def test_the_remote_judge_starts_from_root_without_pythonpath_and_with_safe_path():
    remote = ssh_command("me@box", python="/opt/py 3/bin/python3")[-1]
    assert remote == "cd / && exec env -u PYTHONPATH '/opt/py 3/bin/python3' -P -m drill.judge --remote"


def test_the_remote_command_runs_isolated_in_a_shell(planted):
    """The far side's shell line, run here: from `/`, the planted folder's PYTHONPATH gone, nothing imported."""
    line = judge_python.remote_command(sys.executable, "drill.judge.fake", "--die-at-start")
    done = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=stretched(60), check=False)
    assert done.returncode == 7 and "asked to fail" in done.stderr  # the stand-in ran, and stopped as asked
    assert ran(planted) == []


def test_a_judge_started_by_hand_in_the_deck_folder_still_takes_numpy_and_torch_from_their_install(tmp_path):
    """`python -m drill.judge` typed in a deck folder (no -P): the judge takes that folder off its path before
    numpy and torch are imported (modules it imports while starting, json say, it cannot protect)."""
    from drill import paths
    from drill.cards.loader import load_decks
    from drill.kernel.cards import kernel_files
    from drill.kernel.job import kernel_job

    markers = tmp_path / "markers"
    folder = plant(tmp_path / "deck", markers, bytecode=False)
    (folder / "json.py").unlink()  # imported before the judge's own code runs: out of its reach
    (folder / "sitecustomize.py").unlink()
    by_hand = ["sh", "-c", f'cd "{folder}" && exec "{sys.executable}" -m drill.judge']
    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards["softmax"]
    with JudgeClient(by_hand, env={"DRILL_JUDGE_CPU": "1"}) as client:
        verdict = client.run(kernel_job(card), kernel_files(card).solution.read_text(), timeout=stretched(300))
    assert verdict.cases and all(c.ok for c in verdict.cases), verdict.errors
    assert ran(markers) == []


def test_read_ahead_queues_an_installed_packages_shared_libraries_and_skips_what_is_missing() -> None:
    from drill.judge import readahead

    files = list(readahead.package_files(["yaml", "no_such_package_here"]))
    assert files, "PyYAML's compiled module is a shared library under its package"
    assert all(".so" in Path(f).name for f in files)
    assert readahead.read_ahead(iter(files)) == sum(Path(f).stat().st_size for f in files)
    assert readahead.read_ahead(iter(["/no/such/file.so"])) == 0
