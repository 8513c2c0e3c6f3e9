"""`drill import reviews` after `drill import anki`: a review is the same review when its card and its time to
the second match, whatever grade or mode either log gives it."""

from __future__ import annotations

import datetime as dt
import json

from drill.store.store import ImportCounts, Store
from drill.study.records import CardState

DAY = dt.date(2026, 3, 2)


def logged_row(card_id: str, at: str, grade: int, mode: str = "review") -> dict[str, object]:
    after = CardState(card_id, due=DAY + dt.timedelta(1), introduced_on=DAY)
    return {
        "card_id": card_id,
        "reviewed_at": at,
        "day": DAY.isoformat(),
        "grade": grade,
        "mode": mode,
        "duration_ms": 1000,
        "state_before": json.dumps(CardState(card_id).as_json()),
        "state_after": json.dumps(after.as_json()),
    }


def test_a_review_differing_only_in_grade_or_a_fraction_of_a_second_is_already_there(tmp_path):
    store = Store(tmp_path)
    # as an Anki package brings them: grades 0 and 2 both come back as 1, the time to the second
    anki = [logged_row("c1", "2026-03-02T09:00:00", 1), logged_row("c2", "2026-03-02T09:05:00", 1)]
    assert store.import_reviews(anki) == ImportCounts(added=2)
    # the learner's own log of the same reviews, exported to CSV: the true grades, one time with a fraction
    csv_rows = [
        logged_row("c1", "2026-03-02T09:00:00", 0),
        logged_row("c2", "2026-03-02T09:05:00.250000", 2, "repeat"),
        logged_row("c1", "2026-03-02T09:00:01", 0),  # a second later: another review
    ]
    assert store.import_reviews(csv_rows) == ImportCounts(added=1, already_there=2)
    assert len(store.reviews()) == 3
    store.close()
