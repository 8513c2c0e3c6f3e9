"""The preset tracks (cards/data/tracks.yaml): topic mixes for a mock, and the cards an interview date is planned over."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_tracks(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The preset topic mixes in cards/data/tracks.yaml, by id."""
    import yaml

    from drill import paths

    path = path or paths.data_files_dir() / "tracks.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {t["id"]: t for t in data.get("tracks", [])}


def track_topics(track: str) -> frozenset[str]:
    """The topics of a track; KeyError for an unknown id."""
    return frozenset(load_tracks()[track]["topics"])
