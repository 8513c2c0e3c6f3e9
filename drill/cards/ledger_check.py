"""The deck check of a memory_ledger card: parameter specs, the allow-list, then rendering many draws."""

from __future__ import annotations

import random
from collections.abc import Mapping

from drill.cards.draw_prose import draw_prose_problems
from drill.cards.evaluation import expression_problems, template_problems
from drill.cards.field_values import mapping
from drill.cards.model import Card
from drill.cards.param_specs import MAX_PARAMS, draw_params, options, spec_problem
from drill.cards.rendering import load_catalogue, render_draw
from drill.cards.stated_numbers import AnswerInputs
from drill.cards.template_records import Rendered, TemplateProblem
from drill.quantities import DIMENSIONS

CHECK_DRAWS = 8
CHECK_SEED = 20_240_601
MAX_CORNER_DRAWS = 64
ANSWER_KEYS = {"label": True, "expr": True, "unit": True, "tolerance": False}
LEDGER_KEYS = {"term": True, "formula": True, "expr": True, "unit": True}
# The entry keys that are templates: rendered for every draw, as the prompt and answer are.
TEMPLATE_KEYS = ("label", "term", "formula")
# What template text looks like: none of it may reach the learner.
TEMPLATE_MARKS = ("{{", "{%", "{#")


def _template_left(text: str) -> str | None:
    """The first template mark in `text`, if any."""
    return next((mark for mark in TEMPLATE_MARKS if mark in text), None)


def _shown_fields(rendered: Rendered) -> list[tuple[str, str]]:
    """Every rendered field a learner reads, named as in the card."""
    fields = [("prompt", rendered.prompt), ("answer", rendered.answer)]
    fields += [(f"answers[{i}].label", a.label) for i, a in enumerate(rendered.answers)]
    for i, t in enumerate(rendered.ledger):
        fields += [(f"ledger[{i}].term", t.term), (f"ledger[{i}].formula", t.formula)]
    return fields


def _unrendered_problems(card: Card) -> list[str]:
    """Fields shown as written (never rendered) must not hold template text."""
    shown = [*(("rubric", r) for r in card.rubric), *(("sources", s) for s in card.sources)]
    return [
        f"{name}: shows template text {mark!r}, but this field is shown as written"
        for name, text in shown
        if (mark := _template_left(text)) is not None
    ]


def _entry_problems(entries: object, key: str, spec: dict[str, bool], names: Mapping[str, object]) -> list[str]:
    if key == "answers" and (not isinstance(entries, list) or not entries):
        return ["`answers` needs at least one entry"]
    if not isinstance(entries, list):
        return [f"`{key}` must be a list"]
    problems = []
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a mapping with {', '.join(spec)}")
            continue
        for k in entry:
            if k not in spec:
                problems.append(f"{where}: unknown key {k!r} (expected {', '.join(spec)})")
        for k, required in spec.items():
            if k not in entry:
                if required:
                    problems.append(f"{where}: missing `{k}`")
                continue
            value = entry[k]
            if k == "tolerance":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 0.5:
                    problems.append(f"{where}.tolerance: a relative tolerance between 0 (exact) and 0.5, got {value!r}")
            elif not isinstance(value, str) or not value.strip():
                problems.append(f"{where}.{k}: expected non-empty text")
            elif k == "unit" and value not in DIMENSIONS:
                problems.append(f"{where}.unit: unknown unit {value!r} (known: {', '.join(DIMENSIONS)})")
            elif k == "expr":
                problems += [f"{where}.expr: {p}" for p in expression_problems(value, names)]
            elif k in TEMPLATE_KEYS:
                problems += [f"{where}.{k}: {p}" for p in template_problems(value, names)]
    return problems


def _check_draws(card: Card, params: Mapping[str, object], seed: int) -> list[dict[str, object]]:
    """Random draws, plus draws that pin one parameter to each listed option (at most MAX_CORNER_DRAWS)."""
    rng = random.Random(seed)
    draws = [draw_params(card, rng) for _ in range(CHECK_DRAWS)]
    pinned = []
    for name, spec in params.items():
        distinct = {repr(o): o for o in options(mapping(spec))}  # an option listed twice is pinned once
        pinned += [(name, value) for value in distinct.values()]
    if len(pinned) > MAX_CORNER_DRAWS:
        pinned = rng.sample(pinned, MAX_CORNER_DRAWS)
    corners = []
    for name, value in pinned:
        base = draw_params(card, rng)
        base[name] = value
        corners.append(base)
    return draws + corners


def _unstated_problems(inputs: AnswerInputs, prompt: str, seen: set[str], shown: str) -> list[str]:
    """Answers computed from a number the prompt does not state (each answer once)."""
    problems = []
    for where, missing in inputs.unstated(prompt).items():
        key = f"{where}.stated"
        if key in seen:
            continue
        seen.add(key)
        named = ", ".join(f"{i.name} = {i.value:g}" for i in missing)
        problems.append(
            f"{where}: computed from {named}, which the prompt does not state (with {shown}); "
            "a learner has only the prompt's numbers: state it there"
        )
    return problems


def check_ledger_card(
    card: Card,
    *,
    functions: Mapping[str, object] | None = None,
    models: Mapping[str, Mapping[str, object]] | None = None,
    gpus: Mapping[str, Mapping[str, object]] | None = None,
    seed: int = CHECK_SEED,
) -> list[str]:
    """Problems of a memory_ledger card (empty when it is fine).

    Checks parameter specs, the allow-list on every template and expression,
    then renders several seeded draws plus every model, GPU and choice and
    both ends of every range: each must render, no rendered field may still
    show template text ({{, {% or {#), every number an answer is computed
    from must be stated in the prompt (drill.cards.stated_numbers), and each
    expression must give a finite number (answers: non-zero and not negative).
    Last, no claim of the fixed prose may be contradicted by a draw
    (drill.cards.draw_prose).
    """
    try:
        cat = load_catalogue(functions, models, gpus)
    except Exception as e:  # noqa: BLE001 - the calculator data itself is broken or missing
        return [f"cannot load the calculators to check this card: {type(e).__name__}: {e}"]
    problems: list[str] = []
    params = card.fields.get("params")
    if not isinstance(params, dict):
        return ["`params` must be a mapping of parameter name to spec"]
    if len(params) > MAX_PARAMS:
        return [f"params: {len(params)} parameters; a card may have at most {MAX_PARAMS}"]
    for name, spec in params.items():
        problem = spec_problem(name, spec)
        if problem:
            problems.append(problem)
            continue
        if name in cat.names:
            problems.append(f"params.{name}: the name hides the function or constant {name!r}")
        for kind, table in (("model", cat.models), ("gpu", cat.gpus)):
            for value in spec.get(kind, []):
                if value not in table:
                    problems.append(f"params.{name}: unknown {kind} {value!r} (known: {', '.join(sorted(table))})")
    names = {**cat.names, **{str(name): None for name in params}}
    problems += [f"prompt: {p}" for p in template_problems(card.prompt, names)]
    problems += [f"answer: {p}" for p in template_problems(card.answer, names)]
    problems += _entry_problems(card.fields.get("answers"), "answers", ANSWER_KEYS, names)
    problems += _entry_problems(card.fields.get("ledger", []), "ledger", LEDGER_KEYS, names)
    problems += _unrendered_problems(card)
    if problems:
        return list(dict.fromkeys(problems))
    seen: set[str] = set()
    checked: set[str] = set()  # the draws rendered, by their exact values (1 and 1.0 render differently)
    for draw in _check_draws(card, params, seed):
        exact = ", ".join(f"{k}={v!r}" for k, v in draw.items())
        if exact in checked:  # a draw met again renders the same and could only repeat what it already reported
            continue
        checked.add(exact)
        shown = ", ".join(f"{k}={v}" for k, v in draw.items()) or "no parameters"
        try:
            drawn = render_draw(card, draw, cat)
        except TemplateProblem as e:
            if e.where not in seen:
                seen.add(e.where)
                problems.append(f"{e} (with {shown})")
            continue
        rendered = drawn.rendered
        problems += _unstated_problems(drawn.inputs, rendered.prompt, seen, shown)
        for where, text in _shown_fields(rendered):
            mark = _template_left(text)
            if mark is not None and where not in seen:
                seen.add(where)
                problems.append(f"{where}: the learner would see template text {mark!r} (with {shown})")
        for i, a in enumerate(rendered.answers):
            where = f"answers[{i}]"
            if where in seen:
                continue
            if a.value == 0 and a.tolerance > 0:
                problems.append(
                    f"{where}.expr: gives 0 (with {shown}); a relative tolerance cannot check 0 (use tolerance: 0)"
                )
                seen.add(where)
            elif a.value < 0:
                problems.append(f"{where}.expr: gives a negative value {a.value:g} (with {shown})")
                seen.add(where)
            elif a.tolerance == 0 and not a.value.is_integer():
                problems.append(
                    f"{where}: tolerance 0 asks for an exact answer, but the expr gives {a.value!r} (with {shown})"
                )
                seen.add(where)
    if not problems:
        problems += draw_prose_problems(card, cat)
    return problems
