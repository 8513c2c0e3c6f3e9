"""The deck check of a scenario card: its round, its stages' shape, and each stage rendered and checked like the
card it is asked as (a numeric stage by the memory_ledger check, over many draws of the scenario's parameters)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from drill.cards.evaluation import template_problems
from drill.cards.field_values import mapping
from drill.cards.ledger_check import CHECK_DRAWS, CHECK_SEED, TEMPLATE_MARKS, check_ledger_card
from drill.cards.model import Card
from drill.cards.param_specs import card_params, draw_params, spec_problem
from drill.cards.scenario import (
    COMMON_STAGE_KEYS,
    CORE_MINUTES,
    MIN_CORE_STAGES,
    STAGE_KEYS,
    RoundType,
    Stage,
    StageType,
    core_stages,
    read_stage,
    stage_card,
    stage_prompt_source,
    stages_of,
)
from drill.cards.template_records import TemplateProblem

# An ask is graded by the words it names: it needs one of three letters or more, or an acronym (KV, TP).
_WORD = re.compile(r"[A-Za-z]{3,}|\b[A-Z]{2}\b")


def stage_shape_problems(fields: Mapping[str, object]) -> list[tuple[int | None, str]]:
    """The problems of a scenario's round, params and stages' keys, checked as the deck loads: each with the index
    of its stage (None for the card itself). `fields`: the card's keys as the deck wrote them."""
    problems: list[tuple[int | None, str]] = []
    rounds = ", ".join(r.value for r in RoundType)
    if fields.get("round") not in {r.value for r in RoundType}:
        problems.append((None, f"round: must be one of {rounds} (got {fields.get('round')!r})"))
    params = fields.get("params") or {}
    if not isinstance(params, dict):
        return [*problems, (None, "params: must be a mapping of parameter name to spec")]
    raw = fields.get("stages")
    if not isinstance(raw, list) or not raw:
        return [*problems, (None, "stages: a scenario needs a list of stages")]
    stages: list[Stage] = []
    for i, entry in enumerate(raw):
        shape = _shape_problems(entry, params)
        if shape:
            problems += [(i, f"stages[{i}]: {p}") for p in shape]
            continue
        try:
            stages.append(read_stage(i + 1, entry))
        except ValueError as exc:
            problems.append((i, f"stages[{i}]: {exc}"))
    if problems:
        return problems
    core = core_stages(stages)
    if len(core) < MIN_CORE_STAGES:
        problems.append((None, f"stages: a scenario asks at least {MIN_CORE_STAGES} stages before its twists"))
    if len(core) == len(stages):
        problems.append((None, "stages: a scenario needs at least one twist (its round's follow-ups)"))
    low, high = CORE_MINUTES
    given = sum(s.minutes for s in core)
    if not low <= given <= high:
        problems.append(
            (None, f"stages: the stages before the twists give {given} minutes in all; give {low} to {high}")
        )
    return problems


def check_scenario_card(card: Card) -> list[str]:
    """Problems of a scenario card (empty when it is fine): its shape (as the deck load checks it), then each
    stage rendered and checked as the card it is asked as."""
    problems = [message for _, message in stage_shape_problems(card.fields)]
    params = mapping(card.fields.get("params"))
    problems += [p for name, spec in params.items() if (p := spec_problem(name, spec))]
    if problems:
        return problems
    for stage in stages_of(card):
        problems += [f"stages[{stage.number - 1}]: {p}" for p in _stage_problems(card, stage)]
    return problems


def _shape_problems(entry: object, params: Mapping[str, object]) -> list[str]:
    """A stage's keys: a mapping, a known type, the keys its type needs, none it does not know."""
    if not isinstance(entry, dict):
        return ["a stage is a mapping with `type` and `prompt`"]
    try:
        kind = StageType(entry.get("type"))
    except ValueError:
        return [f"`type` must be one of {', '.join(t.value for t in StageType)} (got {entry.get('type')!r})"]
    required, optional = STAGE_KEYS[kind]
    known = (*COMMON_STAGE_KEYS, *required, *optional)
    problems = [
        f"unknown key `{k}` for a {kind.value} stage (expected {', '.join(known)})" for k in entry if k not in known
    ]
    for key in ("prompt", *required):
        if not entry.get(key):
            problems.append(f"missing `{key}`")
    for key in ("prompt", "answer"):
        if key in entry and not isinstance(entry[key], str):
            problems.append(f"`{key}` must be text")
    for key in ("asks", "rubric"):
        value = entry.get(key)
        if value is not None and (
            not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value)
        ):
            problems.append(f"`{key}` must be a list of non-empty text")
    if kind is StageType.TWIST:
        problems += _twist_problems(entry, params)
    return problems


def _twist_problems(entry: Mapping[str, object], params: Mapping[str, object]) -> list[str]:
    changes = entry.get("set")
    problems = []
    if changes is not None and not isinstance(changes, dict):
        problems.append("`set` must map parameter names to their new values")
    elif changes:
        problems += [f"set: `{name}` is not one of the scenario's params" for name in changes if name not in params]
    if bool(entry.get("answers")) == bool(entry.get("rubric")):
        problems.append("a twist re-asks with `answers` (a number) or with `rubric` (free text), one of them")
    if entry.get("ledger") and not entry.get("answers"):
        problems.append("`ledger` goes with `answers`")
    return problems


def _stage_problems(card: Card, stage: Stage) -> list[str]:
    """A stage rendered and checked as the card it is asked as."""
    problems = [f"rubric: shows template text {m!r}, but it is shown as written" for m in _marks(stage.rubric)]
    problems += [f"asks: shows template text {m!r}, but it is shown as written" for m in _marks(stage.asks)]
    problems += [f"asks: {ask!r} names nothing an answer could name" for ask in stage.asks if not _WORD.search(ask)]
    specs = {**card_params(card), **{name: {"choices": [value]} for name, value in stage.changes.items()}}
    if stage.numeric:
        ledger_card = stage_card(card, stage, {}, params=specs)
        return problems + check_ledger_card(ledger_card)
    names: dict[str, object] = {name: None for name in specs}
    from drill.calc.expressions import NAMES

    names.update(NAMES)
    source = stage_prompt_source(card, stage)
    problems += [f"prompt: {p}" for p in template_problems(source, names)]
    problems += [f"answer: {p}" for p in template_problems(stage.answer or card.answer, names)]
    if problems:
        return problems
    holder = _with_params(card, specs)
    rng = random.Random(CHECK_SEED)
    for _ in range(CHECK_DRAWS):
        draw = draw_params(holder, rng)
        try:
            shown = stage_card(card, stage, draw, params=specs)
        except TemplateProblem as exc:
            return [*problems, f"{exc} (with {', '.join(f'{k}={v}' for k, v in draw.items())})"]
        for where, text in (("prompt", shown.prompt), ("answer", shown.answer)):
            problems += [f"{where}: the learner would see template text {m!r}" for m in _marks((text,))]
        if problems:
            return problems
    return problems


def _with_params(card: Card, specs: Mapping[str, object]) -> Card:
    from dataclasses import replace

    return replace(card, fields={"params": dict(specs)})


def _marks(texts: tuple[str, ...]) -> list[str]:
    return [mark for text in texts for mark in TEMPLATE_MARKS if mark in text]
