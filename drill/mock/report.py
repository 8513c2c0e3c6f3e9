"""A finished mock's report built from its run (drill.mock.report_record holds the record; drill.mock.render lays
it out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from drill.cards.field_values import items, number
from drill.cards.model import Card
from drill.cards.question import question_markdown
from drill.cards.scenario import STAGE_MARK
from drill.mock.grading import grade_from_json
from drill.mock.report_record import FollowUpLine, MockReport, OverrideLine, QuestionLine, StudyNext, TopicScore
from drill.mock.run import ANSWERED, SKIPPED, UNANSWERED
from drill.study.scheduling import MOCK_PASS
from drill.study.standing import ranked_topics

NOT_SUBMITTED = "(typed, never submitted: not scored)"  # under an answer the mock ended before it was submitted


def build_report(
    mock: Mapping[str, object],
    slots: Sequence[Mapping[str, object]],
    cards: Mapping[str, Card],
    titles: Mapping[str, str],
    weakness: Mapping[str, float],
    readiness: str | None = None,
) -> MockReport:
    """`mock`: id, started_at, ended_at, minutes, status; `slots`: each question as Slot.as_json plus position.

    A mock with no answered question is not scored: its score is None, no topic has a score and what to
    study next comes from the weakness figures alone. `readiness` is the line on readiness for the interview
    date (drill.study.readiness.ReadinessFigures.summary_line), None when no date is set."""
    questions: list[QuestionLine] = []
    per_topic: dict[str, list[float]] = {}
    for s in slots:
        card_id = str(s["card_id"])
        topic = str(s["topic"])
        card = cards.get(card_id)
        score = _figure(s.get("score"))
        grade = grade_from_json(s.get("grade"))
        if card is None:
            prompt = "(this card is no longer in the decks)"
            expected = ""
        else:
            prompt, expected = sides(card, s.get("answer"))
        per_topic.setdefault(topic, []).append(score)
        questions.append(
            QuestionLine(
                position=int(number(s["position"])),
                card_id=card_id,
                topic=topic,
                title=titles.get(topic, topic),
                kind=asked_as(str(s["kind"]), card),
                prompt=prompt,
                budget_s=number(s["budget_s"]),
                spent_s=_figure(s.get("spent_s")),
                status=str(s["status"]),
                skips=int(_figure(s.get("skips"))),
                score=score,
                evidence=_figure(s.get("evidence")),
                answer=answer_text(s.get("answer")),
                said=gave_something(s.get("answer")),
                expected=expected,
                missed=[str(m) for m in items(s.get("missed"))],
                graded=list(grade.parts) if grade else [],
                overrides=[OverrideLine(**o) for o in grade.overrides] if grade else [],
                hints=list(grade.hints) if grade else [],
                follow_up=follow_up_report(s.get("follow_up")),
            )
        )
    answered = sum(q["status"] == ANSWERED for q in questions)
    scored = per_topic if answered else {}  # a mock with no answer scores no topic
    topics = [
        TopicScore(topic=t, title=titles.get(t, t), score=sum(v) / len(v), questions=len(v))
        for t, v in sorted(scored.items())
    ]
    # topics this mock found wanting (a pass is no reason to study a topic next), lowest score first
    ranked = sorted(
        (t for t in topics if t["score"] < MOCK_PASS),
        key=lambda t: (t["score"], -weakness.get(t["topic"], 0.0), t["topic"]),
    )
    study_next = [
        StudyNext(
            topic=t["topic"],
            title=t["title"],
            why=f"score {t['score']:.0%} in this mock; weakness {weakness.get(t['topic'], 0.0):.2f}",
        )
        for t in ranked[:3]
    ]
    asked = {q["topic"] for q in questions}
    if len(study_next) < 3:  # a short mock: add the weakest topics it did not score, in the stats' ranking
        for topic in ranked_topics({c.topic for c in cards.values()}, weakness):
            if len(study_next) >= 3:
                break
            if topic not in scored:
                measured = f"weakness {weakness[topic]:.2f}" if topic in weakness else "not practised yet"
                why = measured + ("" if topic in asked else "; not asked")
                study_next.append(StudyNext(topic=topic, title=titles.get(topic, topic), why=why))
    total = len(questions)
    ended = mock.get("ended_at")
    return MockReport(
        id=int(number(mock["id"])),
        started_at=str(mock["started_at"]),
        ended_at=None if ended is None else str(ended),
        minutes=int(number(mock["minutes"])),
        status=str(mock["status"]),
        score=sum(q["score"] for q in questions) / total if answered else None,
        evidence=sum(q["evidence"] for q in questions) / total if answered else None,
        answered=answered,
        said=sum(q["status"] == ANSWERED and q["said"] for q in questions),
        skipped=sum(q["status"] == SKIPPED or q["skips"] > 0 for q in questions),
        unanswered=sum(q["status"] == UNANSWERED for q in questions),
        total=total,
        topics=topics,
        questions=questions,
        study_next=study_next,
        readiness=readiness,
    )


def _figure(value: object) -> float:
    """A stored score, time or count; 0 when it was never set."""
    return number(value) if value else 0.0


def asked_as(kind: str, card: Card | None) -> str:
    """What a question was, in the report's words: its kind, or a round's stage by what the stage asks."""
    if card is None or STAGE_MARK not in card.id:
        return kind
    stage = card.fields.get("stage")
    return f"{stage} stage" if isinstance(stage, str) else kind


def sides(card: Card, answer: object) -> tuple[str, str]:
    """The question and the expected answer as the learner met them: a diagnosis with its evidence, a shape
    trace with its given line, a memory-ledger card with the numbers of the draw it was asked with (one fixed
    draw, said so, when it was never answered), its templates filled."""
    if card.kind == "kernel":  # the reference solution, kept with the answer by the screen that judged it
        reference = answer.get("reference") if isinstance(answer, Mapping) else None
        more = f"\n\n**Reference solution:**\n\n{reference}" if isinstance(reference, str) and reference else ""
        return question_markdown(card), f"{card.answer}{more}"
    if card.kind != "memory_ledger":
        return question_markdown(card), card.answer
    import random

    from drill.cards.templating import draw_params, render
    from drill.quantities import format_quantity

    draw = answer.get("draw") if isinstance(answer, Mapping) else None
    note = ""
    try:
        if not isinstance(draw, Mapping):
            draw = draw_params(card, random.Random(card.id))
            note = "\n\n*Not answered: shown with one draw of its numbers.*"
        shown = render(card, draw)
    except Exception as exc:  # noqa: BLE001 - a card that no longer renders still gets its report line
        return card.prompt, f"{card.answer}\n\n(its numbers could not be shown: {exc})"
    expected = "\n".join(f"- {a.label}: {format_quantity(a.value, a.unit)}" for a in shown.answers)
    return question_markdown(card, shown.prompt) + note, f"{expected}\n\n{shown.answer}"


def follow_up_report(follow: object) -> FollowUpLine | None:
    """A question's follow-up as the report shows it: what was asked, its hint, the answer and its score."""
    if not isinstance(follow, Mapping):
        return None
    grade = grade_from_json(follow.get("grade"))
    return FollowUpLine(
        kind=str(follow.get("kind") or ""),
        card_id=str(follow.get("card_id") or ""),
        prompt=str(follow.get("prompt") or ""),
        hint=str(follow.get("hint") or ""),
        status=str(follow.get("status") or ""),
        spent_s=_figure(follow.get("spent_s")),
        budget_s=_figure(follow.get("budget_s")),
        answer=answer_text(follow.get("answer")),
        score=None if grade is None else grade.score,
        missed=list(grade.missed) if grade else [],
    )


def gave_something(answer: object) -> bool:
    """Whether a submitted answer holds anything: text, a shape, a number or a reading (not all blank)."""
    if not isinstance(answer, Mapping):
        return bool(answer)
    if answer.get("choice") or str(answer.get("reading") or "").strip():
        return True
    for key in ("typed", "experiment"):
        if str(answer.get(key) or "").strip():
            return True
    for key in ("steps", "given"):
        if any(str(x).strip() for x in answer.get(key) or []):
            return True
    return "verdict" in answer


def answer_text(answer: object) -> str:
    """What the learner gave, as one readable line (typed text, shapes, numbers, a choice); an answer typed but
    never submitted says so, as it was not scored."""
    text = _given_text(answer)
    if text and isinstance(answer, Mapping) and answer.get("submitted") is False:
        return f"{text}\n{NOT_SUBMITTED}"
    return text


def _given_text(answer: object) -> str:
    if answer is None:
        return ""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Mapping):
        if "typed" in answer:
            return str(answer["typed"])
        if "reading" in answer:  # a mock's diagnosis: the reading in the learner's words, or chosen after the list
            text = f"reading: {answer.get('reading') or '(none typed)'}"
            if answer.get("choice"):
                text += f"; chose {answer['choice']} from the list"
            return text + (f"; next: {answer['experiment']}" if answer.get("experiment") else "")
        if "choice" in answer:
            text = f"chose {answer.get('choice') or '(nothing)'}"
            return text + (f"; next: {answer['experiment']}" if answer.get("experiment") else "")
        for key in ("steps", "given"):  # shape steps, ledger numbers, as typed
            if key in answer:
                text = " | ".join(str(x) or "(blank)" for x in answer[key])
                working = str(answer.get("working") or "").strip()
                return text + (f"\nworking: {working}" if working else "")
        if "verdict" in answer:  # a kernel: its grade, and the judge's verdict on the file submitted
            judged = answer.get("judged")
            return str(answer["verdict"]) + (f" ({judged})" if judged else "")
    return str(answer)
