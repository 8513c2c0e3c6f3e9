"""Searching every card by words, phrases and filters, and reading one card's review history.

The index is built once per browser; a search then costs one pass over plain
strings, so it keeps up with typing on a deck of 10,000 cards
(bench/browse.py measures it).
"""

from __future__ import annotations

import datetime as dt
import difflib
import random
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from drill.cards.model import Card
from drill.store.fast import DB_NAME, _read
from drill.store.records import CardState

FILTERS = ("topic", "kind", "tag", "is", "id")
# Split once per query: key:"a phrase", "a phrase" (closed or still being typed), or a word.
_TOKENS = re.compile(r'(\w+):"([^"]*)"?|"([^"]*)"?|(\S+)')


def state_labels(state: CardState | None, today: dt.date) -> tuple[str, ...]:
    """Where the card stands: its schedule word first (new, due, learning, review), then leech, suspended, buried.

    Learning means the first two SM-2 steps (1 and 6 days), or starting over after a lapse.
    """
    if state is None or state.is_new:
        labels = ["new"]
    else:
        buried = state.buried_until is not None and state.buried_until > today
        if state.sm2.due is not None and state.sm2.due <= today and not state.suspended and not buried:
            labels = ["due"]
        else:
            labels = ["learning" if state.sm2.repetitions < 2 else "review"]
    if state is not None:
        if state.leech:
            labels.append("leech")
        if state.suspended:
            labels.append("suspended")
        if state.buried_until is not None and state.buried_until > today:
            labels.append("buried")
    return tuple(labels)


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def _flat_corpus(text: str) -> str:
    """`_flat` for megabytes: line breaks and tabs become spaces and runs of spaces one (C loops, no word list)."""
    text = text.lower()
    for blank in "\n\t\r\f\v\xa0":
        text = text.replace(blank, " ")
    while "  " in text:
        text = text.replace("  ", " ")
    return text


# the names the browser's list shows for two kinds: typed after `kind:` they find those kinds too
SHORT_KINDS = {"memory_ledger": "ledger", "shape_trace": "shapes"}
KIND_ALIASES = {short: kind for kind, short in SHORT_KINDS.items()}


def _kind(text: str) -> str:
    name = text.lower().replace("-", "_")
    return KIND_ALIASES.get(name, name)


def _text(card: Card, *, blank_separators: bool = False) -> str:
    """The searchable fields of a card, NUL between them (blanked inside them when asked)."""
    fields: tuple[str, ...] = (card.id, card.prompt, card.answer, " ".join(card.tags), card.topic, card.deck)
    if blank_separators:
        fields = tuple(f.replace("\0", " ").replace("\1", " ") for f in fields)
    return "\0".join(fields)


class CardIndex:
    """Every card's text, lowercase with its spaces collapsed, and a set of card positions per topic, kind, tag and label.

    Cards are held in id order (their positions); a card's fields are kept apart by
    NUL, so no word or phrase of a query (which holds none) matches across two fields.
    """

    def __init__(self, cards: Mapping[str, Card], states: Mapping[str, CardState], today: dt.date) -> None:
        self.today = today
        self.states: dict[str, CardState] = dict(states)
        self.ids: list[str] = sorted(cards)
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        self.lower_ids = [cid.lower() for cid in self.ids]
        self.labels: dict[str, tuple[str, ...]] = {}
        self.by: dict[str, dict[str, set[int]]] = {key: {} for key in FILTERS if key != "id"}
        by_topic, by_kind, by_tag = self.by["topic"], self.by["kind"], self.by["tag"]
        for i, cid in enumerate(self.ids):
            card = cards[cid]
            by_topic.setdefault(card.topic.lower(), set()).add(i)
            by_kind.setdefault(_kind(card.kind), set()).add(i)
            for tag in card.tags:
                by_tag.setdefault(tag.lower(), set()).add(i)
            self._label(i)
        joined = "\1".join(_text(cards[cid]) for cid in self.ids)
        if joined.count("\0") != 5 * len(self.ids) or joined.count("\1") != max(0, len(self.ids) - 1):
            joined = "\1".join(_text(cards[cid], blank_separators=True) for cid in self.ids)
        # One pass over all the text at once costs a fraction of flattening card by card.
        self.haystacks = _flat_corpus(joined).split("\1") if self.ids else []

    def __len__(self) -> int:
        return len(self.ids)

    def _add(self, key: str, value: str, position: int) -> None:
        self.by[key].setdefault(value, set()).add(position)

    def _label(self, position: int) -> None:
        cid = self.ids[position]
        labels = state_labels(self.states.get(cid), self.today)
        self.labels[cid] = labels
        for label in labels:
            self._add("is", label, position)

    def haystack(self, card_id: str) -> str:
        """The card's text as a search sees it."""
        return self.haystacks[self.position[card_id]]

    def update_state(self, state: CardState) -> None:
        """Take in a card's new state (after an unsuspend, say)."""
        i = self.position.get(state.card_id)
        if i is None:
            return
        for label in self.labels[state.card_id]:
            self.by["is"][label].discard(i)
        self.states[state.card_id] = state
        self._label(i)


def parse_query(query: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The query's filters as (key, value) pairs and its words and phrases as lowercase text to find.

    A filter with nothing after the colon yet (`topic:` while typing) is left out;
    a key that is not a filter is plain text.
    """
    filters: list[tuple[str, str]] = []
    texts: list[str] = []
    for match in _TOKENS.finditer(query):
        key, quoted_value, phrase, word = match.groups()
        if key is not None:
            if key.lower() in FILTERS:
                value = _flat(quoted_value)
                if value:
                    filters.append((key.lower(), value))
            elif _flat(quoted_value):
                texts.append(_flat(f"{key}:{quoted_value}"))
            continue
        if phrase is not None:
            if _flat(phrase):
                texts.append(_flat(phrase))
            continue
        name, colon, value = word.partition(":")
        if colon and name.lower() in FILTERS:
            if value:
                filters.append((name.lower(), value.lower()))
        else:
            texts.append(word.lower())
    return filters, texts


def unknown_filters(index: CardIndex, query: str) -> list[str]:
    """Words on each topic:, kind: or is: filter of the query that no value starts with, naming the values."""
    out = []
    for key, value in parse_query(query)[0]:
        if key not in ("topic", "kind", "is"):
            continue
        known = sorted(index.by[key])
        if key == "kind":
            value = _kind(value)
            names = sorted({SHORT_KINDS.get(k, k) for k in known})
        else:
            names = known
        if not any(k.startswith(value) for k in known):
            out.append(f"no {key} {value!r} ({key}: takes {', '.join(names)})")
    filter_names = sorted(FILTERS)
    for text in parse_query(query)[1]:  # `topc:gemm` is searched for as text: say which filter it may mean
        name, colon, _ = text.partition(":")
        close = difflib.get_close_matches(name, filter_names, n=1) if colon and name.isalpha() else []
        if close:  # a near miss; any other word with a colon (a URL, a ratio) is plain text
            listed = ", ".join(f"{n}:" for n in filter_names)
            out.append(f"no filter {name}:, did you mean {close[0]}:? (filters: {listed})")
    return out


def matches(index: CardIndex, query: str) -> list[str]:
    """Every card id the query finds, due cards first, then by id. All words and filters must hold.

    `topic:`, `kind:`, `tag:` and `is:` take a whole name, or the start of one while
    no name is spelled out in full (`topic:coll` finds collectives); `id:` takes any
    part of an id; words and "quoted phrases" match anywhere in a card's text.
    """
    filters, texts = parse_query(query)
    allowed: set[int] | None = None
    id_parts: list[str] = []
    for key, value in filters:
        if key == "id":
            id_parts.append(value)
            continue
        found = _named(index.by[key], _kind(value) if key == "kind" else value)
        allowed = found if allowed is None else allowed & found
    among: list[int] | None = None if allowed is None else sorted(allowed)
    ids = index.lower_ids
    for part in id_parts:
        among = [i for i in (range(len(ids)) if among is None else among) if part in ids[i]]
    # The longest text is likely the rarest: looked for first, it leaves the fewest cards for the rest.
    hay = index.haystacks
    for text in sorted(texts, key=len, reverse=True):
        if among is None:
            among = [i for i, h in enumerate(hay) if text in h]
        else:
            among = [i for i in among if text in hay[i]]
    positions = range(len(index)) if among is None else among
    due = index.by["is"].get("due", set())
    return [index.ids[i] for i in positions if i in due] + [index.ids[i] for i in positions if i not in due]


def _named(table: Mapping[str, set[int]], value: str) -> set[int]:
    """The cards filed under `value`, or while it is still being typed, under every name it begins."""
    if value in table:
        return set(table[value])
    return set().union(*(cards for name, cards in table.items() if name.startswith(value)))


def search(index: CardIndex, query: str, limit: int = 200) -> list[str]:
    """The first `limit` card ids the query finds (see `matches`); an empty query lists every card."""
    return matches(index, query)[:limit]


def preview_prompt(card: Card) -> str:
    """The prompt as a review shows it: a parameterised card rendered with one draw fixed by its id.

    A card whose numbers cannot be drawn (one `drill check` rejects) says so
    rather than show its template text.
    """
    if card.kind != "memory_ledger":
        return card.prompt
    from drill.cards.templating import TemplateProblem, draw_params, render

    try:
        return render(card, draw_params(card, random.Random(card.id))).prompt
    except TemplateProblem as exc:
        return f"(its numbers could not be drawn: {exc})"


def card_history(data_dir: Path, card_id: str) -> list[dict[str, Any]]:
    """The card's logged reviews, oldest first; [] before the first run.

    Raises StoreError when the file is not a drill database, is damaged, is newer
    than this drill, or stays locked past the busy timeout.
    """

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        conn.row_factory = sqlite3.Row
        sql = "SELECT reviewed_at, day, grade, mode, duration_ms FROM review_log WHERE card_id = ? ORDER BY id"
        try:
            rows = conn.execute(sql, (card_id,)).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise
        return [dict(r) for r in rows]

    return _read(Path(data_dir) / DB_NAME, query, [])
