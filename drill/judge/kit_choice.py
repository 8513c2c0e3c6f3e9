"""Which kit judges a CUDA card: what the learner chose (DRILL_JUDGE_KIT) and whether CuPy is installed.

Read on the judge's first lines, before the rest of the judge is imported (drill.judge.__main__ starts CuPy's
import from there), so this module imports nothing of the judge.
"""

from __future__ import annotations

import importlib.util
import os

KIT_CHOICE = "DRILL_JUDGE_KIT"  # "torch" or "cupy": the kit CUDA cards are judged with (default: see Runtime.kit)


def chosen_kit() -> str:
    """ "torch", "cupy", or "" when the learner left the choice to the judge."""
    return os.environ.get(KIT_CHOICE, "")


def cupy_installed() -> bool:
    return importlib.util.find_spec("cupy") is not None


def may_use_cupy() -> bool:
    """Whether a CUDA card may be judged with CuPy's kit: it is installed and torch's was not asked for."""
    return chosen_kit() != "torch" and cupy_installed()
