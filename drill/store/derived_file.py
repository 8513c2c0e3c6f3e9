"""What the files of derived data beside the database share (the replay cache, the kept plan): each is written
whole or not at all, and is keyed on the code that made it, read by content.

Both can always be made again, so a folder drill may not write to, or a file that cannot be read, only means the
work is done afresh next time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
from pathlib import Path

STUDY = Path(__file__).resolve().parent.parent / "study"


def write_atomically(path: Path, text: bytes, prefix: str) -> None:
    """Replace `path` with `text` in one step (a reader sees the old file or the new one, never part of one); a
    file that cannot be written is left as it was."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    except OSError:  # a folder drill may not write to
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@functools.cache
def file_digest(path: Path) -> str | None:
    """The file's SHA-256 by content (None when it cannot be read), once a process: code does not change under a
    running drill, and a start reads the keys of both files."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
