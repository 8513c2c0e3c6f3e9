"""Deck and learner Python run in the judge from its source text, never through bytecode.

Python's import system reads `__pycache__/NAME.cpython-3XX.pyc` in place of a
source whose size and mtime match the file's header, and both survive a tar or
a zip: compiled code the learner never read could run instead of the harness
they trusted. So the judge reads each file once, checks those bytes against the
trusted hash (drill.kernel_shared.trusted_source.checked_source), compiles them and runs them;
no bytecode is read or written for them. While a run lasts, a module the deck's
Python imports from its own folder is loaded the same way (DeckImports).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from drill.kernel_shared.trusted_source import NotTrusted, Pins, checked_source


def run_source(name: str, path: Path, data: bytes, *, register: bool = False) -> types.ModuleType:
    """A module made by compiling `data` (the text of `path`) and running it; `register` puts it in sys.modules
    first, as an import would (Triton looks jitted functions' modules up there)."""
    code = compile(data, str(path), "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=str(path))
    if register:
        sys.modules[name] = module
    exec(code, module.__dict__)
    return module


def load_file(name: str, path: Path, pinned: Pins, *, register: bool = False) -> types.ModuleType:
    """Load `path` from its checked source (NotTrusted when it is deck Python that is not as trusted)."""
    return run_source(name, path, checked_source(path, pinned), register=register)


class _CheckedLoader(importlib.abc.Loader):
    """Runs a deck module from its checked source text (see load_file)."""

    def __init__(self, path: Path, pinned: Pins) -> None:
        self.path = path
        self.pinned = pinned

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: types.ModuleType) -> None:
        code = compile(checked_source(self.path, self.pinned), str(self.path), "exec", dont_inherit=True)
        exec(code, module.__dict__)


class DeckImports(importlib.abc.MetaPathFinder):
    """Finds modules as Python would, and hands any that lies in the deck folder to _CheckedLoader.

    Anything there that is not Python source (a `.pyc`, a compiled extension)
    is refused: trust covers `.py` files only.
    """

    def __init__(self, pinned: Pins) -> None:
        self.pinned = pinned
        self.loaded: list[str] = []  # the names of the deck modules it found, forgotten after the run

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not spec.has_location or not spec.origin:
            return None
        origin = Path(spec.origin)
        if not self.pinned.covers(origin):
            return None  # not deck code: the ordinary finders load it
        if origin.suffix != ".py":
            raise NotTrusted(f"{origin} is not Python source; only the .py files you trusted run from a deck")
        spec.loader = _CheckedLoader(origin, self.pinned)
        spec.cached = None
        self.loaded.append(fullname)
        return spec


@contextmanager
def deck_imports(pinned: Pins) -> Iterator[None]:
    """While inside: imports from the deck folder come from checked source; after: those modules are forgotten
    (the next run checks them again)."""
    if pinned.folder is None:
        yield
        return
    finder = DeckImports(pinned)
    # before the path finder, after the built-in and frozen ones: a deck file never shadows a built-in module
    at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in finder.loaded:
            sys.modules.pop(name, None)
