"""When each card's Anki note last changed: the modification time an export gives the note.

Anki's importer updates a note only when the package's modification time is newer
than the one it holds. So an unchanged note must keep its time from one export to the
next, and an edited one must get a later time. A time derived from the text alone
would keep the first but not the second (a hash gives an edited note an earlier time
as often as a later one), so the data folder remembers each note's content hash and
the time it was first exported with that content.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "anki-notes.json"


@dataclass(frozen=True)
class NoteTime:
    """A note's content hash and the modification time (seconds since the epoch) it was exported with."""

    content: str
    mod: int


def times_path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def load_times(path: Path) -> dict[str, NoteTime]:
    """The times an earlier export remembered, by card id; {} when there are none or the file is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    times: dict[str, NoteTime] = {}
    for card_id, entry in data.items():
        if isinstance(entry, dict) and isinstance(entry.get("content"), str) and isinstance(entry.get("mod"), int):
            times[card_id] = NoteTime(entry["content"], entry["mod"])
    return times


def stamp(contents: Mapping[str, str], known: Mapping[str, NoteTime], now: int) -> dict[str, NoteTime]:
    """Each note's time: the one remembered while its content is the same, else `now` (later than any before)."""
    stamped: dict[str, NoteTime] = {}
    for card_id, content in contents.items():
        before = known.get(card_id)
        if before is not None and before.content == content:
            stamped[card_id] = before
        else:
            later = now if before is None else max(now, before.mod + 1)
            stamped[card_id] = NoteTime(content, later)
    return stamped


def save_times(path: Path, times: Mapping[str, NoteTime], known: Mapping[str, NoteTime]) -> None:
    """Remember `times`, keeping what was known of cards this export left out (a deck not given this time)."""
    merged = {**known, **times}
    data = {card_id: {"content": t.content, "mod": t.mod} for card_id, t in sorted(merged.items())}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
