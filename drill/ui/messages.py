"""Messages the screens post, named for what happened."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class CardGraded(Message):
    card_id: str
    grade: int
    repeat: bool


@dataclass
class StoreOpened(Message):
    changed_cards: int
