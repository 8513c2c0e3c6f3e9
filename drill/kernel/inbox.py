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
from collections.abc import Iterator
from typing import Any, TextIO

from drill.kernel import nvrtc, protocol


class Inbox:
    """Iterates over the lines of `stream` as they come, like the stream itself."""

    def __init__(self, stream: TextIO) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True, name="judge-inbox").start()

    def _read(self, stream: TextIO) -> None:
        first = True
        try:
            for line in stream:
                ahead = compile_ahead(protocol.decode(line)) if first else None
                first = False
                self._lines.put(line)
                if ahead is not None:
                    ahead.run()
        except (OSError, ValueError):  # stdin closed: the judge is being stopped
            pass
        finally:
            self._lines.put(None)

    def __iter__(self) -> Iterator[str]:
        while (line := self._lines.get()) is not None:
            yield line


def compile_ahead(request: Any) -> nvrtc.Ahead | None:
    """The build to start for `request`, reserved (the caller runs it), or None when it is no CUDA run."""
    if not isinstance(request, dict) or request.get("op") != "run":
        return None
    job = request.get("job")
    if not isinstance(job, dict) or job.get("language") != "cuda" or not isinstance(request.get("source"), str):
        return None
    filename = str(job.get("filename") or "kernel.cu")  # as the judge names it (drill.kernel.judging)
    return nvrtc.reserve(str(request["source"]), filename, arch=device_arch())


def device_arch() -> str:
    """The arch the judge will compile for: the GPU's, asked of the driver, else DRILL_CUDA_ARCH or the default."""
    if not os.environ.get("DRILL_JUDGE_CPU"):
        try:
            from drill.kernel import cudadrv

            major, minor = cudadrv.compute_capability(0)
            return f"sm_{major}{minor}"
        except Exception:  # no driver, no GPU: compiled only, for the arch the judge uses then
            pass
    return os.environ.get("DRILL_CUDA_ARCH", nvrtc.DEFAULT_ARCH)
