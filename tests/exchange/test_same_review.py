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


def test_import_reviews_says_how_many_rows_name_cards_not_in_the_decks_and_keeps_them(tmp_path, capsys):
    from drill.cli import main

    source = Store(tmp_path / "source")
    rows = [
        logged_row("ddp-no-sync", "2026-03-02T09:00:00", 4),
        logged_row("ghost-card", "2026-03-02T09:01:00", 4),
        logged_row("ghost-card", "2026-03-02T09:02:00", 2),
        logged_row("old-card", "2026-03-02T09:03:00", 5),
    ]
    assert source.import_reviews(rows) == ImportCounts(added=4)
    source.close()
    out = tmp_path / "rev.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(tmp_path / "source")]) == 0
    capsys.readouterr()
    fresh = tmp_path / "fresh"
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    said = capsys.readouterr().err
    assert "imported 4 reviews" in said
    assert "3 rows name 2 cards not in the decks (ghost-card, old-card)" in said
    kept = Store(fresh)
    assert sorted(r.card_id for r in kept.reviews()) == ["ddp-no-sync", "ghost-card", "ghost-card", "old-card"]
    kept.close()


def test_import_reviews_of_known_cards_says_nothing_of_unknown_ones(tmp_path, capsys):
    from drill.cli import main

    source = Store(tmp_path / "source")
    assert source.import_reviews([logged_row("ddp-no-sync", "2026-03-02T09:00:00", 4)]) == ImportCounts(added=1)
    source.close()
    out = tmp_path / "rev.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(tmp_path / "source")]) == 0
    assert main(["import", "reviews", str(out), "--data-dir", str(tmp_path / "fresh")]) == 0
    assert "not in the decks" not in capsys.readouterr().err
