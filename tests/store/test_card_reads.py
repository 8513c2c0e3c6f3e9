"""The card table read once: every card's state and its progress row made from the same plain rows, equal to what
the Store holds and to the progress rows read alone."""

from __future__ import annotations

import datetime as dt

from drill.store import reader
from drill.store.store import Store
from drill.study.records import CardFigures, CardState, FSRSState
from drill.study.sm2 import SM2State
from drill.workspace import Workspace
from tests.store.test_store import make_v1

DAY = dt.date(2026, 3, 1)
NOW = dt.datetime(2026, 3, 1, 9, 30)


def grade(store: Store, after: CardState, grade: int = 4) -> None:
    store.record_review(
        CardState(after.card_id),
        after,
        grade=grade,
        at=NOW,
        day=DAY,
        duration_ms=1200,
        mode="review",
        answer=None,
        content_hash="h1",
    )


def kept_states(tmp_path) -> dict[str, CardState]:
    """Three cards as the Store keeps them: one under SM-2, one under FSRS graded twice, one left alone."""
    store = Store(tmp_path)
    sm2 = CardState(
        "sm2", sm2=SM2State(3, 2.2, 15), due=DAY + dt.timedelta(15), introduced_on=DAY, last_review_day=DAY,
        lapses=2, buried_until=DAY + dt.timedelta(1), repeat_pending=True,
    )  # fmt: skip
    memory = FSRSState(12.5, 4.25, 2, DAY)
    fsrs = CardState("fsrs", due=DAY + dt.timedelta(12), introduced_on=DAY, last_review_day=DAY, fsrs=memory)
    grade(store, sm2)
    grade(store, fsrs, 3)
    grade(store, fsrs, 5)
    store.set_suspended(CardState("idle"), True)
    states = store.states()
    store.close()
    return states


def test_one_read_gives_the_stores_states_and_the_progress_rows(tmp_path):
    states = kept_states(tmp_path)
    assert states["fsrs"].fsrs == FSRSState(12.5, 4.25, 2, DAY) and states["idle"].suspended
    read = reader.read_progress_and_states(tmp_path, DAY)
    assert read.states == states == reader.read_states(tmp_path)
    assert read.progress == reader.read_progress(tmp_path, DAY)
    assert read.progress.total_reviews == 3
    assert read.progress.cards["sm2"] == CardFigures(
        1, 2, 2.2, 3, "2026-03-16", False, False, "2026-03-02", "2026-03-01", True, "2026-03-01"
    )
    assert read.progress.cards["fsrs"].reviews == 2 and read.progress.cards["idle"].suspended


def test_one_read_before_the_first_run_is_empty(tmp_path):
    read = reader.read_progress_and_states(tmp_path, DAY)
    assert read.states == {} and read.progress == reader.read_progress(tmp_path, DAY)


def test_the_start_reads_the_card_table_once_for_the_states_and_the_progress_rows(tmp_path, monkeypatch):
    states = kept_states(tmp_path)
    expected = reader.read_progress(tmp_path, DAY)
    reads = []
    card_tuples = reader._card_tuples

    def counted(conn):
        reads.append(1)
        return card_tuples(conn)

    monkeypatch.setattr(reader, "_card_tuples", counted)
    workspace = Workspace(tmp_path, [])
    saved, read_states = workspace.saved_settings_and_states()
    start = workspace.start_reads(DAY, saved, progress=True, readiness=False)
    assert read_states == states and start.progress == expected
    assert len(reads) == 1


def test_a_start_on_an_older_file_reads_the_progress_rows_after_the_migration(tmp_path):
    make_v1(tmp_path / reader.DB_NAME)
    workspace = Workspace(tmp_path, [])
    saved, states = workspace.saved_settings_and_states()
    assert states["old"].sm2.interval == 15
    start = workspace.start_reads(DAY, saved, progress=True, readiness=False)
    assert start.progress is not None and start.progress.cards["old"].reviews == 1  # counted by the migration
    assert start.progress == reader.read_progress(tmp_path, DAY)
