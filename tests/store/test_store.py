import datetime as dt
import sqlite3

import pytest
from sqlmodel import SQLModel

from drill.store import migrations
from drill.store.errors import StoreError
from drill.store.reader import DB_NAME, read_states
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State

DAY = dt.date(2026, 3, 1)
NOW = dt.datetime(2026, 3, 1, 9, 30)


def record(store, card_id, grade=4, sm2=SM2State(1, 2.5, 1), due=DAY + dt.timedelta(1)):
    before = CardState(card_id)
    after = CardState(card_id, sm2=sm2, due=due, introduced_on=DAY, last_review_day=DAY)
    return store.record_review(
        before,
        after,
        grade=grade,
        at=NOW,
        day=DAY,
        duration_ms=1200,
        mode="review",
        answer={"given": "x"},
        content_hash="h1",
    )


def test_file_is_wal_with_busy_timeout(tmp_path):
    store = Store(tmp_path)
    assert store.journal_mode() == "wal"
    record(store, "a")
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_grade_is_visible_to_another_connection_at_once(tmp_path):
    store = Store(tmp_path)
    log_id = record(store, "a", grade=5)
    conn = sqlite3.connect(tmp_path / DB_NAME)
    row = conn.execute(
        "SELECT card_id, grade, duration_ms, mode, answer FROM review_log WHERE id=?", (log_id,)
    ).fetchone()
    assert row == ("a", 5, 1200, "review", '{"given": "x"}')
    read = read_states(tmp_path)["a"]
    assert (read.sm2, read.due) == (SM2State(1, 2.5, 1), DAY + dt.timedelta(1))
    store.close()


def test_undo_restores_state_and_removes_the_log_row(tmp_path):
    store = Store(tmp_path)
    log_id = record(store, "a")
    restored = store.undo_review(log_id)
    assert restored.sm2 == SM2State() and restored.introduced_on is None
    assert store.review_count() == 0
    assert store.states()["a"].sm2 == SM2State()
    store.close()


def test_changed_text_marks_the_card_but_keeps_its_schedule(tmp_path):
    store = Store(tmp_path)
    record(store, "a")
    assert store.sync_hashes({"a": "h1"}) == []
    assert store.sync_hashes({"a": "h2"}) == ["a"]
    state = store.states()["a"]
    assert state.changed and state.sm2.repetitions == 1
    # a card gone from the decks keeps its row and history
    assert store.sync_hashes({}) == []
    assert "a" in store.states() and store.review_count() == 1
    store.close()


def test_settings_and_kernel_attempts(tmp_path):
    store = Store(tmp_path)
    store.set_setting("new_per_day", "15")
    assert store.get_setting("new_per_day") == "15"
    store.record_kernel_attempt("reduce", "src", {"correct": True, "gbps": 4000.0})
    (attempt,) = store.kernel_attempts("reduce")
    assert attempt.source == "src" and '"gbps": 4000.0' in attempt.result
    store.close()


def make_v1(path):
    conn = sqlite3.connect(path, isolation_level=None)
    for stmt in migrations.MIGRATIONS[1]:
        conn.execute(stmt)
    conn.execute("INSERT INTO meta VALUES('schema_version', '1')")
    conn.execute(
        "INSERT INTO card_state(card_id, content_hash, repetitions, ef, interval, due, lapses, introduced_on)"
        " VALUES('old', 'h', 3, 2.2, 15, '2026-03-05', 9, '2026-01-01')"
    )
    conn.execute(
        "INSERT INTO review_log(card_id, reviewed_at, day, grade) VALUES('old', '2026-02-18T10:00:00', '2026-02-18', 4)"
    )
    conn.close()


def test_migration_from_version_1_keeps_data(tmp_path):
    make_v1(tmp_path / DB_NAME)
    assert read_states(tmp_path)["old"].sm2.interval == 15  # the fast reader copes with a v1 file
    store = Store(tmp_path)
    assert (store.migrated_from, store.version) == (1, migrations.LATEST)
    state = store.states()["old"]
    assert (state.sm2, state.due) == (SM2State(3, 2.2, 15), dt.date(2026, 3, 5))
    assert state.leech  # 9 lapses: flagged by the migration
    (log,) = store.reviews("old")
    assert log.grade == 4 and log.answer is None
    store.close()
    # opening again is a no-op
    again = Store(tmp_path)
    assert again.migrated_from == migrations.LATEST
    again.close()


def test_migrated_schema_matches_the_table_classes(tmp_path):
    make_v1(tmp_path / DB_NAME)
    Store(tmp_path).close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    for table in SQLModel.metadata.sorted_tables:
        cols = {r[1] for r in conn.execute(f"PRAGMA table_info({table.name})")}
        assert cols == {c.name for c in table.columns}, table.name


def test_newer_file_is_refused(tmp_path):
    Store(tmp_path).close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer drill") as caught:
        Store(tmp_path)
    assert str(tmp_path / DB_NAME) in str(caught.value) and "upgrade drill" in str(caught.value)
