"""Run requests from another machine (`python3 -m drill.judge --remote`, started over SSH on the GPU host).

The judge reads them with one change to each run request: the harness named by the learner's machine (a path there) is looked up
by file name among this host's bundled kernel harnesses, so the host judges with
its own installed copy and never opens a path chosen by the other side. A
harness this host does not have gets a one-line error in the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO


def local_harness(name: str) -> Path:
    """This host's bundled harness of that file name (only a bare file name is taken from the request)."""
    from drill import paths

    return paths.kernels_dir() / "harness" / Path(name).name


def rewrite(line: str) -> str:
    """A request line with its job's harness path replaced by this host's copy."""
    try:
        request: Any = json.loads(line)
    except ValueError:
        return line
    if not isinstance(request, dict) or request.get("op") != "run" or not isinstance(request.get("job"), dict):
        return line
    job = dict(request["job"])
    harness = job.get("harness")
    if isinstance(harness, str) and harness:
        job["harness"] = str(local_harness(harness))
    return json.dumps({**request, "job": job}) + "\n"


class Requests:
    """stdin, with each run request's harness rewritten as it is read."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __iter__(self) -> Iterator[str]:
        for line in self.stream:
            yield rewrite(line)
