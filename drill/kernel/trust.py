"""Which deck folders the learner lets run Python in the kernel judge.

A kernel card's harness is Python that the judge imports, so it can do
anything the learner can. Bundled cards use the harnesses shipped with drill.
A card from a deck added with `--decks` that brings its own harness (or its
own Triton starter, which the judge imports when there is no draft) is locked
until the learner reads that code and runs `drill trust FOLDER`.

Trust is kept in `<data dir>/trusted.json`: for each folder, its resolved
path and the sha256 of every Python file under its `kernels/` folder (the
harnesses in `kernels/harness/`, the starters, any helper a harness could
import from there). A file that is changed, added or removed locks the
folder's cards again, until the learner trusts it once more.

The judge never imports that Python the ordinary way: it reads each file once,
checks those bytes against the hash recorded here (see `pins`, and
drill.kernel_shared.trusted_source), and compiles and runs the same bytes, so no `__pycache__`
file is read or written for it. A folder holding compiled Python (`.pyc`) is
still locked, so that what the learner reads is all there is.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drill import paths
from drill.cards.model import Card
from drill.kernel_shared.protocol import DeckPins
from drill.kernel_shared.trusted_source import trust_command

TRUST_FILE = "trusted.json"
TRUST_VERSION = 1
KERNELS = "kernels"
HARNESS = "kernels/harness"
NOT_A_FILE = "not a regular file inside the folder"
_MAX_LISTED = 3


class NothingToTrust(ValueError):
    """`drill trust` on a folder that holds no harness or other Python for the judge."""


@dataclass(frozen=True)
class Trusted:
    """One trusted folder as recorded: its resolved path, when, and the hash of each Python file."""

    folder: str
    trusted_at: str
    files: dict[str, str]


@dataclass(frozen=True)
class Changes:
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def summary(self) -> str:
        parts = []
        for word, names in (("changed", self.changed), ("added", self.added), ("removed", self.removed)):
            if names:
                shown = ", ".join(names[:_MAX_LISTED]) + (
                    f" and {len(names) - _MAX_LISTED} more" if len(names) > _MAX_LISTED else ""
                )
                parts.append(f"{word}: {shown}")
        return "; ".join(parts)


# --- the folder's Python ---------------------------------------------------------


def deck_folder(path: str | os.PathLike[str]) -> Path:
    """The folder a deck path stands for: a deck file's own folder, or the folder itself; resolved."""
    p = Path(path).expanduser()
    if p.is_file():
        p = p.parent
    return p.resolve()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _regular_inside(path: Path, folder: Path) -> bool:
    """A plain file (never a pipe or a device, which could block a read) inside `folder` after links."""
    try:
        target = path.resolve()
        return target.is_relative_to(folder) and stat.S_ISREG(target.stat().st_mode)
    except (OSError, RuntimeError, ValueError):
        return False


def python_files(folder: Path) -> dict[str, str]:
    """sha256 of every `*.py` under `<folder>/kernels/`, keyed by its path relative to `folder`.

    A name that is a link leading out of the folder, a pipe or a device is
    listed with NOT_A_FILE instead of a hash: it is never read.
    """
    folder = Path(folder).resolve()
    root = folder / KERNELS
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    if not root.resolve().is_relative_to(folder):  # kernels/ itself is a link to somewhere else
        return {KERNELS: NOT_A_FILE}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.relative_to(root).parts:
            continue
        rel = path.relative_to(folder).as_posix()
        out[rel] = _sha256(path) if _regular_inside(path, folder) else NOT_A_FILE
    return out


def harness_files(files: dict[str, str]) -> list[str]:
    return [rel for rel in files if rel.startswith(HARNESS + "/")]


def compiled_python(folder: Path) -> list[Path]:
    """Compiled Python under `<folder>/kernels/` that could run instead of the source the learner read.

    Python loads a `.pyc` lying beside the sources (with no `.py`) as a module,
    and a hash-based `__pycache__` file whenever its source is present, whatever
    code it holds. A timestamped `__pycache__` file is what Python writes for
    itself after an import; it is used only while its source is unchanged.
    """
    folder = Path(folder).resolve()
    root = folder / KERNELS
    if not root.is_dir() or not root.resolve().is_relative_to(folder):
        return []
    found = []
    for path in sorted(root.rglob("*.pyc")):
        if path.parent.name != "__pycache__":
            found.append(path)
            continue
        try:
            with path.open("rb") as fh:
                header = fh.read(8) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""
        except OSError:
            continue
        if len(header) == 8 and int.from_bytes(header[4:8], "little") & 1:  # PEP 552: hash-based
            found.append(path)
    return found


# --- the record ------------------------------------------------------------------


def trust_file(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / TRUST_FILE


def load_trusted(data_dir: str | os.PathLike[str]) -> dict[str, Trusted]:
    """The trusted folders, by resolved path. An unreadable record trusts nothing."""
    try:
        data = json.loads(trust_file(data_dir).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, dict):
        return {}
    out = {}
    for folder, entry in folders.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
            continue
        files = {str(k): str(v) for k, v in entry["files"].items()}
        out[str(folder)] = Trusted(str(folder), str(entry.get("trusted_at", "")), files)
    return out


def _save(data_dir: str | os.PathLike[str], trusted: dict[str, Trusted]) -> Path:
    """Write the record atomically: a temporary file in the same folder, renamed over the old one."""
    path = trust_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "version": TRUST_VERSION,
        "folders": {
            t.folder: {"trusted_at": t.trusted_at, "files": t.files}
            for t in sorted(trusted.values(), key=lambda t: t.folder)
        },
    }
    fd, tmp = tempfile.mkstemp(prefix=".trusted-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def trust(folder: str | os.PathLike[str], data_dir: str | os.PathLike[str]) -> tuple[Trusted, Path]:
    """Record the folder's Python as trusted; returns the record and where it was written.

    Raises NothingToTrust when the folder has no Python under `kernels/`, and
    ValueError when it holds compiled Python or files that cannot be read.
    """
    folder = deck_folder(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such folder: {folder}")
    files = python_files(folder)
    if not files:
        raise NothingToTrust(
            f"{folder} has no harness: no .py files under {folder / HARNESS}/ (or elsewhere under {folder / KERNELS}/)"
        )
    unreadable = [rel for rel, digest in files.items() if digest == NOT_A_FILE]
    if unreadable:
        raise ValueError(
            f"not trusted: {', '.join(unreadable)} in {folder} is a link leading out of the folder or not a plain file"
        )
    compiled = compiled_python(folder)
    if compiled:
        raise ValueError(
            f"not trusted: {compiled[0]} is compiled Python that could run instead of the source you read; delete it first"
        )
    record = Trusted(str(folder), dt.datetime.now().astimezone().isoformat(timespec="seconds"), files)
    trusted = load_trusted(data_dir)
    trusted[record.folder] = record
    return record, _save(data_dir, trusted)


def revoke(folder: str | os.PathLike[str], data_dir: str | os.PathLike[str]) -> bool:
    """Forget a trusted folder; False when it was not trusted."""
    trusted = load_trusted(data_dir)
    keys = {str(deck_folder(folder)), str(Path(folder).expanduser().absolute())}
    hit = [k for k in keys if k in trusted]
    if not hit:
        return False
    for k in hit:
        del trusted[k]
    _save(data_dir, trusted)
    return True


def changes(record: Trusted, current: dict[str, str]) -> Changes:
    return Changes(
        changed=tuple(sorted(k for k in record.files.keys() & current.keys() if record.files[k] != current[k])),
        added=tuple(sorted(current.keys() - record.files.keys())),
        removed=tuple(sorted(record.files.keys() - current.keys())),
    )


# --- a card ------------------------------------------------------------------------


def deck_python(card: Card) -> list[Path]:
    """The Python from the card's own deck folder that the judge would import for it.

    The harness, and a Triton starter (run when the learner has no draft);
    empty when both are bundled with drill. Raises CardFileError for a card
    whose file names may not be used.
    """
    from drill.kernel.cards import kernel_files

    files = kernel_files(card)
    bundled = paths.kernels_dir().resolve()
    imported = [files.harness] + ([files.starter] if files.starter.suffix == ".py" else [])
    return [path for path in imported if not path.resolve().is_relative_to(bundled)]


def pins(card: Card, data_dir: str | os.PathLike[str] | None) -> DeckPins:
    """For the judge's job: the card's deck folder and the sha256 the learner trusted for each of its files.

    Empty when the judge runs no Python from the card's deck. The hashes are the
    recorded ones, not the files' as they are now: the judge compares what it
    reads with what the learner read (a file not trusted has no hash, so it is
    refused). Raises CardFileError like deck_python.
    """
    if not deck_python(card):
        return {}
    folder = Path(card.path).parent.resolve()
    record = load_trusted(data_dir).get(str(folder)) if data_dir is not None else None
    files = record.files if record is not None else {}
    trusted = {str((folder / rel).resolve()): digest for rel, digest in files.items() if digest != NOT_A_FILE}
    return {"deck_folder": str(folder), "trusted": trusted}


def locked_reason(card: Card, data_dir: str | os.PathLike[str]) -> str | None:
    """None when the card may run in the judge; else one line saying what is locked and how to unlock it.

    Only kernel cards run code. A kernel card is locked when it names a file
    outside its folders (it can never run), or when it brings Python of its
    own from a deck folder the learner has not trusted, or that changed since.
    """
    if card.kind != "kernel":
        return None
    from drill.kernel.cards import CardFileError

    try:
        own = deck_python(card)
    except CardFileError as exc:
        return f"kernel card {card.id} cannot run: {exc} (see `drill check`)"
    if not own:
        return None
    folder = Path(card.path).parent.resolve()
    shown = " and ".join(str(p) for p in own)
    compiled = compiled_python(folder)
    if compiled:
        return (
            f"kernel card {card.id} is locked: {compiled[0]} is compiled Python that could run instead of the source;"
            f" delete it, then run `{trust_command(folder)}` after reading {shown}"
        )
    record = load_trusted(data_dir).get(str(folder))
    if record is None:
        return f"kernel card {card.id} runs Python from {shown}, which you have not trusted; run `{trust_command(folder)}` after reading it"
    try:
        current = python_files(folder)
    except OSError as exc:
        return f"kernel card {card.id} is locked: cannot read the Python in {folder / KERNELS}: {exc}"
    diff = changes(record, current)
    missing = [p for p in own if p.resolve().relative_to(folder).as_posix() not in record.files]
    if diff or missing or NOT_A_FILE in current.values():
        what = diff.summary() or "not among the files you trusted"
        return (
            f"kernel card {card.id} runs Python from {shown}, which changed since you trusted it ({what});"
            f" run `{trust_command(folder)}` after reading it again"
        )
    return None


def folder_state(record: Trusted) -> str:
    """'ok', 'missing' or what changed: for `drill trust --list`."""
    folder = Path(record.folder)
    if not folder.is_dir():
        return "missing"
    try:
        diff = changes(record, python_files(folder))
    except OSError as exc:
        return f"unreadable: {exc}"
    if compiled_python(folder):
        return "locked: holds compiled Python"
    return f"changed ({diff.summary()})" if diff else "ok"


__all__ = [
    "Changes",
    "NothingToTrust",
    "Trusted",
    "compiled_python",
    "deck_folder",
    "deck_python",
    "folder_state",
    "harness_files",
    "load_trusted",
    "locked_reason",
    "pins",
    "python_files",
    "revoke",
    "trust",
    "trust_file",
]
