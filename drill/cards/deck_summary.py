"""A summary of the decks for progress figures: each card's id, topic and kind (and a kernel card's target).

`drill stats` needs no prompt, answer or rubric: with 10,000 cards, building every
Card from the deck cache took half of its time. The summary is kept beside the deck
cache (drill.cards.deck_cache), under the same key, so it is current exactly when
that cache is; a miss loads the decks through the cache and writes both.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from drill import paths
from drill.cards.deck_cache import cache_key, load_decks_cached
from drill.cards.loader import DeckSet, known_topics, use_cached_topics
from drill.cards.model import Problem

SUMMARY_VERSION = 1  # the layout of the summary file; bump it when that changes
SUMMARY_FILE = "decks-summary.json"
KEPT_FIELDS = ("target_pct",)  # the only kind-specific fields progress figures read (kernel cards' targets)


@dataclass(frozen=True, slots=True)
class CardSummary:
    """What progress figures read of one card."""

    id: str
    topic: str
    kind: str
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass
class DeckSummary:
    """The cards of the decks, summarised, and how many problems left cards out."""

    cards: dict[str, CardSummary] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def left_out(self) -> str:
        """The deck set's one line about cards left out (DeckSet.left_out)."""
        return DeckSet(problems=self.problems).left_out()


def summarise(decks: DeckSet) -> DeckSummary:
    cards = {}
    for card in decks.cards.values():
        kept = {name: card.fields[name] for name in KEPT_FIELDS if name in card.fields}
        cards[card.id] = CardSummary(card.id, card.topic, card.kind, kept)
    return DeckSummary(cards, list(decks.problems))


def load_summary_cached(roots: Iterable[Path] | None, cache_dir: Path) -> DeckSummary:
    """The decks' summary, read from `cache_dir` while no deck, topic or loader file has changed."""
    roots = [paths.cards_dir()] if roots is None else list(roots)
    key = cache_key(roots)
    if key is None:
        return summarise(load_decks_cached(roots, cache_dir))
    line = json.dumps([SUMMARY_VERSION, key], ensure_ascii=True)
    path = Path(cache_dir) / SUMMARY_FILE
    found = _read(path, line)
    if found is not None:
        return found
    summary = summarise(load_decks_cached(roots, cache_dir))
    topics = known_topics()  # the deck cache has given it, or the load read it
    _write(path, line, summary, topics)
    return summary


def _read(path: Path, line: str) -> DeckSummary | None:
    """The summary the file holds for `line`; None when it holds anything else or cannot be read."""
    try:
        with path.open("rb") as fh:
            if fh.readline().rstrip(b"\n") != line.encode("ascii"):
                return None
            body = json.loads(fh.read())
        cards = {}
        for card_id, topic, kind, kept in body["cards"]:
            if not (type(card_id) is str and type(topic) is str and type(kind) is str and type(kept) is dict):
                return None
            cards[card_id] = CardSummary(card_id, topic, kind, kept)
        problems = [Problem(*p) for p in body["problems"]]
        topics = body["topics"]
        if not isinstance(topics, dict):
            return None
        use_cached_topics(topics)
        return DeckSummary(cards, problems)
    except Exception:  # cut short, edited, another layout: the decks are summarised again
        return None


def _write(path: Path, line: str, summary: DeckSummary, topics: dict[str, dict[str, object]]) -> None:
    """Write the summary atomically; a folder drill may not write to keeps none (it is summarised each time)."""
    import os
    import tempfile

    body = {
        "cards": [[c.id, c.topic, c.kind, dict(c.fields)] for c in summary.cards.values()],
        "problems": [[p.path, p.line, p.card_id, p.message] for p in summary.problems],
        "topics": topics,
    }
    try:
        text = line + "\n" + json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a value JSON cannot hold: no summary is kept
        return
    # a deck folder named in bytes that are not UTF-8 cannot be written as UTF-8: such decks are summarised each time
    with contextlib.suppress(OSError, UnicodeEncodeError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".decks-summary.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
