"""The whole log as `drill fsrs fit` reads it keeps each review's time: two reviews of one day are hours apart, not
both at its midnight (the fit's same-day weights learn from those gaps)."""

from __future__ import annotations

import datetime as dt

from drill.store import reader
from drill.store.store import Store
from drill.study.records import CardState
from drill.workspace import Workspace

DAY = dt.date(2026, 3, 1)


def test_the_whole_log_is_read_with_each_reviews_time(tmp_path):
    store = Store(tmp_path)
    for at in (dt.datetime(2026, 3, 1, 9, 30, 5), dt.datetime(2026, 3, 1, 17, 45, 0)):
        store.record_review(CardState("c1"), CardState("c1"), grade=4, at=at, day=DAY, duration_ms=900, mode="review")
    store.close()
    times = [review.reviewed_at for review in reader.read_log(tmp_path)]
    assert times == ["2026-03-01T09:30:05", "2026-03-01T17:45:00"]
    workspace = Workspace(tmp_path, [])
    try:
        assert [review.reviewed_at for review in workspace.review_log()] == times
    finally:
        workspace.close()
