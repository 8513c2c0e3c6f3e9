"""Reading a deck the YAML reader refuses one `cards:` item at a time, so one broken card costs only itself."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from drill.cards.model import Card, Problem

_CARDS_KEY = re.compile(r"^cards:[ \t]*(#.*)?$", re.MULTILINE)
_ITEM = re.compile(r"^([ \t]*)- ", re.MULTILINE)
_ITEM_ID = re.compile(r"^[ \t]*(?:- )?id:[ \t]*([^\s#]+)", re.MULTILINE)


def each_card_alone(
    text: str, path: Path, load: Callable[[str, Path], list[Card | Problem]]
) -> list[Card | Problem] | None:
    """A deck the YAML reader refuses, read one `cards:` item at a time (each at its own line numbers), so
    that a card it cannot read costs only that card; None when the file has no such list to split."""
    key = _CARDS_KEY.search(text)
    if key is None:
        return None
    head = text[: key.start()]
    body_at = key.end() + 1
    first = _ITEM.search(text, body_at)
    if first is None:
        return None
    indent = first.group(1)
    starts = [m.start() for m in _ITEM.finditer(text, body_at) if m.group(1) == indent]
    if len(starts) < 2:
        return None
    out: list[Card | Problem] = []
    seen: set[tuple[int, str]] = set()
    for begin, end in zip(starts, [*starts[1:], len(text)]):
        blank = "\n" * (text.count("\n", body_at, begin))  # the item keeps its line numbers
        named = _ITEM_ID.search(text, begin, end)
        for found in load(f"{head}cards:\n{blank}{text[begin:end]}", path):
            if isinstance(found, Problem):
                if (found.line, found.message) in seen:  # the deck's own lines, read with every item
                    continue
                seen.add((found.line, found.message))
                if found.card_id == "-" and named is not None and found.line > head.count("\n") + 1:
                    found = replace(found, card_id=named.group(1).strip("'\""))
            out.append(found)
    return out
