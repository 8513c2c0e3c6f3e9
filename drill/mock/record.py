"""Saving a mock as it runs: every change is written at once, answers go into the review history.

What a mock tells the weakness figures and the schedule is its graded evidence only (drill.mock.grading):
each question's row keeps, as its score, the part of the answer drill checked (numbers, shapes, a reading,
rubric points ticked for an answer that names them), its follow-up counted; the score the mock reports, with
the points the learner ticked by override, is kept with the answer. The review log's grade is the evidence's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from drill.cards.model import Card
from drill.cards.scenario import scenario_of
from drill.mock.follow_ups import FollowUpKind
from drill.mock.hard import HARD_WORDS
from drill.mock.plan import MockPlan
from drill.mock.report import build_report
from drill.mock.report_record import MockReport
from drill.mock.round_report import build_round_report
from drill.mock.rounds import RoundPlan
from drill.mock.run import ANSWERED, MockRun, Slot, grade_for, schedule_after
from drill.study.records import CardState


class MockWriter(Protocol):
    """What a mock writes as it runs (the workspace's write path, or a fake in tests)."""

    def close_abandoned_mocks(self, now: dt.datetime) -> list[int]: ...
    def start_mock(self, at: dt.datetime, minutes: int, plan: Sequence[dict[str, object]]) -> int: ...
    def save_mock_answer(self, mock_id: int, card_id: str, **fields: object) -> None: ...
    def finish_mock(
        self, mock_id: int, at: dt.datetime, status: str, score: float | None, report: dict[str, object] | None
    ) -> None: ...
    def states(self) -> dict[str, CardState]: ...
    def record_review(
        self,
        before: CardState,
        after: CardState,
        *,
        grade: int,
        at: dt.datetime,
        day: dt.date,
        duration_ms: int,
        mode: str,
        answer: dict[str, object] | None = None,
        content_hash: str | None = None,
        topic: str | None = None,
    ) -> int: ...


class MockRecorder:
    """Writes a MockRun to the store: the plan at the start, each question as it changes, the report at the end."""

    def __init__(
        self,
        store: MockWriter,
        run: MockRun,
        plan: MockPlan,
        cards: Mapping[str, Card],
        now: Callable[[], dt.datetime],
        today: Callable[[], dt.date],
        titles: Mapping[str, str] | None = None,
        weakness: Mapping[str, float] | None = None,
        weakness_after: Callable[[], Mapping[str, float]] | None = None,
        readiness_after: Callable[[], str | None] | None = None,
        round_plan: RoundPlan | None = None,
        hard: bool = False,
    ) -> None:
        self.store = store
        self.run = run
        self.cards = cards
        self.now = now
        self.today = today
        self.titles = dict(titles or {})
        self.weakness = dict(weakness or {})
        self.weakness_after = weakness_after  # read again at the end: the mock's own answers change it
        self.readiness_after = readiness_after  # the line on readiness for the interview date, read at the end
        self.round_plan = round_plan  # a round's stages, for its report per dimension
        self.hard = hard  # asked in hard mode (drill.mock.hard): the report says so
        store.close_abandoned_mocks(now())  # any earlier mock whose app was closed mid-mock
        started = now()
        self.started_at = started.isoformat(timespec="seconds")  # as the store keeps it
        self.mock_id: int = store.start_mock(started, plan.minutes, [q.as_json() for q in plan.questions])
        self.save()

    def save(self) -> None:
        """Write every question whose state changed (and, after a follow-up, every position)."""
        for slot in self.run.slots:
            self.store.save_mock_answer(self.mock_id, slot.card_id, **_row(slot))
        self.run.changed.clear()

    def answered(self, slot: Slot) -> None:
        """After `run.submit`: log the answer in the review history and feed the schedule, by its evidence."""
        self.save()
        if slot.status != ANSWERED or slot.grade is None:
            return
        grade = slot.grade
        self._log(slot.card_id, slot.topic, grade.evidence, slot.spent_s, {"score": grade.score, "answer": slot.answer})

    def follow_up_answered(self, slot: Slot) -> None:
        """After `run.submit_follow_up`: save the question; a deeper follow-up (another card) is logged in the
        review history as that card's answer (a narrower one asked the same card again: logged once)."""
        self.save()
        follow = slot.follow_up
        if follow is None or follow.grade is None or follow.kind is not FollowUpKind.DEEPER:
            return
        grade = follow.grade
        record = {"score": grade.score, "answer": follow.answer, "follow_up_to": slot.card_id}
        self._log(follow.card.id, follow.card.topic, grade.evidence, follow.spent_s, record)

    def _log(self, asked_id: str, topic: str, evidence: float, spent_s: float, record: dict[str, object]) -> None:
        """Log an answer in the review history; a round's stage is logged against its scenario (the deck card)."""
        card_id = scenario_of(asked_id)
        if card_id != asked_id:
            record = {**record, "stage": asked_id}
        before = self.store.states().get(card_id) or CardState(card_id)
        after = schedule_after(CardState(**before.__dict__), evidence, self.today())
        self.store.record_review(
            before,
            after,
            grade=grade_for(evidence),
            at=self.now(),
            day=self.today(),
            duration_ms=int(spent_s * 1000),
            mode="mock",
            answer={"mock": self.mock_id, "evidence": evidence, **record},
            topic=topic,
        )

    def finish(self) -> MockReport:
        """Close the mock in the store with its report (after the run stopped); returns the report."""
        self.save()
        ended = self.now()
        mock = {
            "id": self.mock_id,
            "started_at": self.started_at,
            "ended_at": ended.isoformat(timespec="seconds"),
            "minutes": self.run.minutes,
            "status": self.run.status,
        }
        slots = [{**s.as_json(), "position": s.position} for s in self.run.slots]
        weakness = self.weakness
        if self.weakness_after is not None:
            try:
                weakness = dict(self.weakness_after())
            except Exception:  # the report still has the figures read before the mock
                pass
        readiness = None
        if self.readiness_after is not None:
            try:
                readiness = self.readiness_after()
            except Exception:  # the report is kept without the line rather than lost
                pass
        report = build_report(mock, slots, self.cards, self.titles, weakness, readiness)
        if self.hard:
            report = replace(report, hard=HARD_WORDS)
        if self.round_plan is not None:
            report = replace(report, round=build_round_report(self.round_plan.as_json(), slots, self.cards))
        self.store.finish_mock(self.mock_id, ended, self.run.status, report.score, report.as_json())
        return report


def _row(slot: Slot) -> dict[str, object]:
    """The question's row: its score column holds the graded evidence (what the weakness figures read); the
    answer keeps what was given with its grade, its follow-up and the score the mock reports."""
    data = slot.as_json()
    data.pop("card_id")
    data.pop("skips")  # the report reads it from the run; the store keeps a question's state, not its history
    evidence = data.pop("evidence")
    given = {
        "given": data["answer"],
        "score": data["score"],
        "grade": data.pop("grade"),
        "follow_up": data.pop("follow_up"),
    }
    data["answer"] = given if slot.status == ANSWERED or slot.answer is not None else None
    data["score"] = evidence
    data["position"] = slot.position
    return data
