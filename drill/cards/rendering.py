"""Rendering one draw of a parameterised card: its prompt, answer text, expected answers and ledger."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from drill.cards.evaluation import Scope, evaluate, render_text
from drill.cards.field_values import number
from drill.cards.model import Card
from drill.cards.number_check import DEFAULT_TOLERANCE
from drill.cards.param_specs import card_params
from drill.cards.stated_numbers import AnswerInputs, AnswerWatch, given_text
from drill.cards.template_records import ExpectedAnswer, LedgerTerm, Rendered, TemplateProblem


@dataclass(frozen=True)
class Catalogue:
    """What a card's templates can refer to: the calculator functions and constants, the models and the GPUs."""

    names: Mapping[str, object]
    models: Mapping[str, Mapping[str, object]]
    gpus: Mapping[str, Mapping[str, object]]


def load_catalogue(
    functions: Mapping[str, object] | None,
    models: Mapping[str, Mapping[str, object]] | None,
    gpus: Mapping[str, Mapping[str, object]] | None,
) -> Catalogue:
    """The given tables, with the calculators' own tables for those left out."""
    if functions is None:
        from drill.calc.expressions import NAMES

        functions = NAMES
    if models is None or gpus is None:
        from drill.calc.data import load_gpus, load_models

        models = load_models() if models is None else models
        gpus = load_gpus() if gpus is None else gpus
    return Catalogue(functions, models, gpus)


def _resolve(name: str, value: object, spec: Mapping[str, object], cat: Catalogue) -> object:
    for kind, table in (("model", cat.models), ("gpu", cat.gpus)):
        if kind in spec:
            if not isinstance(value, str) or value not in table:
                known = ", ".join(sorted(table)) or "none"
                raise TemplateProblem(f"unknown {kind} {value!r} (known: {known})", f"params.{name}")
            mapping = dict(table[value])
            mapping.setdefault("name", value)
            return mapping
    return value


def card_scope(card: Card, draw: Mapping[str, object], cat: Catalogue) -> dict[str, object]:
    """The names a card's templates see for one draw: the catalogue's functions and constants, and each parameter."""
    params = card_params(card)
    missing = [name for name in params if name not in draw]
    if missing:
        raise TemplateProblem(f"the draw lacks {', '.join(missing)}", "params")
    scope = dict(cat.names)
    for name, spec in params.items():
        scope[name] = _resolve(name, draw[name], spec, cat)
    return scope


def _entries(card: Card, key: str) -> list[dict[str, object]]:
    entries = card.fields.get(key) or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise TemplateProblem("must be a list of mappings", key)
    return entries


def render(
    card: Card,
    draw: Mapping[str, object],
    *,
    functions: Mapping[str, object] | None = None,
    models: Mapping[str, Mapping[str, object]] | None = None,
    gpus: Mapping[str, Mapping[str, object]] | None = None,
) -> Rendered:
    """The card's text and expected answers for one draw; raises TemplateProblem.

    Every field a learner reads is rendered: the prompt, the answer, each
    answer's label, and each ledger term and formula. The prompt ends with the
    figures of its models and GPUs that the answers use and it does not state
    (drill.cards.stated_numbers), so every answer can be computed from it.

    `functions`, `models` and `gpus` default to the calculators' tables
    (drill.calc.expressions.NAMES, cards/data/models.yaml and gpus.yaml).
    """
    return render_draw(card, draw, load_catalogue(functions, models, gpus)).rendered


@dataclass(frozen=True)
class RenderedDraw:
    """One draw rendered, with what each of its answers reads: the deck check judges the same reads against the
    prompt the learner sees, so a draw's answers are evaluated with their reads watched once."""

    rendered: Rendered
    inputs: AnswerInputs


def render_draw(card: Card, draw: Mapping[str, object], cat: Catalogue) -> RenderedDraw:
    """`render` with the catalogue given, keeping each answer's reads; raises TemplateProblem."""
    scope = Scope(card_scope(card, draw, cat))
    watch = AnswerWatch(card.fields, scope)  # each answer evaluated once, its reads kept for the stated numbers
    answers = []
    for i, entry in enumerate(_entries(card, "answers")):
        where = f"answers[{i}]"
        tolerance = entry.get("tolerance", DEFAULT_TOLERANCE)
        label = render_text(str(entry.get("label", "")), scope, f"{where}.label")
        value = watch.evaluate(str(entry.get("expr", "")))
        answers.append(ExpectedAnswer(label, value, str(entry.get("unit", "")), number(tolerance)))
    ledger = []
    for i, entry in enumerate(_entries(card, "ledger")):
        where = f"ledger[{i}]"
        term = render_text(str(entry.get("term", "")), scope, f"{where}.term")
        formula = render_text(str(entry.get("formula", "")), scope, f"{where}.formula")
        value = evaluate(str(entry.get("expr", "")), scope, f"{where}.expr")
        ledger.append(LedgerTerm(term, formula, value, str(entry.get("unit", ""))))
    written = render_text(card.prompt, scope, "prompt")
    # The figures of a model or GPU the answers are computed from but the prompt leaves out are stated after it.
    inputs = watch.inputs(card.prompt, written)
    given = given_text(inputs.unstated(written), scope)
    prompt = f"{written.rstrip()}\n\n{given}\n" if given else written
    rendered = Rendered(
        prompt=prompt,
        answers=answers,
        ledger=ledger,
        answer=render_text(card.answer, scope, "answer"),
    )
    return RenderedDraw(rendered, inputs)
