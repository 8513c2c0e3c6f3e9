"""The learner's unsaved kernel edits, kept as `drafts/<card-id>.<ext>` in the data folder.

Every save writes a temporary file and renames it over the draft, so a crash
leaves either the old draft or the new one, never half of one. Starting a card
again from its starter keeps the draft it replaced in
`drafts/before-reset/<card-id>.<ext>`, to be brought back.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

EXTENSIONS = {"cuda": "cu", "triton": "py", "collective": "py"}


def extension_for(language: str) -> str:
    return EXTENSIONS.get(language, "txt")


BACKUP_FOLDER = "before-reset"  # a folder, so no card id's draft can share a backup's name


def draft_path(data_dir: Path, card_id: str, ext: str) -> Path:
    if not card_id or "/" in card_id or "\\" in card_id or card_id.startswith("."):
        raise ValueError(f"not a card id: {card_id!r}")
    return Path(data_dir) / "drafts" / f"{card_id}.{ext.lstrip('.')}"


def backup_path(data_dir: Path, card_id: str, ext: str) -> Path:
    """Where the draft replaced by the card's last start-over is kept."""
    draft = draft_path(data_dir, card_id, ext)
    return draft.parent / BACKUP_FOLDER / draft.name


def has_draft(data_dir: Path, card_id: str, ext: str) -> bool:
    return draft_path(data_dir, card_id, ext).is_file()


def load_draft(data_dir: Path, card_id: str, ext: str) -> str | None:
    return _read(draft_path(data_dir, card_id, ext))


def load_backup(data_dir: Path, card_id: str, ext: str) -> str | None:
    """The draft the card's last start-over replaced, or None."""
    return _read(backup_path(data_dir, card_id, ext))


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # keep the learner's line endings
            return handle.read()
    except FileNotFoundError:
        return None


def save_draft(data_dir: Path, card_id: str, ext: str, text: str) -> Path:
    return _write(draft_path(data_dir, card_id, ext), text)


def save_backup(data_dir: Path, card_id: str, ext: str, text: str) -> Path:
    """Keep `text` (the draft a start-over replaces) until the card's next start-over."""
    return _write(backup_path(data_dir, card_id, ext), text)


def _write(path: Path, text: str) -> Path:
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
