"""A round's report as an interviewer would write it: per dimension, the stages reached, the hints used, what
would have been asked next, and a pass, lean or fail with the reason.

Every verdict rests on the graded evidence (drill.mock.grading: checked numbers and steps, asks named, rubric
points ticked for answers that name them), never on points ticked by override, so the learner cannot talk a
round into a pass.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import TypedDict

from drill.cards.field_values import mapping, mappings, number
from drill.cards.model import Card
from drill.cards.scenario import Dimension
from drill.mock.grading import grade_from_json
from drill.mock.rounds import NOT_TIMED
from drill.mock.run import ANSWERED
from drill.words import counted

# How a twist stands in the report besides answered: offered and declined (or its minutes ran out), or not reached.
TWIST_DECLINED = "declined"
TWIST_NOT_REACHED = "not reached"
# The graded evidence a round or a dimension needs for a pass, and for a lean (below it: a fail).
PASS_AT = 0.7
LEAN_AT = 0.5


class Verdict(enum.Enum):
    PASS = "pass"
    LEAN = "lean"
    FAIL = "fail"


def verdict_for(evidence: float) -> Verdict:
    if evidence >= PASS_AT:
        return Verdict.PASS
    if evidence >= LEAN_AT:
        return Verdict.LEAN
    return Verdict.FAIL


class StageLine(TypedDict):
    number: int
    type: str
    dimension: str
    twist: bool
    status: str  # answered, skipped, unanswered; a twist: answered, declined or not reached
    evidence: float | None
    hints: list[str]


class DimensionLine(TypedDict):
    dimension: str
    verdict: str  # pass, lean, fail, or "not assessed"
    evidence: float | None
    reason: str


class RoundReport(TypedDict):
    kind: str
    title: str
    source_id: str
    verdict: str
    reason: str
    evidence: float | None
    reached: int
    stages_total: int
    stages: list[StageLine]
    dimensions: list[DimensionLine]
    hints: list[str]
    next_asked: str
    timing: str  # what a kernel round could not time ('' when everything was measured)


def _first_line(card: Card | None) -> str:
    """A stage's question in one line: the last paragraph of its prompt (the scenario comes first, then the
    question), at most 200 characters."""
    if card is None:
        return ""
    prompt = card.prompt
    if card.kind == "memory_ledger":  # a numeric stage's prompt is a template: its one draw filled in
        prompt = _drawn_question(card)
    paragraphs = [p.strip() for p in prompt.split("\n\n") if p.strip()]
    last = paragraphs[-1] if paragraphs else ""
    return " ".join(last.split())[:200]


def _without_twist_label(question: str) -> str:
    """A twist's question without the "Twist:" its deck opens it with (the report already says it is one)."""
    plain = question.replace("**", "")
    return re.sub(r"^\s*twist\s*:\s*", "", plain, flags=re.IGNORECASE)


def _drawn_question(card: Card) -> str:
    """A numeric stage's question with its numbers: its parameters are pinned to the round's draw, so any draw
    of them is that one."""
    import random

    from drill.cards.evaluation import Scope
    from drill.cards.rendering import card_scope, load_catalogue
    from drill.cards.templating import TemplateProblem, draw_params, render_text

    try:
        scope = Scope(card_scope(card, draw_params(card, random.Random(0)), load_catalogue(None, None, None)))
        return render_text(card.prompt, scope, "prompt")
    except TemplateProblem:
        return card.prompt


def _evidence(slot: Mapping[str, object]) -> float | None:
    if slot.get("status") != ANSWERED:
        return None
    value = slot.get("evidence")
    return float(value) if isinstance(value, (int, float)) else 0.0


def build_round_report(
    plan: Mapping[str, object], slots: Sequence[Mapping[str, object]], cards: Mapping[str, Card]
) -> RoundReport:
    """`plan`: RoundPlan.as_json; `slots`: the run's questions as Slot.as_json; `cards`: the round's cards."""
    by_card = {str(s.get("card_id")): s for s in slots}
    follow_ups = {str(f.get("card_id")): f for f in (mapping(s.get("follow_up")) for s in slots) if f}
    lines: list[StageLine] = []
    hints: list[str] = []
    by_dimension: dict[str, list[tuple[str, float]]] = {}
    for stage in mappings(plan.get("stages")):
        card_id = str(stage["card_id"])
        name = f"stage {stage['number']} ({stage['type']})"
        stage_hints: list[str] = []
        if stage.get("twist"):
            follow = follow_ups.get(card_id)
            grade = grade_from_json(follow.get("grade")) if follow else None
            if follow is None:
                status = TWIST_NOT_REACHED
            else:
                status = ANSWERED if follow.get("status") == ANSWERED else TWIST_DECLINED
            evidence = grade.evidence if grade is not None and status == ANSWERED else None
        else:
            slot = by_card.get(card_id, {})
            status = str(slot.get("status") or "unanswered")
            evidence = _evidence(slot)
            grade = grade_from_json(slot.get("grade"))
            stage_hints += list(grade.hints) if grade else []
            narrower = mapping(slot.get("follow_up"))
            if narrower.get("hint") and narrower.get("status") == ANSWERED:
                stage_hints.append(f"a narrower question with a hint ({narrower['hint']})")
        hints += [f"{name}: {h}" for h in stage_hints]
        if evidence is not None:
            by_dimension.setdefault(str(stage["dimension"]), []).append((name, evidence))
        line = StageLine(
            number=int(number(stage["number"])),
            type=str(stage["type"]),
            dimension=str(stage["dimension"]),
            twist=bool(stage.get("twist")),
            status=status,
            evidence=evidence,
            hints=stage_hints,
        )
        lines.append(line)
    core = [line for line in lines if not line["twist"]]
    reached = sum(line["status"] == ANSWERED for line in core)
    # the round's evidence: its stages' (each with its follow-up counted), a stage not answered counting 0
    evidence = sum(line["evidence"] or 0.0 for line in core) / len(core) if reached else None
    dimensions = [_dimension_line(d, by_dimension.get(d.value, [])) for d in Dimension]
    verdict, reason = _round_verdict(evidence, reached, len(core), dimensions)
    timing = "" if plan.get("timed", True) else f"the kernel was {NOT_TIMED}"
    return RoundReport(
        kind=str(plan.get("kind") or ""),
        title=str(plan.get("title") or ""),
        source_id=str(plan.get("source_id") or ""),
        verdict=verdict,
        reason=reason + (f"; {timing}" if timing else ""),
        evidence=evidence,
        reached=reached,
        stages_total=len(core),
        stages=lines,
        dimensions=dimensions,
        hints=hints,
        next_asked=_next_asked(plan, lines, cards),
        timing=timing,
    )


def _dimension_line(dimension: Dimension, graded: list[tuple[str, float]]) -> DimensionLine:
    if not graded:
        return DimensionLine(
            dimension=dimension.value, verdict="not assessed", evidence=None, reason="no stage of it was answered"
        )
    mean = sum(e for _, e in graded) / len(graded)
    said = ", ".join(f"{name} {e:.0%}" for name, e in graded)
    return DimensionLine(dimension=dimension.value, verdict=verdict_for(mean).value, evidence=mean, reason=said)


def _round_verdict(
    evidence: float | None, reached: int, total: int, dimensions: Sequence[DimensionLine]
) -> tuple[str, str]:
    """The round's pass, lean or fail, and why: its evidence over every stage, a pass held to lean where a
    dimension failed, and the stages not reached named."""
    if evidence is None:
        return Verdict.FAIL.value, f"no stage answered of {total}"
    verdict = verdict_for(evidence)
    why = [f"graded {evidence:.0%} over {total} stages ({reached} answered)"]
    failed = [d for d in dimensions if d["verdict"] == Verdict.FAIL.value]
    if verdict is Verdict.PASS and failed:
        verdict = Verdict.LEAN
        why.append(f"held to lean: {', '.join(d['dimension'] for d in failed)} below {LEAN_AT:.0%}")
    elif failed:
        weakest = ", ".join(f"{d['dimension']} {d['evidence'] or 0:.0%}" for d in failed)
        why.append(f"weakest: {weakest}")
    if reached < total:
        why.append(f"{counted(total - reached, 'stage')} not reached")
    return verdict.value, "; ".join(why)


def _next_asked(plan: Mapping[str, object], lines: Sequence[StageLine], cards: Mapping[str, Card]) -> str:
    """What an interviewer would have asked next: the first stage not answered, else the first twist not reached,
    else the debrief."""
    stages = {int(number(s["number"])): str(s["card_id"]) for s in mappings(plan.get("stages"))}
    for line in lines:
        if not line["twist"] and line["status"] != ANSWERED:
            return f"stage {line['number']} ({line['type']}): {_first_line(cards.get(stages[line['number']]))}"
    for line in lines:
        if line["twist"] and line["status"] == TWIST_NOT_REACHED:
            return f"a twist: {_without_twist_label(_first_line(cards.get(stages[line['number']])))}"
    return "every stage and twist was put: the debrief, then the candidate's questions"


class DimensionRow(TypedDict):
    dimension: str
    verdict: str
    graded: str
    reason: str


class RoundContext(TypedDict):
    """A round's report as the report templates show it: every figure already in words."""

    title: str
    kind: str
    verdict: str
    reason: str
    reached: str
    dimensions: list[DimensionRow]
    stages: list[str]
    hints: list[str]
    next_asked: str
    timing: str


def round_context(data: object) -> RoundContext | None:
    """The report's `round` (a RoundReport, as stored) in words for the templates; None for a quick mock."""
    if not isinstance(data, Mapping):
        return None
    rows = [
        DimensionRow(
            dimension=str(d.get("dimension") or ""),
            verdict=str(d.get("verdict") or ""),
            graded="-" if d.get("evidence") is None else f"{float(d['evidence']):.0%}",
            reason=str(d.get("reason") or ""),
        )
        for d in data.get("dimensions") or []
        if isinstance(d, Mapping)
    ]
    stages = []
    for s in data.get("stages") or []:
        if not isinstance(s, Mapping):
            continue
        graded = "" if s.get("evidence") is None else f", graded {float(s['evidence']):.0%}"
        what = "twist" if s.get("twist") else f"stage {s.get('number')} · {s.get('type')}"
        stages.append(f"{what} ({s.get('dimension')}): {s.get('status')}{graded}")
    return RoundContext(
        title=str(data.get("title") or ""),
        kind=str(data.get("kind") or ""),
        verdict=str(data.get("verdict") or ""),
        reason=str(data.get("reason") or ""),
        reached=f"{data.get('reached', 0)} of {data.get('stages_total', 0)} stages answered",
        dimensions=rows,
        stages=stages,
        hints=[str(h) for h in data.get("hints") or []],
        next_asked=str(data.get("next_asked") or ""),
        timing=str(data.get("timing") or ""),
    )
