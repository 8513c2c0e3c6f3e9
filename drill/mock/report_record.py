"""A finished mock's report as a record: what the report screen, `drill mock --report` and the HTML file show.

The database keeps it as JSON (`MockReport.as_json`, a round's report within it by `RoundReport.as_json`);
`MockReport.from_json` reads a kept one back once, where the row is read, taking any field a report of an older
version lacks as empty (a report is never lost to a missing field). A kept round's report that cannot be read
(no mapping, a verdict no version wrote) reads as none, the rest of the report intact.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TypedDict

from drill.cards.field_values import items, mapping, mappings


class OverrideLine(TypedDict):
    """A rubric point the learner ticked anyway, with their reason."""

    point: str
    basis: str
    reason: str


class FollowUpLine(TypedDict):
    """A question's follow-up as the report shows it: what was asked, its hint, the answer and its score."""

    kind: str
    card_id: str
    prompt: str
    hint: str
    status: str
    spent_s: float
    budget_s: float
    answer: str
    score: float | None
    missed: list[str]


class QuestionLine(TypedDict):
    """One question of the mock: what was asked, what was given and expected, its time and its score."""

    position: int
    card_id: str
    topic: str
    title: str
    kind: str
    prompt: str
    budget_s: float
    spent_s: float
    status: str
    skips: int
    score: float  # as the mock reports it (points ticked by override counted)
    evidence: float  # the part drill checked
    answer: str
    said: bool  # the answer holds anything at all
    expected: str
    missed: list[str]
    graded: list[str]
    overrides: list[OverrideLine]
    hints: list[str]
    follow_up: FollowUpLine | None


class TopicScore(TypedDict):
    """A topic's mean score over its questions in this mock."""

    topic: str
    title: str
    score: float
    questions: int


class StudyNext(TypedDict):
    """A topic to study next, and why."""

    topic: str
    title: str
    why: str


class RoundVerdict(enum.StrEnum):
    """A round's pass, lean or fail (drill.mock.round_report says how each is reached), or a dimension's."""

    PASS = "pass"
    LEAN = "lean"
    FAIL = "fail"
    NOT_ASSESSED = "not assessed"  # a dimension's only: no stage of it was answered


@dataclass(frozen=True)
class StageLine:
    """One stage of a round as its report shows it; `evidence` is None for a stage not answered."""

    number: int
    type: str
    dimension: str
    twist: bool
    status: str  # answered, skipped, unanswered; a twist: answered, declined or not reached
    evidence: float | None
    hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class DimensionLine:
    """What a round showed of one dimension: its verdict, the graded evidence behind it (None when not
    assessed) and why."""

    dimension: str
    verdict: RoundVerdict
    evidence: float | None
    reason: str


@dataclass(frozen=True)
class RoundReport:
    """A round's report as an interviewer would write it: per dimension, the stages reached, the hints used, what
    would have been asked next, and a pass, lean or fail with the reason (drill.mock.round_report builds it)."""

    kind: str
    title: str
    source_id: str
    verdict: RoundVerdict
    reason: str
    evidence: float | None  # None when no stage was answered
    reached: int
    stages_total: int
    stages: tuple[StageLine, ...] = ()
    dimensions: tuple[DimensionLine, ...] = ()
    hints: tuple[str, ...] = ()
    next_asked: str = ""
    timing: str = ""  # what a kernel round could not time ('' when everything was measured)
    # the round's plan as drill.mock.rounds.RoundPlan.as_json wrote it: kept in the file for the record, never drawn
    plan: Mapping[str, object] | None = None

    def as_json(self) -> dict[str, object]:
        """The round's report as the database keeps it within its mock's (no "plan" when it has none)."""
        data: dict[str, object] = {
            "kind": self.kind,
            "title": self.title,
            "source_id": self.source_id,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "evidence": self.evidence,
            "reached": self.reached,
            "stages_total": self.stages_total,
            "stages": [{**asdict(s), "hints": list(s.hints)} for s in self.stages],
            "dimensions": [{**asdict(d), "verdict": d.verdict.value} for d in self.dimensions],
            "hints": list(self.hints),
            "next_asked": self.next_asked,
            "timing": self.timing,
        }
        if self.plan is not None:
            data["plan"] = dict(self.plan)
        return data

    @classmethod
    def from_json(cls, value: object) -> RoundReport | None:
        """A kept round's report read back; None when it is no mapping or holds a verdict no version wrote. A
        field it lacks is empty, a stage or dimension line that is no mapping is left out."""
        if not isinstance(value, dict):
            return None
        data = mapping(value)
        try:
            verdict = RoundVerdict(_text(data.get("verdict")))
            dimensions = tuple(_dimension_line(d) for d in mappings(data.get("dimensions")))
        except ValueError:
            return None
        plan = data.get("plan")
        return cls(
            kind=_text(data.get("kind")),
            title=_text(data.get("title")),
            source_id=_text(data.get("source_id")),
            verdict=verdict,
            reason=_text(data.get("reason")),
            evidence=_maybe_figure(data.get("evidence")),
            reached=_whole(data.get("reached")),
            stages_total=_whole(data.get("stages_total")),
            stages=tuple(_stage_line(s) for s in mappings(data.get("stages"))),
            dimensions=dimensions,
            hints=tuple(_texts(data.get("hints"))),
            next_asked=_text(data.get("next_asked")),
            timing=_text(data.get("timing")),
            plan=mapping(plan) if isinstance(plan, dict) else None,
        )


@dataclass(frozen=True)
class MockReport:
    """A finished mock's report. `score` and `evidence` are None when no question was answered (not scored)."""

    id: int | None  # None only in a kept report that lost it
    started_at: str  # ISO, to the second
    ended_at: str | None
    minutes: int
    status: str
    score: float | None
    evidence: float | None
    answered: int
    said: int  # answered with something (not all blank)
    skipped: int
    unanswered: int
    total: int
    topics: list[TopicScore] = field(default_factory=list)
    questions: list[QuestionLine] = field(default_factory=list)
    study_next: list[StudyNext] = field(default_factory=list)
    readiness: str | None = None  # the line on readiness for the interview date; None when no date is set
    hard: str | None = None  # how a hard-mode mock was asked; None for any other
    round: RoundReport | None = None  # a round's report per dimension; None for any other mock

    def as_json(self) -> dict[str, object]:
        """The report as the database keeps it (a quick mock's has no "hard" or "round")."""
        data = asdict(self)
        for optional in ("hard", "round"):
            if data[optional] is None:
                del data[optional]
        if self.round is not None:
            data["round"] = self.round.as_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> MockReport:
        """A kept report read back; a field it lacks is empty (0, "" or None)."""
        readiness = data.get("readiness")
        hard = data.get("hard")
        kept_id = data.get("id")
        return cls(
            id=None if kept_id is None else _whole(kept_id),
            started_at=_text(data.get("started_at")),
            ended_at=_text(data.get("ended_at")) or None,
            minutes=_whole(data.get("minutes")),
            status=_text(data.get("status")),
            score=_maybe_figure(data.get("score")),
            evidence=_maybe_figure(data.get("evidence")),
            answered=_whole(data.get("answered")),
            said=_whole(data.get("said", data.get("answered"))),
            skipped=_whole(data.get("skipped")),
            unanswered=_whole(data.get("unanswered")),
            total=_whole(data.get("total")),
            topics=[_topic(t) for t in mappings(data.get("topics"))],
            questions=[_question(q, i) for i, q in enumerate(mappings(data.get("questions")))],
            study_next=[_study_next(s) for s in mappings(data.get("study_next"))],
            readiness=str(readiness) if readiness else None,
            hard=str(hard) if hard else None,
            round=RoundReport.from_json(data.get("round")),
        )


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _figure(value: object) -> float:
    """A kept number; 0 for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 0.0
    try:
        number = float(value)
    except ValueError:
        return 0.0
    return number if math.isfinite(number) else 0.0


def _maybe_figure(value: object) -> float | None:
    """A kept number that may be absent (None)."""
    return None if value is None else _figure(value)


def _whole(value: object) -> int:
    return int(_figure(value))


def _texts(value: object) -> list[str]:
    return [str(entry) for entry in items(value)]


def _topic(data: Mapping[str, object]) -> TopicScore:
    topic = _text(data.get("topic"))
    return TopicScore(
        topic=topic,
        title=_text(data.get("title")) or topic,
        score=_figure(data.get("score")),
        questions=_whole(data.get("questions")),
    )


def _study_next(data: Mapping[str, object]) -> StudyNext:
    topic = _text(data.get("topic"))
    return StudyNext(topic=topic, title=_text(data.get("title")) or topic, why=_text(data.get("why")))


def _question(data: Mapping[str, object], index: int) -> QuestionLine:
    topic = _text(data.get("topic"))
    return QuestionLine(
        position=_whole(data.get("position", index + 1)),
        card_id=_text(data.get("card_id")),
        topic=topic,
        title=_text(data.get("title")) or topic,
        kind=_text(data.get("kind")),
        prompt=_text(data.get("prompt")),
        budget_s=_figure(data.get("budget_s")),
        spent_s=_figure(data.get("spent_s")),
        status=_text(data.get("status")) or "unanswered",
        skips=_whole(data.get("skips")),
        score=_figure(data.get("score")),
        evidence=_figure(data.get("evidence")),
        answer=_text(data.get("answer")),
        said=bool(data.get("said", data.get("answer"))),
        expected=_text(data.get("expected")),
        missed=_texts(data.get("missed")),
        graded=_texts(data.get("graded")),
        overrides=[
            OverrideLine(point=_text(o.get("point")), basis=_text(o.get("basis")), reason=_text(o.get("reason")))
            for o in mappings(data.get("overrides"))
        ],
        hints=_texts(data.get("hints")),
        follow_up=_follow_up(data.get("follow_up")),
    )


def _follow_up(value: object) -> FollowUpLine | None:
    if not isinstance(value, dict):
        return None
    data = mapping(value)
    return FollowUpLine(
        kind=_text(data.get("kind")),
        card_id=_text(data.get("card_id")),
        prompt=_text(data.get("prompt")),
        hint=_text(data.get("hint")),
        status=_text(data.get("status")),
        spent_s=_figure(data.get("spent_s")),
        budget_s=_figure(data.get("budget_s")),
        answer=_text(data.get("answer")),
        score=_maybe_figure(data.get("score")),
        missed=_texts(data.get("missed")),
    )


def _stage_line(data: Mapping[str, object]) -> StageLine:
    return StageLine(
        number=_whole(data.get("number")),
        type=_text(data.get("type")),
        dimension=_text(data.get("dimension")),
        twist=bool(data.get("twist")),
        status=_text(data.get("status")),
        evidence=_maybe_figure(data.get("evidence")),
        hints=tuple(_texts(data.get("hints"))),
    )


def _dimension_line(data: Mapping[str, object]) -> DimensionLine:
    """A kept dimension line; ValueError for a verdict no version wrote."""
    return DimensionLine(
        dimension=_text(data.get("dimension")),
        verdict=RoundVerdict(_text(data.get("verdict"))),
        evidence=_maybe_figure(data.get("evidence")),
        reason=_text(data.get("reason")),
    )
