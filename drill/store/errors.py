"""The one error the store raises: a database drill cannot use, said in a line the learner can act on.

Stdlib only: the command line and the app's first paint import this without SQLModel.
"""

from __future__ import annotations

import os
from pathlib import Path

_ELSEWHERE = "or choose another data directory with --data-dir or DRILL_HOME"


class StoreError(Exception):
    """The database at `path` cannot be used; `str()` is one line: what is wrong and what to do.

    `kind` names the case for code that wants to tell them apart: "not_a_database",
    "damaged", "read_only", "newer", "locked", "full" or "cannot_open".
    """

    def __init__(self, path: Path | str, message: str, kind: str = "cannot_open") -> None:
        super().__init__(message)
        self.path = Path(path)
        self.kind = kind

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[StoreError], tuple[Path, str, str]]:  # survives pickling (worker processes)
        return (type(self), (self.path, str(self), self.kind))


def _error_name(exc: BaseException) -> str:
    """SQLite's name for the error (SQLITE_BUSY, SQLITE_READONLY_DIRECTORY, ...), or ''."""
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return str(name)
    orig = getattr(exc, "orig", None)  # an error wrapped by SQLAlchemy
    return str(getattr(orig, "sqlite_errorname", "") or "") if orig is not None else ""


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_busy(exc: BaseException) -> bool:
    """Whether a SQLite error is another connection holding the lock (worth waiting for)."""
    name = _error_name(exc)
    if name:
        return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))
    return "locked" in _reason(exc).lower() or "busy" in _reason(exc).lower()


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def read_only(path: Path, reason: str = "attempt to write a readonly database") -> StoreError:
    path = Path(path).absolute()
    folder = path.parent
    if _is(folder, "dir") and not _writable(folder):
        message = (
            f"{path} cannot be written: the data directory {folder} is read-only ({reason}); "
            f"make it writable, {_ELSEWHERE}"
        )
    else:
        message = f"{path} is read-only ({reason}); make it writable, {_ELSEWHERE}"
    return StoreError(path, message, "read_only")


def newer_schema(path: Path, found: int, latest: int) -> StoreError:
    path = Path(path).absolute()
    return StoreError(
        path,
        f"{path} was written by a newer drill (schema version {found}; this drill knows up to {latest}); "
        "upgrade drill to open it",
        "newer",
    )


def locked(path: Path, waited_s: float, reason: str = "database is locked") -> StoreError:
    path = Path(path).absolute()
    return StoreError(
        path,
        f"{path} is in use by another program ({reason}, still after {waited_s:g} s); "
        "close the other drill and try again",
        "locked",
    )


def from_sqlite(path: Path, exc: BaseException, waited_s: float = 5.0) -> StoreError:
    """The StoreError for a sqlite3 error (or SQLAlchemy's wrapper of one) met on the file at `path`."""
    if isinstance(exc, StoreError):
        return exc
    path = Path(path).absolute()
    name = _error_name(exc)
    reason = _reason(exc)
    low = reason.lower()
    if name == "SQLITE_NOTADB" or "file is not a database" in low:
        return StoreError(
            path,
            f"{path} is not a drill database ({reason}); move it aside and drill will start a new one",
            "not_a_database",
        )
    if name.startswith("SQLITE_CORRUPT") or "malformed" in low:
        return StoreError(
            path,
            f"{path} is damaged ({reason}); restore it from a backup, or move it aside and drill will start a new one",
            "damaged",
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in low or "read-only" in low:
        return read_only(path, reason)
    if is_busy(exc):
        return locked(path, waited_s, reason)
    if name == "SQLITE_FULL" or "disk is full" in low:
        return StoreError(
            path, f"{path} cannot grow: the disk is full ({reason}); free some space and try again", "full"
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in low:
        folder = path.parent
        if _is(folder, "dir") and not _writable(folder) and not _is(path, "there"):
            return read_only(path, reason)
        if _is(path, "dir"):
            return StoreError(path, f"{path} is a folder, not a database ({reason}); move it aside", "cannot_open")
        return StoreError(
            path,
            f"cannot open {path} ({reason}); check that its folder exists and you may write there, {_ELSEWHERE}",
            "cannot_open",
        )
    if name.startswith("SQLITE_IOERR") or "disk i/o error" in low:
        return StoreError(
            path, f"cannot read or write {path} ({reason}); check the disk, then try again", "cannot_open"
        )
    return StoreError(
        path,
        f"{path} is not a database drill can use ({reason}); move it aside and drill will start a new one",
        "not_a_database",
    )


def _is(path: Path, what: str) -> bool:
    """path.is_dir() / path.exists(), False where even looking is not allowed."""
    try:
        return path.is_dir() if what == "dir" else path.exists()
    except OSError:
        return False


def unreachable(path: Path, exc: OSError) -> StoreError:
    """The StoreError for a database file that cannot even be looked at (a folder on the way is closed)."""
    path = Path(path).absolute()
    return StoreError(
        path,
        f"cannot reach {path} ({exc.strerror or exc}); check the permissions of the folders above it, {_ELSEWHERE}",
        "cannot_open",
    )


def from_os_error(path: Path, exc: OSError) -> StoreError:
    """The StoreError for a failure to make (or reach) the data directory that holds `path`."""
    path = Path(path).absolute()
    reason = exc.strerror or str(exc)
    denied = isinstance(exc, PermissionError) or getattr(exc, "errno", None) == 30  # EROFS
    return StoreError(
        path,
        f"cannot create the data directory {path.parent} ({reason}); check that you may write there, {_ELSEWHERE}",
        "read_only" if denied else "cannot_open",
    )


__all__ = [
    "StoreError",
    "from_sqlite",
    "from_os_error",
    "is_busy",
    "locked",
    "newer_schema",
    "read_only",
    "unreachable",
]
