"""A round's report as an interviewer would write it: per dimension, the stages reached, the hints used, what
would have been asked next, and a pass, lean or fail with the reason.

Every verdict rests on the graded evidence (drill.mock.grading: checked numbers and steps, asks named, rubric
points ticked for answers that name them), never on points ticked by override, so the learner cannot talk a
round into a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from drill.cards.field_values import mapping, mappings, number
from drill.cards.model import Card
from drill.cards.scenario import Dimension
from drill.mock.grading import grade_from_json
from drill.mock.report_record import DimensionLine, RoundReport, RoundVerdict, StageLine
from drill.mock.rounds import NOT_TIMED
from drill.mock.run import ANSWERED
from drill.words import counted

# How a twist stands in the report besides answered: offered and declined (or its minutes ran out), or not reached.
TWIST_DECLINED = "declined"
TWIST_NOT_REACHED = "not reached"
# The graded evidence a round or a dimension needs for a pass, and for a lean (below it: a fail).
PASS_AT = 0.7
LEAN_AT = 0.5


def verdict_for(evidence: float) -> RoundVerdict:
    if evidence >= PASS_AT:
        return RoundVerdict.PASS
    if evidence >= LEAN_AT:
        return RoundVerdict.LEAN
    return RoundVerdict.FAIL


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
    """`plan`: RoundPlan.as_json (kept with the report); `slots`: the run's questions as Slot.as_json; `cards`: the
    round's cards."""
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
            hints=tuple(stage_hints),
        )
        lines.append(line)
    core = [line for line in lines if not line.twist]
    reached = sum(line.status == ANSWERED for line in core)
    # the round's evidence: its stages' (each with its follow-up counted), a stage not answered counting 0
    evidence = sum(line.evidence or 0.0 for line in core) / len(core) if reached else None
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
        stages=tuple(lines),
        dimensions=tuple(dimensions),
        hints=tuple(hints),
        next_asked=_next_asked(plan, lines, cards),
        timing=timing,
        plan=plan,
    )


def _dimension_line(dimension: Dimension, graded: list[tuple[str, float]]) -> DimensionLine:
    if not graded:
        return DimensionLine(
            dimension=dimension.value,
            verdict=RoundVerdict.NOT_ASSESSED,
            evidence=None,
            reason="no stage of it was answered",
        )
    mean = sum(e for _, e in graded) / len(graded)
    said = ", ".join(f"{name} {e:.0%}" for name, e in graded)
    return DimensionLine(dimension=dimension.value, verdict=verdict_for(mean), evidence=mean, reason=said)


def _round_verdict(
    evidence: float | None, reached: int, total: int, dimensions: Sequence[DimensionLine]
) -> tuple[RoundVerdict, str]:
    """The round's pass, lean or fail, and why: its evidence over every stage, a pass held to lean where a
    dimension failed, and the stages not reached named."""
    if evidence is None:
        return RoundVerdict.FAIL, f"no stage answered of {total}"
    verdict = verdict_for(evidence)
    why = [f"graded {evidence:.0%} over {total} stages ({reached} answered)"]
    failed = [d for d in dimensions if d.verdict is RoundVerdict.FAIL]
    if verdict is RoundVerdict.PASS and failed:
        verdict = RoundVerdict.LEAN
        why.append(f"held to lean: {', '.join(d.dimension for d in failed)} below {LEAN_AT:.0%}")
    elif failed:
        weakest = ", ".join(f"{d.dimension} {d.evidence or 0:.0%}" for d in failed)
        why.append(f"weakest: {weakest}")
    if reached < total:
        why.append(f"{counted(total - reached, 'stage')} not reached")
    return verdict, "; ".join(why)


def _next_asked(plan: Mapping[str, object], lines: Sequence[StageLine], cards: Mapping[str, Card]) -> str:
    """What an interviewer would have asked next: the first stage not answered, else the first twist not reached,
    else the debrief."""
    stages = {int(number(s["number"])): str(s["card_id"]) for s in mappings(plan.get("stages"))}
    for line in lines:
        if not line.twist and line.status != ANSWERED:
            return f"stage {line.number} ({line.type}): {_first_line(cards.get(stages[line.number]))}"
    for line in lines:
        if line.twist and line.status == TWIST_NOT_REACHED:
            return f"a twist: {_without_twist_label(_first_line(cards.get(stages[line.number])))}"
    return "every stage and twist was put: the debrief, then the candidate's questions"
