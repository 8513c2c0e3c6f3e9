"""A kernel card judged on "another host" over SSH: an SSH server on localhost, started by the test.

The server (asyncssh, in a thread) runs each command it is given as a local
process, so the whole path is real: the system's `ssh` client, the SSH
transport, `python3 -m drill.judge --remote` on the far side, the CPU judge.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job
from drill.kernel.remote import check_host, ssh_command
from tests.conftest import stretched

if TYPE_CHECKING:
    import asyncssh  # imported by the ssh_port fixture: only the worker that runs this module pays for it

ROOT = Path(__file__).resolve().parents[2]


async def _pump(reader, writer, close: bool = True) -> None:
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            break
        writer.write(chunk)
        if hasattr(writer, "drain"):
            await writer.drain()
    if close:
        writer.write_eof() if hasattr(writer, "write_eof") else writer.close()


async def _run_command(process: asyncssh.SSHServerProcess) -> None:
    command = process.command or ""
    command = command.replace(" python3 -P -m", f" {sys.executable} -P -m", 1)  # the "remote" python is this venv's
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DRILL_JUDGE_CPU": "1"}
    child = await asyncio.create_subprocess_shell(
        command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    # the client's input is pumped until the command ends: an ssh client keeps its side open until then
    feeding = asyncio.ensure_future(_pump(process.stdin, child.stdin))
    await asyncio.gather(
        _pump(child.stdout, process.stdout, close=False),
        _pump(child.stderr, process.stderr, close=False),
    )
    code = await child.wait()
    feeding.cancel()
    process.exit(code)


# one worker, so one ssh server and one remote judge serve the module; the local judge is the Triton tests' own
pytestmark = pytest.mark.xdist_group("triton-judge")


@pytest.fixture(scope="module")
def ssh_port(tmp_path_factory) -> Iterator[int]:
    if shutil.which("ssh") is None:
        pytest.fail("the system's ssh client is needed for the remote judge (Debian: openssh-client)")
    import asyncssh

    class _OpenServer(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return False  # no authentication: a throwaway server on the loopback address

    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, object] = {}

    async def start() -> None:
        key = asyncssh.generate_private_key("ssh-ed25519")
        server = await asyncssh.create_server(
            _OpenServer, "127.0.0.1", 0, server_host_keys=[key], process_factory=_run_command, encoding=None
        )
        box["server"] = server
        box["port"] = server.sockets[0].getsockname()[1]
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    assert started.wait(20), "the test SSH server did not start"
    yield int(box["port"])  # type: ignore[call-overload]
    loop.call_soon_threadsafe(loop.stop)


def remote_client(port: int, tmp_path: Path) -> JudgeClient:
    options = [
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        f"UserKnownHostsFile={tmp_path / 'known_hosts'}",
        "-o",
        "LogLevel=ERROR",
    ]
    return JudgeClient(ssh_command("learner@127.0.0.1", port=port, options=options), start_timeout=stretched(120))


def comparable(verdict) -> dict:
    data = verdict.to_json()
    for key in ("device", "compiler", "timings", "seconds"):  # wall-clock figures differ run to run
        data.pop(key, None)
    # inputs are fresh random data each run, so errors differ in the last digits; the outcome must not
    data["cases"] = [(c["name"], c["ok"], c["message"]) for c in data["cases"]]
    return data


@pytest.fixture(scope="module")
def judges(ssh_port, cpu_judge, tmp_path_factory) -> Iterator[tuple[JudgeClient, JudgeClient]]:
    """A judge here (the session's, which tests/judge/test_triton.py uses too) and one over SSH, started once for the
    module (each imports torch: seconds)."""
    remote = remote_client(ssh_port, tmp_path_factory.mktemp("ssh"))
    yield cpu_judge, remote
    remote.close()


@pytest.mark.parametrize("card_id", ["reduce", "rmsnorm"])  # a CUDA card and a Triton card
def test_a_verdict_over_ssh_equals_the_local_one(judges, card_id):
    local, remote = judges
    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards[card_id]
    job = kernel_job(card)
    job["harness"] = "/somewhere/only/the/learner/has/" + Path(job["harness"]).name  # the host uses its own copy
    source = kernel_files(card).starter.read_text()
    events: list[str] = []
    here = local.run(kernel_job(card), source, timeout=stretched(300))
    there = remote.run(job, source, on_event=lambda e: events.append(e.get("event", "")), timeout=stretched(300))
    assert comparable(there) == comparable(here)
    assert events[0] == "started" and events[-1] == "finished"  # streamed as it ran, not at the end


def test_a_host_that_refuses_is_reported_in_words(tmp_path):
    client = JudgeClient(
        ssh_command("learner@127.0.0.1", port=1, options=["-o", "ConnectTimeout=3"]), start_timeout=stretched(20)
    )
    try:
        verdict = client.run(
            {"card": "reduce", "language": "cuda", "harness": "x", "filename": "reduce.cu"}, "", timeout=stretched(20)
        )
    finally:
        client.close()
    words = " ".join(verdict.errors)
    assert "refused" in words.lower() or "connect" in words.lower(), words


@pytest.mark.parametrize(
    "bad",
    ["-oProxyCommand=touch /tmp/x", "a b", "", "host;rm", "-Fcfg", "a@b=c", "u@h/x", "me@b$(id)", "me@`id`", "a@b:0"],
)
def test_hosts_that_could_be_read_as_options_are_refused(bad):
    with pytest.raises(ValueError, match=r"^gpu host (is empty|must)"):
        check_host(bad)
    with pytest.raises(ValueError):
        ssh_command(bad)


def test_a_port_in_the_host_goes_to_ssh_as_a_port():
    command = ssh_command("me@box:2222")
    assert command[command.index("-p") + 1] == "2222"
    assert command[-3:-1] == ["--", "me@box"]  # after "--": never read as an option
    assert ssh_command("box")[-2] == "box"  # an ~/.ssh/config alias alone


def test_the_app_judges_on_the_host_it_is_given(tmp_path):
    from drill.start import AppOptions
    from drill.ui.app import make_app

    app = make_app(AppOptions(tmp_path / "data", [paths.cards_dir() / "kernels.yaml"], gpu_host="learner@gpu-box"))
    judge = app.kernel_judge()
    assert judge.command[0] == "ssh" and "learner@gpu-box" in judge.command
    assert judge.command[-1].endswith("-m drill.judge --remote")
    judge.close()


def test_the_app_takes_a_stored_host_with_a_port_and_gives_ssh_the_port(tmp_path, monkeypatch):
    """`config set gpu_host user@host:22` was accepted, then space on a kernel card ended the app with status 1."""
    from drill.cli import main
    from drill.config.settings import load_settings
    from drill.start import AppOptions
    from drill.ui.app import make_app

    monkeypatch.setenv("DRILL_CONFIG", str(tmp_path / "config.toml"))
    assert main(["config", "set", "gpu_host", "user@host:22"]) == 0
    assert load_settings().gpu_host == "user@host:22"
    app = make_app(AppOptions(tmp_path / "data", [paths.cards_dir() / "kernels.yaml"], settings=load_settings()))
    judge = app.kernel_judge()
    assert judge.command[judge.command.index("-p") + 1] == "22"
    assert judge.command[-3:-1] == ["--", "user@host"]
    judge.close()


@pytest.mark.parametrize("bad", ["a@b=c", "u@h/x", "me@b$(id)", "-Fcfg", "user@host:99999"])
def test_a_host_refused_by_one_check_is_refused_by_all(tmp_path, monkeypatch, capsys, bad):
    from drill.cli import main

    monkeypatch.setenv("DRILL_CONFIG", str(tmp_path / "config.toml"))
    assert main(["config", "set", "gpu_host", "--", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gpu_host: must" in err
    with pytest.raises(SystemExit) as stop:
        main([f"--gpu-host={bad}", "stats"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --gpu-host: must" in err and "Traceback" not in err
    (tmp_path / "config.toml").write_text(f"gpu_host = {json.dumps(bad)}\n")
    assert main(["stats"]) != 0
    assert "gpu_host: must" in capsys.readouterr().err
    with pytest.raises(ValueError, match="gpu host must"):
        ssh_command(bad)


def test_drill_kernel_run_goes_over_ssh_with_a_gpu_host(tmp_path, monkeypatch):
    import argparse

    from drill.cli.kernel import judge_command

    assert judge_command(argparse.Namespace(gpu_host=None)) is None  # no settings file: a local judge
    command = judge_command(argparse.Namespace(gpu_host="me@box"))
    assert command is not None and command[0] == "ssh" and "me@box" in command
    settings = tmp_path / "config.toml"
    settings.write_text('gpu_host = "me@from-file"\n')
    monkeypatch.setenv("DRILL_CONFIG", str(settings))
    command = judge_command(argparse.Namespace(gpu_host=None))
    assert command is not None and "me@from-file" in command
