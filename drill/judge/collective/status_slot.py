"""A rank's status slot: what the rank is doing now, in words, readable by the judge while the rank hangs.

A few hundred bytes of a file mapped into memory. The rank writes a line before
and after every point-to-point operation (no system call: it is a store to
memory), and the judge reads it when a rank hangs or dies, so that the verdict
can say "rank 1: op 3: waiting for irecv from rank 0 (line 21)".
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

SLOT_BYTES = 1024
_LENGTH_BYTES = 2


class StatusSlot:
    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if create:
            self.path.write_bytes(b"\0" * SLOT_BYTES)
        fd = os.open(self.path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, SLOT_BYTES)
        finally:
            os.close(fd)

    def set(self, text: str) -> None:
        data = text.encode("utf-8", "replace")[: SLOT_BYTES - _LENGTH_BYTES]
        self._map[_LENGTH_BYTES : _LENGTH_BYTES + len(data)] = data
        self._map[:_LENGTH_BYTES] = len(data).to_bytes(_LENGTH_BYTES, "little")

    def get(self) -> str:
        length = min(int.from_bytes(self._map[:_LENGTH_BYTES], "little"), SLOT_BYTES - _LENGTH_BYTES)
        return self._map[_LENGTH_BYTES : _LENGTH_BYTES + length].decode("utf-8", "replace")

    def close(self) -> None:
        self._map.close()
