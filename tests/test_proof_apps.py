"""The app proofs (proof/kill9.py, proof/two_apps.py, proof/terminals.py) run small and pass.

Each proof drives the real `drill` app in a pseudo-terminal and reads its screen
through the small terminal emulator in proof/_screen.py (standard library only,
so no tmux or other tool is needed). Each exits 0 only when every check passed;
its printed figures are shown when it does not.
"""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script", ["kill9.py", "two_apps.py", "terminals.py"])
def test_app_proof_passes(script):
    done = subprocess.run(
        [sys.executable, str(REPO / "proof" / script), "--quick"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=240,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"proof/{script} --quick failed:\n{report}"
    assert report.rstrip().endswith("PASS"), report
