"""Mock interviews in the database: one row per mock, one per question, each written when it happens."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from sqlmodel import Session, col, select

from drill.store.reader import ABANDON_GRACE, overdue_by
from drill.store.tables import MockAnswerRow, MockRow


class MockRecords:
    """The mock-interview part of Store (mixed into it; uses its session and locking)."""

    _session: Session

    def _writing(self) -> AbstractContextManager[None]:  # provided by Store
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[None]:  # provided by Store
        raise NotImplementedError

    def start_mock(self, at: dt.datetime, minutes: int, plan: Sequence[dict[str, object]]) -> int:
        row = MockRow(started_at=at.isoformat(timespec="seconds"), minutes=minutes, plan=json.dumps(list(plan)))
        with self._writing():
            self._session.add(row)
        assert row.id is not None
        return row.id

    def save_mock_answer(self, mock_id: int, card_id: str, **fields: Any) -> None:
        """Insert or update one question of a mock (a card is asked at most once per mock)."""
        for key in ("answer", "missed"):
            if key in fields and fields[key] is not None and not isinstance(fields[key], str):
                fields[key] = json.dumps(fields[key])
        with self._writing():
            stmt = select(MockAnswerRow).where(MockAnswerRow.mock_id == mock_id, MockAnswerRow.card_id == card_id)
            row = self._session.exec(stmt.execution_options(populate_existing=True)).first()
            if row is None:
                row = MockAnswerRow(mock_id=mock_id, card_id=card_id, **fields)
            else:
                for key, value in fields.items():
                    setattr(row, key, value)
            self._session.add(row)

    def finish_mock(
        self, mock_id: int, at: dt.datetime, status: str, score: float | None, report: dict[str, object] | None
    ) -> None:
        """Close a mock once; a mock already closed keeps its first ending."""
        with self._writing():
            row = self._session.get(MockRow, mock_id, populate_existing=True)
            if row is None or row.status != "running":
                return
            row.ended_at = at.isoformat(timespec="seconds")
            row.status = status
            row.score = score
            row.report = json.dumps(report) if report is not None else None
            self._session.add(row)

    def close_abandoned_mocks(self, now: dt.datetime, grace: dt.timedelta = ABANDON_GRACE) -> list[int]:
        """Close, as ended early, every mock still running past its time plus `grace`: its app was closed or
        killed mid-mock. The answers given stay; questions not answered count as unanswered (0) in its score.
        One with no answered question is closed as abandoned, with no score (drill.mock.run.ABANDONED).
        Its score is the one the mock reports (`reported_score`); each question's score column, the graded
        evidence the weakness figures read, is left as it was.
        Writes nothing when there is none (the usual case: it runs at every start)."""
        with self._reading():
            running = self._session.exec(select(MockRow).where(MockRow.status == "running")).all()
        overdue = [r.id for r in running if r.id is not None and overdue_by(r.started_at, r.minutes, now, grace)]
        if not overdue:
            return []
        closed = []
        with self._writing():
            for mock_id in overdue:
                row = self._session.get(MockRow, mock_id, populate_existing=True)
                if row is None or row.status != "running":
                    continue  # closed meanwhile by its own app
                answers = self._session.exec(select(MockAnswerRow).where(MockAnswerRow.mock_id == mock_id)).all()
                for answer in answers:
                    if answer.status != "answered":
                        answer.status = "unanswered"
                        self._session.add(answer)
                scores = [reported_score(a) if a.status == "answered" else 0.0 for a in answers]
                answered = any(a.status == "answered" for a in answers)
                row.status = "quit" if answered else "abandoned"
                row.ended_at = now.isoformat(timespec="seconds")
                row.score = sum(scores) / len(scores) if answered else None
                self._session.add(row)
                closed.append(mock_id)
        return closed

    def mocks(self) -> list[MockRow]:
        """Every mock, newest first."""
        stmt = select(MockRow).order_by(col(MockRow.id).desc())
        with self._reading():
            return list(self._session.exec(stmt.execution_options(populate_existing=True)).all())

    def mock(self, mock_id: int) -> tuple[MockRow, list[MockAnswerRow]] | None:
        with self._reading():
            row = self._session.get(MockRow, mock_id, populate_existing=True)
            if row is None:
                return None
            stmt = select(MockAnswerRow).where(MockAnswerRow.mock_id == mock_id).order_by(col(MockAnswerRow.position))
            return row, list(self._session.exec(stmt.execution_options(populate_existing=True)).all())


def reported_score(answer: MockAnswerRow) -> float:
    """The score a mock reports for one answered question: the one kept with its answer (the rubric points
    ticked by override counted), else its score column, which holds the graded evidence."""
    try:
        kept = json.loads(answer.answer) if answer.answer else None
    except ValueError:
        kept = None
    if isinstance(kept, dict) and isinstance(kept.get("score"), (int, float)):
        return float(kept["score"])
    return answer.score or 0.0
