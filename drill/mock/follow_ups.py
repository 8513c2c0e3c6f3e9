"""What an interviewer asks after an answer: a deeper question after a strong one, a hint and a narrower
question after a weak one.

A deeper follow-up is another card: one the answered card names under `follow_ups`, else one of its topic,
preferring cards not reviewed lately. A narrower one asks again, on the same card, the first part the answer
missed (a rubric point, a shape step, a ledger step) with a hint, as a card built for the purpose and answered
in the usual form.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from drill.cards.field_values import mappings
from drill.cards.model import Card
from drill.cards.question import question_markdown
from drill.cards.scenario import is_clarify, is_stage_card
from drill.mock.grading import STRONG_AT
from drill.mock.plan import minutes_for

NARROWER_MINUTES = 2
# What a round's stage card carries that a narrower question on it keeps (drill.cards.scenario.stage_card).
ROUND_FIELDS = ("stage", "dimension", "scenario")


class FollowUpKind(enum.Enum):
    DEEPER = "deeper"
    NARROWER = "narrower"


@dataclass(frozen=True)
class FollowUp:
    """A follow-up question: the card to ask (for a narrower one, built from the answered card), its hint
    ('' for a deeper one) and its minutes."""

    kind: FollowUpKind
    card: Card
    hint: str
    minutes: int


def follow_up_for(
    card: Card,
    score: float,
    first_missed: int | None,
    cards: Mapping[str, Card],
    asked: Collection[str],
    recent: Collection[str] = (),
) -> FollowUp | None:
    """The follow-up to `card` answered at `score` (`first_missed`: the index of the first rubric point, shape
    step or ledger step the answer missed), or None when there is nothing to ask. A round's clarifying stage has
    none: the interviewer gives the numbers and goes on."""
    if is_clarify(card):
        return None
    if score >= STRONG_AT:
        deeper = deeper_card(card, cards, asked, recent)
        return None if deeper is None else FollowUp(FollowUpKind.DEEPER, deeper, "", minutes_for(deeper))
    if first_missed is None:
        return None
    built = narrower_card(card, first_missed)
    if built is None:
        return None
    narrow, hint = built
    return FollowUp(FollowUpKind.NARROWER, narrow, hint, NARROWER_MINUTES)


def deeper_card(card: Card, cards: Mapping[str, Card], asked: Collection[str], recent: Collection[str]) -> Card | None:
    """The card a strong answer leads to: one it names as a follow-up, else another of its topic (a kernel card
    is a round of its own, never a follow-up; a round's stage only a twist it names); not yet asked in this mock, not reviewed lately where one is left."""
    named = [cards[cid] for cid in card.follow_ups if cid in cards]
    same_topic = sorted((c for c in cards.values() if c.topic == card.topic), key=lambda c: c.id)
    # a round's stage is followed by its scenario's twists alone (none after a clarifying stage)
    groups = (named,) if is_stage_card(card) else (named, same_topic)
    for group in groups:
        fitting = [c for c in group if c.id not in asked and c.id != card.id and c.kind != "kernel"]
        fresh = [c for c in fitting if c.id not in recent]
        if fresh or fitting:
            return (fresh or fitting)[0]
    return None


def narrower_card(card: Card, missed: int) -> tuple[Card, str] | None:
    """The card asking again just the part `missed` of `card`, and its hint; None where the kind has no parts."""
    if card.kind in ("concept", "diagnosis") and 0 <= missed < len(card.rubric):
        point = card.rubric[missed]
        prompt = f"{question_markdown(card)}\n\n**Narrower:** say more on this one point: *{point}*"
        kept = {k: v for k, v in card.fields.items() if k in ROUND_FIELDS}  # a round's stage stays one
        return replace(card, kind="concept", prompt=prompt, rubric=(point,), fields=kept), point
    if card.kind == "shape_trace":
        steps = mappings(card.fields.get("steps"))
        if not 0 <= missed < len(steps):
            return None
        before = f"the step before it is `{steps[missed - 1]['shape']}`" if missed else "start from the given line"
        prompt = f"{card.prompt}\n\n**Narrower:** just this step: {steps[missed]['label']}. Hint: {before}."
        return replace(card, prompt=prompt, fields={**card.fields, "steps": [steps[missed]]}), before
    if card.kind == "memory_ledger":
        ledger = mappings(card.fields.get("ledger"))
        if not 0 <= missed < len(ledger):
            return None
        step = ledger[missed]
        prompt = (
            f"{card.prompt.rstrip()}\n\n**Narrower:** work out just this step. "
            f"Hint: {step.get('term', '')} = {step.get('formula', '')}"
        )
        hint = f"the formula of ledger step {missed + 1}"
        answer = {"label": step.get("term", ""), "expr": step.get("expr", ""), "unit": step.get("unit", "count")}
        fields = {**card.fields, "answers": [answer], "ledger": []}
        return replace(card, prompt=prompt, fields=fields), hint
    return None
