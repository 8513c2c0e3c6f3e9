"""The deck cache: the decks as loaded, kept as JSON in the data directory and reused while no file has changed."""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

from drill import paths
from drill.cards.loader import DeckSet, deck_files, known_topics, load_decks, use_cached_topics
from drill.cards.model import Card, Problem

CACHE_VERSION = 4  # the layout of the cache (its key, and what it holds); bump it when that changes
CACHE_FILE = "decks.json"
OLD_CACHE_FILES = ("decks.pickle",)  # what earlier versions wrote: never read, removed when a new cache is written
UNKNOWN_VERSION = "unknown"  # drill's version when it runs from a checkout that is not installed
# The modules whose classes and checks shape what the cache holds: an edit to one of
# them (a new Card field, a new check) must not be answered from an older cache, even
# in an editable install whose version number stays the same.
_SHAPING_SOURCES = ("model.py", "kinds.py", "loader.py", "yaml_guards.py", "deck_cache.py")


def drill_version() -> str:
    """This drill's version (the package's own, so no metadata lookup slows start-up)."""
    import drill

    return getattr(drill, "__version__", UNKNOWN_VERSION)


def load_decks_cached(roots: Iterable[Path] | None, cache_dir: Path) -> DeckSet:
    """load_decks, reusing `decks.json` in `cache_dir` while no deck, topic or loader file has changed.

    Start-up reads a few hundred cards; parsing them costs more than the rest of
    the first paint, and they rarely change between two days of practice. The
    cache is keyed on drill's version and on the content of every file read, so
    an edit is seen even when it keeps the file's size and modification time.
    It holds the topic list too (known_topics), so a start from it reads no YAML.

    One pass: each deck file is read once, and the bytes the key is made of are
    the bytes parsed, so a file edited meanwhile is never cached under the old key.

    The cache is plain JSON, never pickle: anyone who can write to the data
    directory could otherwise run code at the next start. Its first line is the
    key, compared as text before the rest is parsed; a cache that is missing,
    old, for other files or unreadable in any way is rebuilt.
    """
    roots = [paths.cards_dir()] if roots is None else list(roots)
    read = read_deck_files(roots)
    if read is None:
        return load_decks(roots)
    key = _key(roots, read)
    cache = Path(cache_dir) / CACHE_FILE
    cached = _read_cache(cache, key)
    if cached is not None:
        decks, topics = cached
        if topics is not None:
            use_cached_topics(topics)
        return decks
    decks = load_decks(roots, read=read)
    topics = known_topics() if known_topics.cache_info().currsize else None  # read while loading the cards
    _write_cache(cache, key, decks, topics)
    return decks


def read_deck_files(roots: list[Path]) -> dict[Path, bytes] | None:
    """The bytes of every file the decks under `roots` are read from (the topic list too); None when one cannot
    be read (the decks are then loaded afresh, uncached, and the loader names the file)."""
    files = [*deck_files(roots), paths.data_files_dir() / "topics.yaml"]
    try:
        return {path: path.read_bytes() for path in files}
    except OSError:
        return None


def cache_key(roots: list[Path]) -> str | None:
    """The key of what `roots` load to: drill's version, the shaping code, and every file read, by content.

    None when a file cannot be read (the decks are then loaded afresh, uncached).
    """
    read = read_deck_files(roots)
    return None if read is None else _key(roots, read)


def _key(roots: list[Path], read: dict[Path, bytes]) -> str:
    hashes = [[str(path), hashlib.sha256(data).hexdigest()] for path, data in read.items()]
    here = Path(__file__).resolve().parent
    code = [_sha256(here / name) if (here / name).is_file() else None for name in _SHAPING_SOURCES]
    return json.dumps([CACHE_VERSION, drill_version(), code, [str(r) for r in roots], hashes], ensure_ascii=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class _NotPlain(ValueError):
    """A value JSON would not give back as it is (a date, a set, a number as a mapping's key...)."""


def _plain(value: Any, depth: int = 0) -> Any:
    """`value` itself when JSON gives it back unchanged; else _NotPlain (that deck set is not cached)."""
    if depth > 100:
        raise _NotPlain("nested too deeply")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if type(value) is list:
        return [_plain(v, depth + 1) for v in value]
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    raise _NotPlain(type(value).__name__)


_PROBLEM_FIELDS = ("path", "line", "card_id", "message")


def _card_json(card: Card) -> dict[str, Any]:
    return {
        "id": card.id,
        "kind": card.kind,
        "topic": card.topic,
        "prompt": card.prompt,
        "answer": card.answer,
        "tags": list(card.tags),
        "rubric": list(card.rubric),
        "sources": list(card.sources),
        "follow_ups": list(card.follow_ups),
        "fields": _plain(dict(card.fields)),
        "deck": card.deck,
        "path": str(card.path),
        "line": card.line,
        "content_hash": card.content_hash,
    }


_CARD_TEXTS = ("id", "kind", "topic", "prompt", "answer", "deck", "content_hash", "path")
_CARD_LISTS = ("tags", "rubric", "sources", "follow_ups")
_CARD_KEYS = frozenset((*_CARD_TEXTS, *_CARD_LISTS, "fields", "line"))


def _card_from_json(data: dict[str, Any], paths_seen: dict[str, Path]) -> Card:
    """A card as _card_json wrote it, every field's type checked (ValueError otherwise); `paths_seen` shares
    one Path among a file's cards. Plain loops, not comprehensions: this runs for every card at each start."""
    if type(data) is not dict or data.keys() != _CARD_KEYS:
        raise ValueError("a card of the wrong shape")
    if type(data["fields"]) is not dict or type(data["line"]) is not int:
        raise ValueError("a card of the wrong shape")
    for name in _CARD_TEXTS:
        if type(data[name]) is not str:
            raise ValueError(f"{name} is not text")
    lists: dict[str, tuple[str, ...]] = {}
    for name in _CARD_LISTS:
        values = data[name]
        if type(values) is not list:
            raise ValueError(f"{name} is not a list of text")
        try:
            "".join(values)  # every item text (JSON gives no other kind of text): one C call, not a loop per item
        except TypeError:
            raise ValueError(f"{name} is not a list of text") from None
        lists[name] = tuple(values)
    path = paths_seen.get(data["path"])
    if path is None:
        path = Path(data["path"])
        paths_seen[data["path"]] = path
    return Card(
        id=data["id"],
        kind=data["kind"],
        topic=data["topic"],
        prompt=data["prompt"],
        answer=data["answer"],
        fields=data["fields"],
        deck=data["deck"],
        path=path,
        line=data["line"],
        content_hash=data["content_hash"],
        **lists,
    )


def _problem_from_json(data: list[Any]) -> Problem:
    path, line, card_id, message = data
    if not (isinstance(path, str) and isinstance(line, int) and isinstance(card_id, str) and isinstance(message, str)):
        raise ValueError("a problem of the wrong shape")
    return Problem(path, line, card_id, message)


def _is_topic_list(topics: Any) -> bool:
    """Whether the cache's topic list has the shape known_topics gives: each topic a mapping, by id."""
    return isinstance(topics, dict) and all(isinstance(t, dict) for t in topics.values())


def _read_cache(cache: Path, key: str) -> tuple[DeckSet, dict[str, dict[str, Any]] | None] | None:
    """The decks and topic list the cache holds for `key`; None when it holds anything else or cannot be read."""
    try:
        with cache.open("rb") as fh:
            if fh.readline().rstrip(b"\n") != key.encode("ascii"):
                return None  # another drill, other files, or not a cache at all: the body is never parsed
            body = json.loads(fh.read())
        paths_seen: dict[str, Path] = {}
        cards: dict[str, Card] = {}
        for data in body["cards"]:
            card = _card_from_json(data, paths_seen)
            cards[card.id] = card
        decks = DeckSet(
            cards=cards,
            problems=[_problem_from_json(p) for p in body["problems"]],
            warnings=[_problem_from_json(p) for p in body["warnings"]],
        )
        topics = body["topics"]
        if topics is not None and not _is_topic_list(topics):
            return None
        return decks, topics
    except Exception:  # whatever is wrong with it (cut short, edited, another layout), the decks are read again
        return None


def _write_cache(cache: Path, key: str, decks: DeckSet, topics: dict[str, dict[str, Any]] | None) -> None:
    """Write the cache atomically; decks holding values JSON would change are not cached (read each start)."""
    import os
    import tempfile

    try:
        body = {
            "cards": [_card_json(c) for c in decks.cards.values()],
            "problems": [[getattr(p, f) for f in _PROBLEM_FIELDS] for p in decks.problems],
            "warnings": [[getattr(p, f) for f in _PROBLEM_FIELDS] for p in decks.warnings],
            "topics": _plain(topics),
        }
        text = key + "\n" + json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    except (_NotPlain, TypeError, ValueError):
        return
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)  # a first start: the data folder is not made yet
        fd, tmp = tempfile.mkstemp(prefix=".decks-", suffix=".tmp", dir=cache.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, cache)
        for old in OLD_CACHE_FILES:
            (cache.parent / old).unlink(missing_ok=True)
    except (OSError, UnicodeEncodeError):  # a deck path that is not valid UTF-8: such decks are read each start
        with contextlib.suppress(OSError):
            os.unlink(tmp)
