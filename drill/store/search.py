"""The card browser's full-text index: an SQLite FTS5 table in memory, ranked by bm25.

In memory, not a file: the decks are in memory already, and filling the table
costs about 0.2 s at 10,000 cards (a few milliseconds for the bundled decks),
once per set of decks (drill.browse keeps it while their content is the same).
A file would save that once a run but need keeping in step with the decks,
locking against a second drill and mending when damaged.

Every FTS5 expression is built here from the learner's words, each quoted as a
string: nothing typed (quotes, `*`, `NEAR`, `-`, `:`, `AND`) is read as FTS5
syntax, so no search can fail on it.

The table's own vocabulary (an fts5vocab table over it) is what a misspelt word
is compared with, for a "did you mean".
"""

from __future__ import annotations

import bisect
import heapq
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
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
_VOCABULARY = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.words USING fts5vocab(main, cards, row)"
# the prompt's and the answer's text with each matched word between two marks (characters no card holds)
MARK_START = "\ue000"
MARK_END = "\ue001"
_HIGHLIGHTED = (
    f"SELECT highlight(cards, 1, '{MARK_START}', '{MARK_END}'), highlight(cards, 2, '{MARK_START}', '{MARK_END}')"
    " FROM cards WHERE cards MATCH ? AND rowid = ?"
)


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


@dataclass(frozen=True)
class AnyOf:
    """Ways of saying one thing: a card matches when it holds every term of any one of the options.

    (`tp` or "tensor parallel"; the words flash and attention, or flashattention.)
    """

    options: tuple[tuple[Term, ...], ...]


def _phrase(term: Term) -> str:
    """The term as one FTS5 string, '' when it has no letter or digit (an empty phrase matches nothing)."""
    text = _plain(term.text)
    if not any(ch.isalnum() for ch in text):
        return ""
    quoted = '"' + text.replace('"', '""') + '"'
    return quoted + "*" if term.prefix else quoted


def _any_of(group: AnyOf) -> str:
    options = []
    for option in group.options:
        phrases = [p for p in map(_phrase, option) if p]
        if not phrases:
            return ""  # an option that asks for nothing: the group narrows nothing
        options.append(phrases[0] if len(phrases) == 1 else "(" + " AND ".join(phrases) + ")")
    return "(" + " OR ".join(options) + ")" if len(options) > 1 else "".join(options)


def match_expression(terms: Iterable[Term | AnyOf]) -> str:
    """An FTS5 query that every card holding all the terms matches; '' when no term has a letter or digit.

    Each term is one FTS5 string (its `"` doubled), so FTS5 reads it as words only;
    a term with no letter or digit would be an empty phrase that matches nothing,
    so it is left out (a lone `*` or `-` narrows nothing). An AnyOf is its options
    joined by OR, in brackets.
    """
    parts = [_any_of(term) if isinstance(term, AnyOf) else _phrase(term) for term in terms]
    return " AND ".join(part for part in parts if part)


# A misspelling is looked for among words within this many edits (a letter left out, added, changed, or two
# letters swapped): one for a word of up to four letters, two for a longer one.
SHORT_WORD = 4
# the words sharing most three-letter pieces with a misspelt one that are compared with it letter by letter
CANDIDATES = 50


def edit_distance(a: str, b: str, bound: int) -> int:
    """Edits from a to b (optimal string alignment: a swap of neighbours is one edit); bound + 1 once above bound."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > bound:
            return bound + 1
        before = row
        row = current
    return min(row[-1], bound + 1)


def _grams(word: str, *, closed: bool = True) -> set[str]:
    """The word's three-letter pieces, its start marked (and its end, unless it is still being typed)."""
    padded = " " + word + (" " if closed else "")
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class Vocabulary:
    """The words of the cards' text, with how many cards hold each; a misspelt word's nearest among them."""

    def __init__(self, cards_holding: Mapping[str, int]) -> None:
        self.cards_holding = dict(cards_holding)
        self.ordered = sorted(self.cards_holding)
        # built on the first misspelling: each word under itself and each way of leaving a letter out of it,
        # and under each of its three-letter pieces
        self._by_deletion: dict[str, list[str]] | None = None
        self._by_gram: dict[str, list[str]] | None = None

    def __contains__(self, word: object) -> bool:
        return word in self.cards_holding

    def __len__(self) -> int:
        return len(self.ordered)

    def has_prefix(self, start: str) -> bool:
        """Whether some word begins with `start` (is it, or continues it)."""
        at = bisect.bisect_left(self.ordered, start)
        return at < len(self.ordered) and self.ordered[at].startswith(start)

    def knows(self, word: str, *, prefix: bool) -> bool:
        return self.has_prefix(word) if prefix else word in self.cards_holding

    def nearest(self, word: str, *, prefix: bool = False) -> str | None:
        """The word of the cards closest to a misspelt one, None when none is near.

        Near: within one edit for a word of up to four letters, two for a longer
        one; a word still being typed (`prefix`) may also be the start of a word
        within those edits. Of the nearest, one as long as it (a swap or a changed
        letter) first, then the one most cards hold, then the first alphabetically.
        Words with a digit (ids, sizes) and words under three letters are not corrected.
        """
        if len(word) < 3 or any(ch.isdigit() for ch in word):
            return None
        bound = 1 if len(word) <= SHORT_WORD else 2
        best: tuple[int, int, int, str] | None = None
        for known in self._candidates(word, prefix=prefix):
            distance = edit_distance(word, known, bound)
            if prefix:  # the start of a longer word, as far as typed (give or take a letter)
                for n in range(len(word) - 1, min(len(word) + 2, len(known))):
                    distance = min(distance, edit_distance(word, known[:n], bound))
            if distance > bound or distance == 0:
                continue
            candidate = (distance, abs(len(known) - len(word)), -self.cards_holding[known], known)
            if best is None or candidate < best:
                best = candidate
        return best[-1] if best is not None else None

    def _candidates(self, word: str, *, prefix: bool) -> set[str]:
        """Words that may be near: those the word becomes with a letter or two left out, or it with one left out
        (a misspelling of a short word shares few three-letter pieces), and the CANDIDATES words sharing most
        three-letter pieces with it (the start of a longer word)."""
        if self._by_deletion is None or self._by_gram is None:
            self._by_deletion = {}
            self._by_gram = {}
            for known in self.ordered:
                if any(ch.isdigit() for ch in known):
                    continue  # never offered
                for shorter in {known} | _deletions(known):
                    self._by_deletion.setdefault(shorter, []).append(known)
                for gram in _grams(known):
                    self._by_gram.setdefault(gram, []).append(known)
        found: set[str] = set()
        once = _deletions(word)
        for shorter in {word} | once | {twice for one in once for twice in _deletions(one)}:
            found.update(self._by_deletion.get(shorter, ()))
        shared: dict[str, int] = {}
        for gram in _grams(word, closed=not prefix):
            for known in self._by_gram.get(gram, ()):
                shared[known] = shared.get(known, 0) + 1
        found.update(known for known, _ in heapq.nlargest(CANDIDATES, shared.items(), key=lambda kv: (kv[1], kv[0])))
        return found


def _deletions(word: str) -> set[str]:
    """The word with one letter left out, each way."""
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class SearchTable:
    """Cards' searchable text in an FTS5 table; a card is known by its position in the rows given."""

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        # check_same_thread off: the browser may be built in a worker and searched from the app's thread.
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(_CREATE)
        with self._conn:
            self._conn.executemany(_INSERT, ((position, *map(_plain, row)) for position, row in enumerate(rows)))
        self._vocabulary: Vocabulary | None = None

    def ranked(self, terms: Iterable[Term | AnyOf]) -> list[int] | None:
        """Positions of the cards holding every term, most relevant first; None when no term can be searched."""
        expression = match_expression(terms)
        if not expression:
            return None
        return [position for (position,) in self._conn.execute(_RANKED, (expression,))]

    def vocabulary(self) -> Vocabulary:
        """Every word of the cards' text and how many cards hold it; read once."""
        if self._vocabulary is None:
            self._conn.execute(_VOCABULARY)
            rows = self._conn.execute("SELECT term, doc FROM temp.words").fetchall()
            self._vocabulary = Vocabulary({str(term): int(doc) for term, doc in rows})
        return self._vocabulary

    def highlighted(self, position: int, terms: Iterable[Term | AnyOf]) -> tuple[str, str] | None:
        """The card's prompt and answer with each word the terms match between MARK_START and MARK_END.

        None when the terms search nothing or the card does not match them.
        """
        expression = match_expression(terms)
        if not expression:
            return None
        row = self._conn.execute(_HIGHLIGHTED, (expression, position)).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def size_bytes(self) -> int:
        """What the table's pages take in memory."""
        (pages,) = self._conn.execute("PRAGMA page_count").fetchone()
        (page_size,) = self._conn.execute("PRAGMA page_size").fetchone()
        return int(pages) * int(page_size)

    def close(self) -> None:
        self._conn.close()
