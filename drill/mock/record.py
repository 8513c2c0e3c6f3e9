"""Saving a mock as it runs: every change is written at once, answers go into the review history."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from drill.cards.model import Card
from drill.mock.plan import MockPlan
from drill.mock.report import build_report
from drill.mock.run import ANSWERED, MockRun, Slot, grade_for, schedule_after
from drill.study.records import CardState


class MockRecorder:
    """Writes a MockRun to the store: the plan at the start, each question as it changes, the report at the end.

    `store` is a drill.store.store.Store (or anything with its mock and review methods).
    """

    def __init__(
        self,
        store: Any,
        run: MockRun,
        plan: MockPlan,
        cards: Mapping[str, Card],
        now: Callable[[], dt.datetime],
        today: Callable[[], dt.date],
        titles: Mapping[str, str] | None = None,
        weakness: Mapping[str, float] | None = None,
        weakness_after: Callable[[], Mapping[str, float]] | None = None,
        readiness_after: Callable[[], str | None] | None = None,
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
        store.close_abandoned_mocks(now())  # any earlier mock whose app was closed mid-mock
        self.mock_id: int = store.start_mock(now(), plan.minutes, [q.as_json() for q in plan.questions])
        self.save()

    def save(self) -> None:
        """Write every question whose state changed (and, after a follow-up, every position)."""
        for slot in self.run.slots:
            self.store.save_mock_answer(self.mock_id, slot.card_id, **_row(slot))
        self.run.changed.clear()

    def answered(self, slot: Slot) -> None:
        """After `run.submit`: log the answer in the review history and feed the schedule."""
        self.save()
        if slot.status != ANSWERED or slot.score is None:
            return
        before = self.store.states().get(slot.card_id) or CardState(slot.card_id)
        after = schedule_after(CardState(**before.__dict__), slot.score, self.today())
        self.store.record_review(
            before,
            after,
            grade=grade_for(slot.score),
            at=self.now(),
            day=self.today(),
            duration_ms=int(slot.spent_s * 1000),
            mode="mock",
            answer={"mock": self.mock_id, "score": slot.score, "answer": slot.answer},
            topic=slot.topic,
        )

    def finish(self) -> dict[str, Any]:
        """Close the mock in the store with its report (after the run stopped); returns the report."""
        self.save()
        ended = self.now()
        mock = {
            "id": self.mock_id,
            "started_at": self.store.mock(self.mock_id)[0].started_at,
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
        self.store.finish_mock(self.mock_id, ended, self.run.status, report["score"], report)
        return report


def _row(slot: Slot) -> dict[str, Any]:
    data = slot.as_json()
    data.pop("card_id")
    data["position"] = slot.position
    return data
