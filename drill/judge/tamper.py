"""Whether a learner's Python changed the code that checks and times it.

Imported only by the judge child. A Triton file runs inside the judge process,
so it could replace what judges it: `torch.cuda.Event.elapsed_time`,
`statistics.median`, the kit's comparisons, the protocol that sends the verdict.
Before the learner's file is imported, `Fingerprint` notes every function and
class the judge relies on (by identity, and a Python function's code object
too); `changed` names those that are no longer the same. The judge then scores
nothing and its process is replaced, so the change cannot outlive the run.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

# Besides every drill module: what the judge's checking and timing call into.
WATCHED = ("builtins", "ctypes", "gc", "json", "math", "statistics", "time", "torch", "torch.cuda")
WATCHED_CLASSES = (("torch", "Tensor"), ("torch.cuda", "Event"), ("torch.cuda", "Stream"))
_CALLABLE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, staticmethod, classmethod)


def _identity(value: object) -> tuple[int, int]:
    function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    code = getattr(function, "__code__", None)
    return id(value), id(code) if code is not None else 0


def _namespaces() -> Iterator[tuple[str, dict[str, object]]]:
    for name in list(sys.modules):
        module = sys.modules.get(name)
        if module is None or not (name in WATCHED or name.startswith("drill.")):
            continue
        space = vars(module)
        yield name, space
        if name.startswith("drill."):  # the judge's own classes: their methods too
            for attr, value in list(space.items()):
                if isinstance(value, type) and value.__module__ == name:
                    yield f"{name}.{attr}", dict(vars(value))
    for module_name, attr in WATCHED_CLASSES:
        owner = getattr(sys.modules.get(module_name), attr, None)
        if isinstance(owner, type):
            yield f"{module_name}.{attr}", dict(vars(owner))


class Fingerprint:
    """What the watched functions and classes are now."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, int]] = {}
        self._kept: list[object] = []  # the objects themselves: an id is only unique while its object lives
        for space_name, space in _namespaces():
            for attr, value in list(space.items()):
                if isinstance(value, _CALLABLE):
                    self.seen[f"{space_name}.{attr}"] = _identity(value)
                    self._kept.append(value)

    def changed(self) -> list[str]:
        """The watched names no longer bound to what they were (replaced, re-coded or removed), sorted."""
        now = Fingerprint()
        return sorted(name for name, before in self.seen.items() if now.seen.get(name) != before)


def tampered_words(names: list[str], most: int = 5) -> str:
    """The judge's message for a run whose code changed the judge."""
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
    return (
        f"the file changed the judge's own code ({shown}); nothing from this run is scored, "
        "and the judge process is replaced"
    )
