"""The practice a learner asks for (`drill --card`, `--topic`, `--weak`, or a screen's request), checked against
the decks: one card that can be asked on its own, topics as the decks spell them, the weakest topics added."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from drill.cards.model import Card
from drill.study.session import MOCK_ONLY_KINDS

# The ranking is imported where the weakest topics are asked for: a start without --weak needs none of it.
if TYPE_CHECKING:
    from drill.study.standing import TopicFigures


class UnknownCard(LookupError):
    """`drill --card ID` named a card that no deck defines."""

    def __init__(self, card_id: str, cards: Iterable[str]) -> None:
        close = difflib.get_close_matches(card_id, list(cards), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        super().__init__(f"no card {card_id!r} in the decks{hint}")


class MockOnlyCard(LookupError):
    """`drill --card ID` named a card asked only in a mock round (a scenario): on its own it has no answer form, and
    a key typed at it would reveal and grade it."""

    def __init__(self, card_id: str, kind: str) -> None:
        super().__init__(
            f"{card_id!r} is a {kind} card, asked in stages in a mock round (`drill mock --round`), not on its own"
        )


class UnknownTopic(LookupError):
    """`drill --topic T` named a topic that has no cards."""

    def __init__(self, topic: str, topics: Iterable[str]) -> None:
        known = sorted(set(topics))
        close = difflib.get_close_matches(topic.lower(), known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else f" (topics: {', '.join(known)})"
        super().__init__(f"no cards in topic {topic!r}{hint}")


# What a choice can be refused for, each with a one-line message for the command line.
REFUSALS = (UnknownCard, MockOnlyCard, UnknownTopic)


def check_card(card_id: str | None, cards: Mapping[str, Card]) -> None:
    """--card names a card of the decks that can be asked on its own (UnknownCard, MockOnlyCard otherwise)."""
    if card_id is None:
        return
    if card_id not in cards:
        raise UnknownCard(card_id, cards)
    if cards[card_id].kind in MOCK_ONLY_KINDS:
        raise MockOnlyCard(card_id, cards[card_id].kind)


def known_topic_names(topics: Iterable[str], cards: Mapping[str, Card]) -> list[str]:
    """--topic names as the decks spell them (MEMORY-ACCOUNTING is memory-accounting), each once; UnknownTopic for
    a topic with no cards."""
    known = {card.topic for card in cards.values()}
    by_lower = {topic.lower(): topic for topic in known}
    named = [topic if topic in known else by_lower.get(topic.lower(), topic) for topic in topics]
    for topic in named:
        if topic not in known:
            raise UnknownTopic(topic, known)
    return list(dict.fromkeys(named))


def with_weakest(topics: Sequence[str], figures: Iterable[TopicFigures], weak: int) -> list[str]:
    """`topics`, then the `weak` weakest topics of `figures` not among them (--weak N, practice asked on a screen)."""
    chosen = list(topics)
    if weak <= 0:
        return chosen
    from drill.study.standing import weakest

    ranked = weakest(figures, weak + len(chosen))
    return chosen + [topic for topic in ranked if topic not in chosen][:weak]
