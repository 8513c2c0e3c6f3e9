"""How rare each word is across the bundled decks, and which words of a text can name an idea.

A mock's rubric point is recognised in an answer by its distinctive words (drill.mock.grading.key_terms). A
word is distinctive when it is a technical token (an acronym, an identifier, a number with its unit, a
hyphenated term, a formula's symbol) or a word few cards use; never a word of the general English list
(cards/data/common-words.yaml). How few is read from the decks themselves: `TermRarity` counts, for each
word stem, the cards whose text uses it (document frequency), once per process from the bundled decks.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import yaml

from drill import paths
from drill.cards.model import Card

# A word, kept whole across hyphens and underscores: all-reduce, GPU-hour, is_causal, flash-attention.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_POSSESSIVE = re.compile(r"['’]s\b")
_APOSTROPHE = re.compile(r"['’]")
# Single letters that are English words, not a formula's symbols.
_ENGLISH_LETTERS = frozenset({"a", "i", "A", "I"})
COMMON_WORDS_FILE = "common-words.yaml"


def stem(word: str) -> str:
    """A word reduced so that its forms meet: case, a plural s, British and American spelling, a long ending."""
    w = word.lower().replace("z", "s")
    if len(w) > 3 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("y"):
        w = w[:-1] + "i"
    return w[:6]


def term_key(token: str) -> str:
    """A token's key: its stem with hyphens and underscores gone, so all-reduce meets allreduce and all reduce."""
    return stem(token.replace("-", "").replace("_", ""))


def tokens(text: str) -> list[str]:
    """The words of `text` with hyphenated and underscored terms kept whole ("GPU's" is "GPU")."""
    return _TOKEN.findall(_APOSTROPHE.sub("", _POSSESSIVE.sub("", text)))


def is_technical(token: str) -> bool:
    """An acronym (KV, RDMA), an identifier (FlashAttention, is_causal, fp8, H100, 128k), a hyphenated term
    (all-reduce) or a formula's symbol (q, s, z): a token that names its idea however often the decks use it."""
    if not any(ch.isalpha() for ch in token):
        return False
    if len(token) == 1:
        return token not in _ENGLISH_LETTERS
    if "-" in token or "_" in token:
        return True
    if any(ch.isdigit() for ch in token):
        return True
    letters = token.replace("-", "")
    return letters.isupper() or any(ch.isupper() for ch in letters[1:])


@functools.cache
def common_words() -> frozenset[str]:
    """General English words (cards/data/common-words.yaml), lower case: they name no idea of their own."""
    data = yaml.safe_load((paths.data_files_dir() / COMMON_WORDS_FILE).read_text(encoding="utf-8")) or {}
    return frozenset(str(w).lower() for w in str(data.get("words") or "").split())


def card_text(card: Card) -> Iterator[str]:
    """All the text a card asks and answers with: its prompt, answer and rubric, and a scenario's stages."""
    yield card.prompt
    yield card.answer
    yield from card.rubric
    stages = card.fields.get("stages")
    for stage in stages if isinstance(stages, list) else []:
        if not isinstance(stage, dict):
            continue
        yield str(stage.get("prompt") or "")
        yield str(stage.get("answer") or "")
        for key in ("rubric", "asks"):
            entries = stage.get(key)
            yield from (str(e) for e in (entries if isinstance(entries, list) else []))


@dataclass(frozen=True)
class TermRarity:
    """For each word key (`term_key`), how many of `documents` cards use it."""

    documents: int
    used_by: Counter[str]

    @classmethod
    def of_cards(cls, cards: Iterable[Card]) -> TermRarity:
        used_by: Counter[str] = Counter()
        count = 0
        for card in cards:
            count += 1
            used_by.update({term_key(t) for text in card_text(card) for t in tokens(text)})
        return cls(count, used_by)

    def share(self, key: str) -> float:
        """The share of cards that use the word (by its `term_key`): 0 for a word no card uses."""
        return self.used_by[key] / self.documents if self.documents else 0.0

    def idf(self, key: str) -> float:
        """Inverse document frequency of the word (by its `term_key`): how rare it is, higher is rarer."""
        return math.log((1 + self.documents) / (1 + self.used_by[key]))


@functools.cache
def bundled_rarity() -> TermRarity:
    """The bundled decks' rarity table, built once per process."""
    from drill.cards.loader import load_decks

    return TermRarity.of_cards(load_decks().cards.values())
