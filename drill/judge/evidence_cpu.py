"""What a learner's call ran on a CPU: every ATen op (a TorchDispatchMode) and every Triton launch (the interpreter).

Imported only by the judge child (it needs torch). Under the Triton interpreter a kernel's body runs as Python,
and the interpreter uses torch for its own work (copying the arguments to the host and back): the ops made inside
a launch are the interpreter's, unless the line that made them is the learner's file (a kernel whose body calls
torch). Outside launches every op is the learner's call's: allocation, views and the other kinds the card allows
are counted, anything else is named with the learner's line ("not your kernel: torch ran aten._softmax (your
line 12)"). A call that launched no Triton kernel of the learner's file did not do the work either.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from drill.judge.evidence import Allowance, Seen, cpu_op_allowed

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_THIS_FILE = os.path.abspath(__file__)
_watching: list[CpuWatch] = []  # the watch of the call in progress (one at a time: the judge runs one call)
_hooked = False


class _OpRecord(TorchDispatchMode):  # type: ignore[no-untyped-call]
    """Passes every ATen op on, after telling the watch."""

    def __init__(self, watch: CpuWatch) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.watch = watch

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        self.watch.op(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


class CpuWatch:
    """Watches the learner's calls: `call(fn)` runs one and returns what it ran (a `Seen`)."""

    where = "cpu"

    def __init__(self, path: str | os.PathLike[str], allowed: Sequence[Allowance]) -> None:
        self.path = os.path.abspath(path)
        self.allowed = tuple(allowed)
        self._seen = Seen("cpu")
        self._launches = 0  # Triton launches in progress (the interpreter's own ops inside them are not counted)
        install_launch_hook()

    def call(self, fn: Callable[[], object]) -> Seen:
        """Run `fn` (the harness's launch of the learner's code) under the record."""
        seen = Seen("cpu", calls=1)
        self._seen = seen
        self._launches = 0
        _watching.append(self)
        try:
            with _OpRecord(self):
                fn()
        finally:
            _watching.remove(self)
        if not seen.mine:
            seen.idle_calls = 1
        return seen

    def op(self, name: str) -> None:
        frame = self._caller()
        if self._launches and (frame is None or frame.f_code.co_filename != self.path):
            return  # the interpreter's own work inside a launch
        if cpu_op_allowed(name, self.allowed):
            self._seen.allowed[name] += 1
            return
        self._seen.foreign[name] += 1
        if name not in self._seen.places:
            line = self._learner_line()
            self._seen.places[name] = f"your line {line}" if line else "not from a line of your file"

    @contextmanager
    def launch(self, fn: Any) -> Iterator[None]:
        """A Triton launch of `fn` (the jitted Python function): the learner's when its code is in their file."""
        code = getattr(fn, "__code__", None)
        name = str(getattr(fn, "__name__", "?"))
        if code is not None and os.path.abspath(code.co_filename) == self.path:
            self._seen.mine[name] += 1
        else:
            where = os.path.basename(code.co_filename) if code is not None else "somewhere else"
            self._seen.foreign[f"Triton kernel {name} from {where}"] += 1
        self._launches += 1
        try:
            yield
        finally:
            self._launches -= 1

    def _caller(self) -> types.FrameType | None:
        """The nearest frame outside torch and this module: whose line made the op."""
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None and (
            frame.f_code.co_filename.startswith(_TORCH_DIR) or frame.f_code.co_filename == _THIS_FILE
        ):
            frame = frame.f_back
        return frame

    def _learner_line(self) -> int:
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.path:
                return frame.f_lineno
            frame = frame.f_back
        return 0


def install_launch_hook() -> None:
    """Make the Triton interpreter's launches (InterpretedFunction.run) known to the watch in progress; and enter
    the record once, since its first use imports what it needs (torch._dynamo, which rebinds torch.manual_seed):
    so that happens before the judge notes what its code is (drill.judge.tamper)."""
    global _hooked
    if _hooked:
        return
    _hooked = True
    CpuWatch(_THIS_FILE, ()).call(lambda: torch.zeros(1).add_(1))
    from triton.runtime.interpreter import InterpretedFunction

    original = InterpretedFunction.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not _watching or kwargs.get("warmup"):
            return original(self, *args, **kwargs)
        with _watching[-1].launch(self.fn):
            return original(self, *args, **kwargs)

    InterpretedFunction.run = run
