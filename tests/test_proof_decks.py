"""The deck proofs (proof/broken_decks.py, proof/hostile_decks.py) run small and pass."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_proof(args: list[str], timeout: float, tmp: Path) -> tuple[int, str]:
    """Run a proof with its temporary folders (kept when it fails) under `tmp`."""
    env = {**os.environ, "TMPDIR": str(tmp)}
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=REPO, timeout=timeout, env=env)
    return done.returncode, done.stdout + done.stderr


def passed(rc: int, out: str) -> None:
    assert "Traceback (most recent call last)" not in out, out[-3000:]
    assert rc == 0 and out.strip().splitlines()[-1] == "PASS", out[-4000:]


def test_broken_decks_proof(tmp_path):
    args = ["proof/broken_decks.py", "--examples", "60", "--cli-every", "30", "--app-every", "60", "--timeout", "10"]
    rc, out = run_proof(args, 900, tmp_path)
    assert "examples:" in out and "tracebacks:" in out and "slowest load that finished:" in out, out[-3000:]
    passed(rc, out)


def test_hostile_decks_proof(tmp_path):
    rc, out = run_proof(["proof/hostile_decks.py", "--quick"], 900, tmp_path)
    assert "canaries: 0" in out, out[-3000:]
    assert "files changed outside the data directory: 0" in out, out[-3000:]
    assert "judge starts: 0" in out, out[-3000:]
    passed(rc, out)
