"""Reading deck Python as trusted: the bytes of a file under a deck folder run only if they hash as the learner trusted.

The app records the hashes (drill.kernel.trust) and puts them in the job
(`DeckPins`); the judge reads each file once through `checked_source` and
compiles those same bytes.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from drill.kernel_shared.protocol import DeckPins


@dataclass(frozen=True)
class Pins:
    """What `pins` put in a job, read back: Python under `folder` runs only if its bytes hash as trusted."""

    folder: Path | None = None
    hashes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_job(cls, job: DeckPins) -> Pins:
        folder = job.get("deck_folder")
        trusted = job.get("trusted")
        if not isinstance(folder, str) or not folder:
            return cls()
        hashes = {str(k): str(v) for k, v in trusted.items()} if isinstance(trusted, dict) else {}
        return cls(Path(folder), hashes)

    def covers(self, path: Path) -> bool:
        """Whether `path` (links followed) lies in the deck folder, so that it runs only as trusted."""
        return self.folder is not None and path.resolve().is_relative_to(self.folder)


class NotTrusted(ImportError):
    """Deck Python that is not, byte for byte, what the learner trusted."""


def checked_source(path: Path, pinned: Pins) -> bytes:
    """The file's bytes, read once; under the deck folder they must hash as trusted, else NotTrusted.

    The caller compiles these same bytes: nothing read later (a file swapped in
    meanwhile, bytecode in `__pycache__`) can take their place.
    """
    with path.open("rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # a pipe or a device could block the judge
            raise NotTrusted(f"{path} is not a plain file")
        data = fh.read()
    if not pinned.covers(path):
        return data
    expected = pinned.hashes.get(str(path.resolve()))
    folder = pinned.folder or path.parent
    if expected is None:
        raise NotTrusted(f"{path} is not among the files you trusted; run `{trust_command(folder)}` after reading it")
    if hashlib.sha256(data).hexdigest() != expected:
        raise NotTrusted(f"{path} changed since you trusted it; run `{trust_command(folder)}` after reading it again")
    return data


def trust_command(folder: Path) -> str:
    """The command that trusts `folder` again, quoted for a shell."""
    return f"drill trust {shlex.quote(str(folder))}"
