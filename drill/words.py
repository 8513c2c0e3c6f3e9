"""Numbers with their nouns: `1 card`, `2 cards`, never `card(s)`."""

from __future__ import annotations


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and the noun agreeing with it; `plural` for a noun that does not just take an s (`2 queries`)."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {plural or noun + 's'}"
