"""Whether a diagnosis card's choices give the answer away by their form rather than their content.

A learner who has not read the evidence should not be able to score by picking the
longest choice, the most detailed one, or the one that repeats a word of the evidence.
`drill check` warns on such a card (the deck still loads); the bundled decks carry none.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from drill.cards.field_values import texts
from drill.cards.model import Card

# The correct choice may be at most this many times the median length of the others.
LENGTH_RATIO_LIMIT = 1.5

# Words shorter than this are too common to point at an answer.
SHORTEST_DISTINCTIVE_WORD = 4

# Words compared by their first letters, so "mutated" in a log line meets "mutates" in a choice.
STEM_LENGTH = 6

# Words that carry no hint on their own: they appear across evidence and choices of every topic.
COMMON_WORDS = frozenset(
    {
        "about",
        "after",
        "also",
        "because",
        "been",
        "before",
        "being",
        "both",
        "each",
        "from",
        "have",
        "into",
        "just",
        "more",
        "most",
        "much",
        "only",
        "other",
        "over",
        "same",
        "some",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "through",
        "under",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "without",
        "would",
    }
)

_WORD = re.compile(r"[a-z][a-z0-9]*")


def _stem(word: str) -> str:
    return word[:STEM_LENGTH]


def distinctive_stems(text: str) -> set[str]:
    """The stems of the words of `text` that could point at an answer."""
    words = _WORD.findall(text.casefold())
    return {_stem(w) for w in words if len(w) >= SHORTEST_DISTINCTIVE_WORD and w not in COMMON_WORDS}


@dataclass(frozen=True)
class ChoiceShape:
    """How the correct choice stands out among the others, for the deck check and the deck-wide figures."""

    correct_length: int
    median_other_length: float
    strictly_longest: bool
    echoed_words: tuple[str, ...]

    @property
    def length_ratio(self) -> float:
        return self.correct_length / self.median_other_length if self.median_other_length else float("inf")


def choice_shape(card: Card) -> ChoiceShape | None:
    """The shape of a diagnosis card's correct choice; None when the card has no usable choices."""
    choices = texts(card.fields.get("choices"))
    correct = str(card.fields.get("correct", ""))
    others = [c for c in choices if c != correct]
    if correct not in choices or not others:
        return None
    evidence_stems = distinctive_stems(str(card.fields.get("evidence", "")))
    other_stems: set[str] = set()
    for other in others:
        other_stems |= distinctive_stems(other)
    echoed = sorted((distinctive_stems(correct) & evidence_stems) - other_stems)
    return ChoiceShape(
        correct_length=len(correct),
        median_other_length=statistics.median(len(c) for c in others),
        strictly_longest=len(correct) > max(len(c) for c in others),
        echoed_words=tuple(echoed),
    )


def fairness_warnings(card: Card) -> list[str]:
    """Ways the correct choice of a diagnosis card stands out by form; empty for a fair card."""
    shape = choice_shape(card)
    if shape is None:
        return []
    warnings: list[str] = []
    if shape.length_ratio > LENGTH_RATIO_LIMIT:
        warnings.append(
            f"the correct choice is {shape.length_ratio:.2f}x the median length of the others "
            f"(at most {LENGTH_RATIO_LIMIT}x): a learner can pick it by its length"
        )
    if shape.echoed_words:
        words = ", ".join(repr(w) for w in shape.echoed_words)
        warnings.append(f"only the correct choice shares {words} with the evidence: a learner can pick it by the echo")
    return warnings


@dataclass(frozen=True)
class LongestPickFigures:
    """Deck-wide: how often the correct choice is the strictly longest, and what picking the longest scores."""

    cards: int
    strictly_longest: int
    longest_pick_score: float
    chance_score: float


def longest_pick_figures(cards: list[Card]) -> LongestPickFigures:
    """Over diagnosis cards: the share where the correct choice is strictly longest, and the expected score of
    always picking the longest choice (a tie split evenly) against picking at random."""
    counted = 0
    strictly_longest = 0
    longest_pick = 0.0
    chance = 0.0
    for card in cards:
        choices = texts(card.fields.get("choices"))
        correct = str(card.fields.get("correct", ""))
        if card.kind != "diagnosis" or correct not in choices:
            continue
        counted += 1
        longest = max(len(c) for c in choices)
        tied = [c for c in choices if len(c) == longest]
        if correct in tied:
            longest_pick += 1 / len(tied)
            if len(tied) == 1:
                strictly_longest += 1
        chance += 1 / len(choices)
    if not counted:
        return LongestPickFigures(0, 0, 0.0, 0.0)
    return LongestPickFigures(
        cards=counted,
        strictly_longest=strictly_longest,
        longest_pick_score=longest_pick / counted,
        chance_score=chance / counted,
    )
