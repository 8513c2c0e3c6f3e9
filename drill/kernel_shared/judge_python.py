"""How every judge-side Python starts: an import path with nothing of the folder drill was started in.

The judge (`drill.judge`), the ranks of a collective card (`drill.judge.collective.rank_process`),
the stand-in judge (`drill.judge.fake`) and the judge on another host over SSH
all start through the command lines made here. Each runs with `-P` (Python
3.11+), so neither the current folder nor the folder of a script is put on
`sys.path`; without a PYTHONPATH, so a variable left set in the learner's shell
adds nothing; and from a neutral folder, so a `numpy.py`, a `torch.py`, a
`sitecustomize.py` or a sourceless `numpy.pyc` beside the learner (a downloaded
deck folder, say) is never imported by the judge.

What the judge does import: the Python's own site-packages (and the user's, as
installed; an editable install of drill is found through its `.pth` file
there), and the `drill` package this app runs from. That one is named by its
folder and taken off the path again at once, so nothing else in that folder
becomes importable. A Python other than this one (where torch lives, say) is
chosen with DRILL_JUDGE_PYTHON; folders the judge must import from beyond its
site-packages are given, as absolute paths, in DRILL_JUDGE_PYTHONPATH.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

JUDGE_PYTHON = "DRILL_JUDGE_PYTHON"  # the Python the judge runs in (default: this one)
JUDGE_PYTHONPATH = "DRILL_JUDGE_PYTHONPATH"  # absolute folders the judge may import from besides site-packages

# -P: nothing is put before sys.path (not the current folder for -m and -c, not a script's folder)
ISOLATED = ("-P",)

# Run as `python -P -c BOOTSTRAP ROOT MODULE ARGS...`: drill is imported from ROOT (the folder holding the
# running app's `drill` package), ROOT leaves sys.path again, and MODULE runs as `python -m MODULE ARGS...`.
BOOTSTRAP = """\
import runpy, sys
root = sys.argv[1]
module = sys.argv[2]
del sys.argv[1:3]
sys.path.insert(0, root)
try:
    import drill
finally:
    sys.path.remove(root)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def package_root() -> Path:
    """The folder that holds the `drill` package this process runs (a checkout, or site-packages)."""
    return Path(__file__).resolve().parents[2]


def judge_python() -> str:
    """The Python the judge runs in: DRILL_JUDGE_PYTHON, else this one."""
    return os.environ.get(JUDGE_PYTHON) or sys.executable


def command(module: str, *args: str, python: str | None = None) -> list[str]:
    """The command line that runs `python -m MODULE ARGS...` with the isolated import path (see the module)."""
    return [python or judge_python(), *ISOLATED, "-c", BOOTSTRAP, str(package_root()), module, *args]


def environment(base: Mapping[str, str]) -> dict[str, str]:
    """`base` for a judge-side Python: no PYTHONPATH but the absolute folders of DRILL_JUDGE_PYTHONPATH."""
    env = dict(base)
    env.pop("PYTHONPATH", None)
    wanted = [entry for entry in env.get(JUDGE_PYTHONPATH, "").split(os.pathsep) if entry]
    kept = [entry for entry in wanted if os.path.isabs(entry)]  # a relative one would name the current folder
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    return env


def neutral_folder() -> str:
    """The folder a judge-side Python starts in: the temporary folder, never the learner's current one
    (the judge then works in a folder of its own: drill.judge.runtime)."""
    return tempfile.gettempdir()


def remote_command(python: str, module: str, *args: str) -> str:
    """The shell command that runs MODULE in `python` on another host: from `/`, without PYTHONPATH, with -P
    (drill is installed there, so the module is found in that Python's site-packages)."""
    words = [shlex.quote(python), *ISOLATED, "-m", module, *(shlex.quote(a) for a in args)]
    return "cd / && exec env -u PYTHONPATH " + " ".join(words)
