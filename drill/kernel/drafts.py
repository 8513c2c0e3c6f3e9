"""The learner's unsaved kernel edits, kept as `drafts/<card-id>.<ext>` in the data folder.

Every save writes a temporary file and renames it over the draft, so a crash
leaves either the old draft or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

EXTENSIONS = {"cuda": "cu", "triton": "py"}


def extension_for(language: str) -> str:
    return EXTENSIONS.get(language, "txt")


def draft_path(data_dir: Path, card_id: str, ext: str) -> Path:
    if not card_id or "/" in card_id or "\\" in card_id or card_id.startswith("."):
        raise ValueError(f"not a card id: {card_id!r}")
    return Path(data_dir) / "drafts" / f"{card_id}.{ext.lstrip('.')}"


def has_draft(data_dir: Path, card_id: str, ext: str) -> bool:
    return draft_path(data_dir, card_id, ext).is_file()


def load_draft(data_dir: Path, card_id: str, ext: str) -> str | None:
    path = draft_path(data_dir, card_id, ext)
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # keep the learner's line endings
            return handle.read()
    except FileNotFoundError:
        return None


def save_draft(data_dir: Path, card_id: str, ext: str, text: str) -> Path:
    path = draft_path(data_dir, card_id, ext)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def discard_draft(data_dir: Path, card_id: str, ext: str) -> bool:
    """Delete the draft; True if there was one."""
    try:
        draft_path(data_dir, card_id, ext).unlink()
    except FileNotFoundError:
        return False
    return True
