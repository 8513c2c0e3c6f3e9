"""The card browser's full-text index: an SQLite FTS5 table in memory, ranked by bm25.

In memory, not a file: the decks are in memory already, and filling the table
costs about 0.2 s at 10,000 cards (a few milliseconds for the bundled decks),
once per set of decks (drill.browse keeps it while their content is the same).
A file would save that once a run but need keeping in step with the decks,
locking against a second drill and mending when damaged.

Every FTS5 expression is built here from the learner's words, each quoted as a
string: nothing typed (quotes, `*`, `NEAR`, `-`, `:`, `AND`) is read as FTS5
syntax, so no search can fail on it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The columns, in the order each row gives them, and how much a match in each counts (bm25's weights):
# a word of the id or a tag says what the card is about; the answer is long and says much else besides.
COLUMNS = ("id", "prompt", "answer", "tags", "topic", "deck")
WEIGHTS = (10.0, 1.0, 0.5, 5.0, 2.0, 1.0)
# unicode61 folds case and splits at anything but letters and digits: `kv-cache`, `KV cache` and
# `kv_cache` are the same two words, so an id, a tag and prose find each other.
_CREATE = f"CREATE VIRTUAL TABLE cards USING fts5({', '.join(COLUMNS)}, tokenize = 'unicode61')"
_INSERT = f"INSERT INTO cards (rowid, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' for _ in COLUMNS)})"
_RANKED = f"SELECT rowid FROM cards WHERE cards MATCH ? ORDER BY bm25(cards, {', '.join(map(str, WEIGHTS))}), rowid"


@dataclass(frozen=True)
class Term:
    """Words the learner typed that must appear in this order in one column of a card.

    `prefix`: the last word may be the start of a longer one (`flash` finds flashattention).
    """

    text: str
    prefix: bool = True


def _plain(text: str) -> str:
    """The text as SQLite can take it: no NUL (it ends an FTS5 query) and no lone surrogate (not UTF-8)."""
    return text.replace("\0", " ").encode("utf-8", "replace").decode("utf-8")


def match_expression(terms: Iterable[Term]) -> str:
    """An FTS5 query that every card holding all the terms matches; '' when no term has a letter or digit.

    Each term is one FTS5 string (its `"` doubled), so FTS5 reads it as words only;
    a term with no letter or digit would be an empty phrase that matches nothing,
    so it is left out (a lone `*` or `-` narrows nothing).
    """
    parts = []
    for term in terms:
        text = _plain(term.text)
        if not any(ch.isalnum() for ch in text):
            continue
        quoted = '"' + text.replace('"', '""') + '"'
        parts.append(quoted + "*" if term.prefix else quoted)
    return " ".join(parts)  # side by side: FTS5 ANDs them


class SearchTable:
    """Cards' searchable text in an FTS5 table; a card is known by its position in the rows given."""

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        # check_same_thread off: the browser may be built in a worker and searched from the app's thread.
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(_CREATE)
        with self._conn:
            self._conn.executemany(_INSERT, ((position, *map(_plain, row)) for position, row in enumerate(rows)))

    def ranked(self, terms: Iterable[Term]) -> list[int] | None:
        """Positions of the cards holding every term, most relevant first; None when no term can be searched."""
        expression = match_expression(terms)
        if not expression:
            return None
        return [position for (position,) in self._conn.execute(_RANKED, (expression,))]

    def size_bytes(self) -> int:
        """What the table's pages take in memory."""
        (pages,) = self._conn.execute("PRAGMA page_count").fetchone()
        (page_size,) = self._conn.execute("PRAGMA page_size").fetchone()
        return int(pages) * int(page_size)

    def close(self) -> None:
        self._conn.close()
