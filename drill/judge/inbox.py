"""The judge child's requests, read from its stdin by a thread from the moment it starts.

A new judge spends most of its start importing torch. The first request may
already be waiting (`drill kernel run` sends it without waiting for `ready`);
when it is a CUDA run, its source is compiled meanwhile (NVRTC lets go of the
GIL), and the judge's own compile of the same source takes that result.
Imported only by the judge child.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeGuard

from drill.kernel_shared import nvrtc, protocol
from drill.kernel_shared.protocol import RunRequest


class Inbox:
    """Iterates over the lines of `stream` as they come, like the stream itself."""

    def __init__(self, stream: Iterable[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._first: str | None = None  # a line taken early by first_request (_END: the stream had ended)
        threading.Thread(target=self._read, args=(stream,), daemon=True, name="judge-inbox").start()

    def _read(self, stream: Iterable[str]) -> None:
        first = True
        try:
            for line in stream:
                self._lines.put(line)  # first: the judge decides how to start from it (first_request)
                ahead = compile_ahead(protocol.decode(line)) if first else None  # asks the driver the arch: slow
                first = False
                if ahead is not None:  # reserved long before the judge, still starting, compiles it itself
                    ahead.run()
        except (OSError, ValueError):  # stdin closed: the judge is being stopped
            pass
        finally:
            self._lines.put(None)

    def __iter__(self) -> Iterator[str]:
        first = self._first
        self._first = None
        if first == _END:
            return
        if first is not None:
            yield first
        while (line := self._lines.get()) is not None:
            yield line

    def first_request(self, wait_s: float = 1.0) -> dict[str, object] | None:
        """The first request, decoded, if it came within `wait_s`; it is still served first. The app sends its
        first run with the judge's start; `drill kernel run` starts the judge, then loads the decks and sends it."""
        if self._first is None:
            try:
                got = self._lines.get(timeout=wait_s)
            except queue.Empty:
                return None
            self._first = _END if got is None else got
        return protocol.decode(self._first) if self._first != _END else None


_END = "\0end"


def is_cuda_run(message: object) -> TypeGuard[RunRequest]:
    """Whether a message, as decoded and not yet checked, is a run of a CUDA card with its source."""
    if not isinstance(message, dict) or message.get("op") != "run":
        return False
    job = message.get("job")
    return isinstance(job, dict) and job.get("language") == "cuda" and isinstance(message.get("source"), str)


def compile_ahead(request: object) -> nvrtc.Ahead | None:
    """The build to start for `request`, reserved (the caller runs it), or None when it is no CUDA run."""
    if not is_cuda_run(request):
        return None
    filename = str(request["job"].get("filename") or "kernel.cu")  # as the judge names it (drill.judge.judging)
    return nvrtc.reserve(request["source"], filename, arch=device_arch())


def device_arch() -> str:
    """The arch the judge will compile for: the GPU's, asked of the driver, else DRILL_CUDA_ARCH or the default."""
    if not os.environ.get("DRILL_JUDGE_CPU"):
        try:
            from drill.judge import cudadrv

            major, minor = cudadrv.compute_capability(0)
            return f"sm_{major}{minor}"
        except Exception:  # no driver, no GPU: compiled only, for the arch the judge uses then
            pass
    return os.environ.get("DRILL_CUDA_ARCH", nvrtc.DEFAULT_ARCH)
