"""Words in messages: numbers with their nouns (`1 card`, `2 cards`, never `card(s)`) and a value quoted to fit a
line."""

from __future__ import annotations


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and the noun agreeing with it; `plural` for a noun that does not just take an s (`2 queries`)."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {plural or noun + 's'}"


def shortened(text: str, limit: int = 60) -> str:
    """`text` quoted for a one-line message, cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
