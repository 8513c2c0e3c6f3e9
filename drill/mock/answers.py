"""A card's answer in a mock graded by its kind: what the learner wrote, the points they ticked, the checks.

The card kinds meet drill.mock.grading here: a concept by its rubric, a diagnosis by its reading and its
rubric, a shape trace by its steps, a memory ledger by its answers and the working's steps. `record` is what
the answer form gave (drill.ui.answering / drill.ui.mock_forms): typed text, a reading, shapes, numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from drill.cards.field_values import mapping, texts
from drill.cards.model import Card
from drill.cards.scenario import is_clarify
from drill.mock.grading import (
    MIN_WORDS,
    PointCheck,
    QuestionGrade,
    RubricGrade,
    Tick,
    TickBasis,
    check_point,
    grade_diagnosis,
    grade_rubric,
    grade_steps,
)

# The one point of a card with no rubric; its key terms are the expected answer's.
NO_RUBRIC = "my answer covered what the expected answer says"
RUBRIC_KINDS = ("concept", "diagnosis")


def rubric_points(card: Card) -> tuple[str, ...]:
    """The points a learner ticks for `card`: its rubric, or one point standing for the whole answer."""
    return card.rubric or (NO_RUBRIC,)


def said(card: Card, record: Mapping[str, object]) -> str:
    """All the learner wrote for a rubric card: the typed answer, or a diagnosis's reading and experiment."""
    if card.kind == "diagnosis":
        return f"{record.get('reading') or record.get('choice') or ''} {record.get('experiment') or ''}".strip()
    return str(record.get("typed") or "")


def check_tick(card: Card, point: int, record: Mapping[str, object]) -> PointCheck:
    """Whether the answer in `record` says enough for rubric point `point` of `card` to be ticked."""
    points = rubric_points(card)
    source = card.answer if points[point] == NO_RUBRIC else points[point]
    check = check_point(said(card, record), source, card.prompt)
    return PointCheck(points[point], check.terms, check.named, check.word_count)


def counted_ticks(card: Card, record: Mapping[str, object], ticks: Sequence[Tick]) -> tuple[Tick, ...]:
    """The ticks that count, checked again here whoever made them: none for an answer under MIN_WORDS words
    (not even by override), and a checked tick only where the answer names the point."""
    counted = []
    for tick in ticks:
        check = check_tick(card, tick.point, record)
        if check.word_count < MIN_WORDS:
            continue
        if tick.basis is TickBasis.CHECKED and not check.passed:
            continue
        counted.append(tick)
    return tuple(counted)


def clarify_ticks(card: Card, record: Mapping[str, object]) -> tuple[Tick, ...]:
    """A clarifying stage's asks that the answer names: each ask whose key terms the answer says one of (the
    asks are read alone, not against the scenario's prompt, which states some of the numbers asked for)."""
    typed = said(card, record)
    return tuple(Tick(i, TickBasis.CHECKED) for i, ask in enumerate(card.rubric) if check_point(typed, ask).named)


def grade_answer(card: Card, record: Mapping[str, object], ticks: Sequence[Tick] = ()) -> QuestionGrade:
    """The grade of `card`'s answer `record`, with the rubric points `ticks` (rubric kinds only; see
    `counted_ticks`). A round's clarifying stage is graded by the asks its answer names, with no ticks."""
    if is_clarify(card):
        graded = grade_rubric(RubricGrade(card.rubric, clarify_ticks(card, record)))
        return replace(graded, parts=(f"{len(card.rubric) - len(graded.missed)} of {len(card.rubric)} asks named",))
    if card.kind in RUBRIC_KINDS:
        rubric = RubricGrade(rubric_points(card), counted_ticks(card, record, ticks))
        if card.kind == "diagnosis":
            return grade_diagnosis(
                bool(record.get("correct")), bool(record.get("choices_shown")), rubric, str(card.fields["correct"])
            )
        return grade_rubric(rubric)
    if card.kind == "shape_trace":
        from drill.cards.checking import check_shape_steps

        results = check_shape_steps(card, texts(record.get("steps")))
        return grade_steps([r.ok for r in results], [f"{r.label}: {r.expected}" for r in results])
    if card.kind == "memory_ledger":
        return _ledger(card, record)
    return QuestionGrade(0.0, 0.0)


def _ledger(card: Card, record: Mapping[str, object]) -> QuestionGrade:
    from drill.cards.number_check import DEFAULT_TOLERANCE
    from drill.cards.templating import render
    from drill.mock.hard import HARD_TOLERANCE, hard_question
    from drill.mock.working import grade_ledger

    draw = mapping(record.get("draw"))
    hard = bool(record.get("hard"))  # asked in hard mode: the figures withheld, the tolerances looser
    rendered = hard_question(card, draw).rendered if hard else render(card, draw)
    given = texts(record.get("given"))
    working = str(record.get("working") or "")
    step_tolerance = HARD_TOLERANCE if hard else DEFAULT_TOLERANCE
    graded = grade_ledger(rendered.answers, given, rendered.ledger, working, rendered.prompt, step_tolerance)
    return graded.grade()


def kernel_grade(grade: int) -> QuestionGrade:
    """A kernel card's grade out of 5, as its judge's screen gave it (the judge checked and timed it)."""
    share = max(0, min(5, grade)) / 5
    return QuestionGrade(share, share, parts=(f"kernel graded {grade}/5",))
