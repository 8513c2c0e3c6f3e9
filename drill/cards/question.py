"""A card's question as the learner meets it, in Markdown: the review and mock screens show it, the mock report
repeats it, so a diagnosis keeps its evidence and a shape trace its given line wherever it is read."""

from __future__ import annotations

from drill.cards.model import Card


def question_markdown(card: Card, prompt: str | None = None) -> str:
    """The prompt with what the answer is read from: a diagnosis's evidence above it, a shape trace's given
    line below it. `prompt`: the prompt as drawn (a memory ledger's numbers filled in); the card's own if None."""
    text = card.prompt if prompt is None else prompt
    if card.kind == "diagnosis":
        return f"```text\n{str(card.fields['evidence']).rstrip()}\n```\n\n{text}"
    if card.kind == "shape_trace":
        return f"{text}\n\n**Given:** `{card.fields['given']}`"
    return text
