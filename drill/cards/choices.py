"""Checking a diagnosis card: the learner's choice, and the card itself for the deck check."""

from __future__ import annotations

import random
import re

from drill.cards.field_values import texts
from drill.cards.model import Card


def _choice_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".").casefold()


def _index(choice: str | int, n: int) -> int | None:
    """A 0-based index from "2" / 2 (1-based) or "b" (letter), else None."""
    if isinstance(choice, int) and not isinstance(choice, bool):
        return choice - 1 if 1 <= choice <= n else -1
    text = str(choice).strip().rstrip(".)")
    if text.isdigit():
        return int(text) - 1 if 1 <= int(text) <= n else -1
    if len(text) == 1 and text.isalpha() and text.isascii():
        i = ord(text.lower()) - ord("a")
        return i if i < n else -1
    return None


def check_choice(card: Card, choice: str | int) -> bool:
    """Whether `choice` (a choice's text, its 1-based number, or its letter a, b, ...) is the card's `correct`."""
    choices = texts(card.fields.get("choices"))
    correct = _choice_key(str(card.fields.get("correct", "")))
    i = _index(choice, len(choices))
    if i is not None:
        return 0 <= i < len(choices) and _choice_key(choices[i]) == correct
    return _choice_key(str(choice)) == correct


def check_diagnosis_card(card: Card) -> list[str]:
    """Problems of a diagnosis card beyond field presence and types."""
    problems: list[str] = []
    evidence = card.fields.get("evidence")
    if not isinstance(evidence, str) or not evidence.strip():
        problems.append("`evidence` must be non-empty text")
    choices = card.fields.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        return problems + ["`choices` needs at least two entries"]
    keys: dict[str, str] = {}
    for choice in choices:
        if not isinstance(choice, str) or not choice.strip():
            problems.append(f"choices: every choice must be non-empty text, got {choice!r}")
            continue
        if _index(choice, 10**6) is not None:
            problems.append(f"choices: {choice!r} would be read as a choice number or letter")
        key = _choice_key(choice)
        if key in keys:
            problems.append(f"choices: {choice!r} repeats {keys[key]!r}")
        keys[key] = choice
    correct = card.fields.get("correct")
    if not isinstance(correct, str) or not correct.strip():
        problems.append("`correct` must be one of the choices")
    elif correct not in choices:
        near = keys.get(_choice_key(correct))
        if near:
            problems.append(f"correct {correct!r} differs from the choice {near!r}: write it exactly")
        else:
            problems.append(f"correct {correct!r} is not one of the choices")
    return problems


def choices_in_export_order(card: Card) -> list[str]:
    """A diagnosis card's choices in an order fixed by its id: an export lists them the same way every time,
    and the deck's own order (often the right choice first) tells nothing."""
    choices = texts(card.fields.get("choices"))
    random.Random(card.id).shuffle(choices)
    return choices
