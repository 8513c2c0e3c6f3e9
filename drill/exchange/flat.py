"""A card as another program sees it: front and back as Markdown, whatever its kind.

Each kind shows what the review screen shows: a shape trace its `given` and
the steps to fill in (with their shapes on the back), a diagnosis its
evidence and lettered choices, a parameterised ledger card one fixed draw
with its ledger of formulas and values. Kernel cards need the judge and
scenarios a mock round: both are left to drill.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from drill.cards.field_values import mappings
from drill.cards.model import Card
from drill.cards.shapes import accepted_shapes

NOT_EXPORTED = frozenset({"kernel", "scenario"})


@dataclass(frozen=True)
class FlatCard:
    """One card's text for another program; `prompt` and `answer` are Markdown."""

    id: str
    deck: str
    topic: str
    kind: str
    tags: tuple[str, ...]
    prompt: str
    answer: str
    rubric: tuple[str, ...]
    sources: tuple[str, ...]


def exportable(cards: Mapping[str, Card]) -> list[Card]:
    """The cards another program can show, in id order (so two exports list them alike)."""
    return [cards[cid] for cid in sorted(cards) if cards[cid].kind not in NOT_EXPORTED]


def export_seed(card_id: str) -> int:
    """The seed of a parameterised card's exported draw: fixed per card, so every export shows the same numbers."""
    return int.from_bytes(hashlib.sha256(f"drill-export:{card_id}".encode()).digest()[:8], "big")


def flatten(card: Card) -> FlatCard:
    prompt, answer = _SIDES.get(card.kind, _concept)(card)
    return FlatCard(
        id=card.id,
        deck=card.deck,
        topic=card.topic,
        kind=card.kind,
        tags=tuple(card.tags),
        prompt=prompt.strip(),
        answer=answer.strip(),
        rubric=tuple(str(r) for r in card.rubric),
        sources=tuple(str(s) for s in card.sources),
    )


def flatten_all(cards: Iterable[Card]) -> list[FlatCard]:
    return [flatten(c) for c in cards]


def fenced(text: str, info: str = "text") -> str:
    """`text` as a fenced code block, with a fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def code_span(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _cell(text: object) -> str:
    """Text for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _concept(card: Card) -> tuple[str, str]:
    return card.prompt, card.answer


def _shape_trace(card: Card) -> tuple[str, str]:
    steps = mappings(card.fields.get("steps"))
    given = str(card.fields.get("given", ""))
    labels = "\n".join(f"{i}. {_cell(s.get('label', ''))}" for i, s in enumerate(steps, 1))
    front = f"{card.prompt}\n\n**Given:** {code_span(given)}\n\nThe shape after each step:\n\n{labels}"
    rows = ["| step | shape |", "| --- | --- |"]
    for i, step in enumerate(steps, 1):
        spellings = " or ".join(code_span(_cell(s)) for s in accepted_shapes(step))
        rows.append(f"| {i}. {_cell(step.get('label', ''))} | {spellings} |")
    return front, "\n".join(rows) + "\n\n" + card.answer


def _diagnosis(card: Card) -> tuple[str, str]:
    from drill.cards.choices import choices_in_export_order

    choices = choices_in_export_order(card)
    correct = str(card.fields.get("correct", ""))
    listed = "\n".join(f"- **{chr(97 + i)}.** {_cell(c)}" for i, c in enumerate(choices))
    front = f"{fenced(str(card.fields.get('evidence', '')))}\n\n{card.prompt}\n\n{listed}"
    letter = next((f"{chr(97 + i)}. " for i, c in enumerate(choices) if c == correct), "")
    return front, f"**{letter}{_cell(correct)}**\n\n{card.answer}"


def _memory_ledger(card: Card) -> tuple[str, str]:
    from drill.cards.templating import TemplateProblem, draw_params, render
    from drill.quantities import format_quantity

    try:
        draw = draw_params(card, random.Random(export_seed(card.id)))
        shown = render(card, draw)
    except TemplateProblem as exc:  # a card `drill check` would reject: its templates as written
        return card.prompt, f"{card.answer}\n\n(no draw could be rendered: {exc})"
    rows = ["| term | formula | value |", "| --- | --- | --- |"]
    for t in shown.ledger:
        rows.append(f"| {_cell(t.term)} | {_cell(t.formula)} | {_cell(format_quantity(t.value, t.unit))} |")
    # an answer's formula is the ledger's text above it; its `expr` is Python for drill's checker, not for reading
    for a in shown.answers:
        rows.append(f"| **{_cell(a.label)}** |  | **{_cell(format_quantity(a.value, a.unit))}** |")
    values = ", ".join(code_span(f"{name} = {value}") for name, value in draw.items())
    note = f"*One draw of this card's numbers ({values}); drill draws new ones at each review.*"
    return shown.prompt, "\n".join(rows) + "\n\n" + shown.answer + "\n\n" + note


_SIDES = {
    "concept": _concept,
    "shape_trace": _shape_trace,
    "diagnosis": _diagnosis,
    "memory_ledger": _memory_ledger,
}
