"""Where the bundled decks, kernels and answers live, and where learner data goes."""

from __future__ import annotations

import os
from pathlib import Path

from drill.words import shortened

_PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    """A bundled folder: inside an installed wheel, else the checkout's top level."""
    installed = _PACKAGE / "_bundled" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def cards_dir() -> Path:
    return _bundled("cards")


def data_files_dir() -> Path:
    """Model configurations, GPU specifications and the topic list."""
    return cards_dir() / "data"


def kernels_dir() -> Path:
    return _bundled("kernels")


def answers_dir() -> Path:
    return _bundled("answers")


def chosen_data_dir(override: str | os.PathLike[str] | None = None) -> Path | None:
    """The data directory the learner named: --data-dir, else DRILL_HOME; None when neither is given."""
    if override:
        return Path(override).expanduser()
    if os.environ.get("DRILL_HOME"):
        return Path(os.environ["DRILL_HOME"]).expanduser()
    return None


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The learner's data directory: --data-dir, else DRILL_HOME, else the platform's."""
    path = chosen_data_dir(override)
    if path is None:
        from platformdirs import user_data_dir

        path = Path(user_data_dir("drill", appauthor=False))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(
            f"cannot use {path} as the data directory ({exc.strerror or exc}); "
            "choose another with --data-dir or DRILL_HOME"
        ) from exc
    return path


class DataDirError(Exception):
    """The data directory cannot be created or used; the message says which and what to do."""


MAX_PATH_BYTES = 4096  # Linux's PATH_MAX: no longer path can be opened, so no longer argument is a path


def overlong_argument(argv: list[str]) -> str | None:
    """Words for the first command-line argument longer than MAX_PATH_BYTES; None when there is none.

    Paths are the arguments most given, and one that long cannot be opened (the
    system answers "File name too long"); no other argument needs that length.
    """
    for token in argv:
        size = len(token.encode("utf-8", "surrogateescape"))
        if size > MAX_PATH_BYTES:
            return f"an argument is {size:,} bytes long, more than the {MAX_PATH_BYTES:,} a path may have: {shortened(token)}"
    return None
