"""Where the judge's Python keeps and reads compiled bytecode (torch's above all: seconds to compile).

Used by the judge client when it starts a judge, and by `drill kernel run`
for its own imports. Imports nothing heavy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def pycache_dir() -> Path:
    """Where the judge (and `drill kernel run`) keep compiled bytecode: DRILL_PYCACHE, else the user cache."""
    if os.environ.get("DRILL_PYCACHE"):
        return Path(os.environ["DRILL_PYCACHE"]).expanduser().absolute()  # the judge starts in another folder
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("drill", appauthor=False)) / "pycache"


def python_env() -> dict[str, str]:
    """This environment for a Python that imports torch, with torch's bytecode where it can be kept.

    Where torch was installed with its bytecode (pip's default), that is what
    the judge reads. Where it was not, and writing bytecode is switched off
    (PYTHONDONTWRITEBYTECODE, common in images), every judge start compiled
    torch's Python from source again (about 4 s on a GPU host): the bytecode is
    kept in drill's cache instead. Not both: with a cache folder set, Python
    reads bytecode only from there.
    """
    env = dict(os.environ)
    if "PYTHONPYCACHEPREFIX" not in env and installed_with_bytecode("torch"):
        return env
    env.setdefault("PYTHONPYCACHEPREFIX", str(pycache_dir()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def installed_with_bytecode(package: str) -> bool:
    """Whether `package` has this Python's bytecode beside its sources (found without importing it)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    source = Path(spec.origin)
    return (source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc").is_file()
