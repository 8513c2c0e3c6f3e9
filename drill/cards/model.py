"""The card and problem records the loader produces."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping


@dataclass(frozen=True)
class Card:
    """One validated card. `fields` holds the kind-specific keys (steps, params, evidence...)."""

    id: str
    kind: str
    topic: str
    prompt: str
    answer: str
    tags: tuple[str, ...] = ()
    rubric: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    # Card ids a mock interview may ask next after a good answer to this one.
    follow_ups: tuple[str, ...] = ()
    fields: Mapping[str, object] = field(default_factory=dict)
    deck: str = ""
    path: Path = Path("?")
    line: int = 0
    content_hash: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Problem:
    """A problem in a deck, printed as `path:line: card-id: message`."""

    path: str
    line: int
    card_id: str
    message: str

    def __str__(self) -> str:
        if not self.line and self.card_id in ("", "-"):  # about the file itself, not a place in it
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.card_id or '-'}: {self.message}"
