"""The preset tracks (cards/data/tracks.yaml): topic mixes for a mock, and the cards an interview date is planned over."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict


class Track(TypedDict):
    """A preset topic mix: its id, its title and the topics it draws from."""

    id: str
    title: str
    topics: list[str]


def load_tracks(path: Path | None = None) -> dict[str, Track]:
    """The preset topic mixes in cards/data/tracks.yaml, by id."""
    import yaml

    from drill import paths

    path = path or paths.data_files_dir() / "tracks.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    tracks = [
        Track(id=str(t["id"]), title=str(t.get("title") or t["id"]), topics=[str(topic) for topic in t["topics"]])
        for t in data.get("tracks", [])
    ]
    return {t["id"]: t for t in tracks}


def track_topics(track: str) -> frozenset[str]:
    """The topics of a track; KeyError for an unknown id."""
    return frozenset(load_tracks()[track]["topics"])
