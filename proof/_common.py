"""Shared pieces of the storage proofs: running real `drill` processes and reading what they print."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `python proof/x.py` from a checkout imports this drill

DRILL = [sys.executable, "-m", "drill.cli"]
NOBODY = 65534
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1b\][^\x07]*\x07")


@dataclass
class Run:
    args: list[str]
    rc: int | None
    stdout: str
    stderr: str

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.stderr or "Traceback" in self.stdout

    @property
    def message(self) -> str:
        """The first non-empty line on stderr (where drill says what went wrong)."""
        return next((line.strip() for line in self.stderr.splitlines() if line.strip()), "")

    @property
    def stderr_lines(self) -> int:
        return sum(1 for line in self.stderr.splitlines() if line.strip())


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DRILL_HOME"}
    env["PYTHONPATH"] = str(REPO)
    env.setdefault("HOME", tempfile.gettempdir())
    return env


def start(args: Sequence[str], prefix: Sequence[str] = ()) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*prefix, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=child_env()
    )


def finish(proc: subprocess.Popen[str], args: Sequence[str], timeout: float = 180) -> Run:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n(proof: killed after {timeout:g} s)"
    return Run(list(args), proc.returncode, out, err)


def run(args: Sequence[str], prefix: Sequence[str] = (), timeout: float = 180) -> Run:
    return finish(start(args, prefix), args, timeout)


def unprivileged() -> tuple[list[str], str]:
    """A command prefix that runs a child as a user file modes apply to, and a line saying how.

    Root's writes ignore a folder's mode, so a read-only folder means nothing to a
    child running as root. When this proof runs as root, children that need a
    read-only folder run as `nobody` through setpriv (or runuser); the prefix is
    checked by importing drill that way first.
    """
    if os.geteuid() != 0:
        return [], f"running as uid {os.geteuid()} (not root): chmod 555 makes a folder read-only"
    candidates = []
    if shutil.which("setpriv"):
        candidates.append(
            (
                [shutil.which("setpriv") or "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"],
                "setpriv --reuid=65534 (nobody)",
            )
        )
    if shutil.which("runuser"):
        candidates.append(([shutil.which("runuser") or "runuser", "-u", "nobody", "--"], "runuser -u nobody"))
    for prefix, how in candidates:
        probe = run([sys.executable, "-c", "import drill.store.store"], prefix, timeout=60)
        if probe.rc == 0:
            return prefix, f"running as root: read-only cases run as user nobody via {how}"
    return (
        [],
        "running as root and no way to drop to another user: read-only cases are NOT meaningful (root ignores modes)",
    )


def readable_by_all(path: Path) -> None:
    """Let an unprivileged child reach `path` (temporary folders are private to their owner)."""
    path.chmod(0o755)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
