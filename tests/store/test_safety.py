"""The store under pressure: several drills at once, and files or folders drill cannot use.

Every case a learner can meet ends in a StoreError whose one-line message names
the file and what to do, never in a raw SQLite error.
"""

import datetime as dt
import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from drill.store import migrations, reader
from drill.store import store as store_module
from drill.store.errors import StoreError
from drill.store.reader import DB_NAME, read_settings, read_states
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State
from tests.conftest import stretched

FIXTURE = Path(__file__).parents[1] / "fixtures" / "drill-v1.sqlite3"
DAY = dt.date(2026, 3, 1)
NOW = dt.datetime(2026, 3, 1, 9, 30)
GARBAGE = b"this is not a database, just some text a learner saved by mistake\n" * 20


def one_line(message: str) -> bool:
    return "\n" not in message and len(message) < 400


# -- several drills opening one data directory at once ------------------------------


def _open_at_once(data_dir, barrier, results):
    try:
        barrier.wait(timeout=stretched(30))
        store = Store(Path(data_dir))
        store.states()
        results.put(("ok", store.version, store.migrated_from))
        store.close()
    except BaseException as exc:  # reported to the parent, which fails the test
        results.put(("error", f"{type(exc).__name__}: {exc}", None))


def open_together(data_dir: Path, n: int) -> list[tuple]:
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_open_at_once, args=(str(data_dir), barrier, results)) for _ in range(n)]
    for p in procs:
        p.start()
    out = [results.get(timeout=stretched(60)) for _ in procs]
    for p in procs:
        p.join(timeout=stretched(60))
    return out


@pytest.mark.parametrize("n", [4, 8])
def test_a_new_data_directory_opened_by_several_drills_at_once(tmp_path, n):
    for trial in range(4):
        data = tmp_path / f"trial{trial}"
        outcomes = open_together(data, n)
        errors = [o[1] for o in outcomes if o[0] != "ok"]
        assert errors == [], errors
        assert {o[1] for o in outcomes} == {migrations.LATEST}
        assert sorted(o[2] for o in outcomes).count(0) <= 1  # one of them made the tables, or none saw it empty
        conn = sqlite3.connect(data / DB_NAME)
        assert migrations.schema_version(conn) == migrations.LATEST
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()


def test_a_version_1_file_opened_by_several_drills_at_once_migrates_once(tmp_path):
    shutil.copy(FIXTURE, tmp_path / DB_NAME)
    before = v1_rows(tmp_path / DB_NAME)
    outcomes = open_together(tmp_path, 6)
    assert [o for o in outcomes if o[0] != "ok"] == []
    assert sum(1 for o in outcomes if o[2] == 1) == 1  # exactly one drill found version 1 and migrated it
    assert v1_rows(tmp_path / DB_NAME) == before


def _write_many(data_dir, barrier, worker, results):
    try:
        store = Store(Path(data_dir))
        barrier.wait(timeout=stretched(30))
        for i in range(25):
            card = f"w{worker}-{i % 5}"
            before = CardState(card)
            after = CardState(card, sm2=SM2State(1, 2.5, 1), due=DAY + dt.timedelta(1), introduced_on=DAY)
            log_id = store.record_review(before, after, grade=4, at=NOW, day=DAY, duration_ms=10, mode="review")
            if i % 5 == 4:
                store.undo_review(log_id)
            store.set_setting(f"worker{worker}", str(i))
        results.put(("ok", worker))
        store.close()
    except BaseException as exc:
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def test_drills_writing_at_the_same_time_wait_for_each_other(tmp_path):
    Store(tmp_path).close()
    ctx = multiprocessing.get_context("fork")
    n = 4
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_write_many, args=(str(tmp_path), barrier, w, results)) for w in range(n)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=stretched(120)) for _ in procs]
    for p in procs:
        p.join(timeout=stretched(60))
    assert [o for o in outcomes if o[0] != "ok"] == []
    store = Store(tmp_path)
    assert store.review_count() == n * 20  # 25 each, 5 undone
    assert store.settings() == {f"worker{w}": "24" for w in range(n)}
    store.close()


def test_a_write_waits_for_another_drills_short_transaction(tmp_path):
    store = Store(tmp_path)
    other = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO setting(key, value) VALUES('from_other', '1')")
    releaser = threading.Timer(0.4, lambda: other.execute("COMMIT"))
    releaser.start()
    started = time.monotonic()
    store.set_setting("mine", "2")  # blocks until the other commits, then succeeds
    assert time.monotonic() - started >= 0.3
    releaser.join()
    assert store.settings() == {"from_other": "1", "mine": "2"}
    store.close()
    other.close()


def test_a_lock_held_past_the_busy_timeout_is_a_store_error(tmp_path, monkeypatch):
    store = Store(tmp_path)
    other = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 300)
        with pytest.raises(StoreError) as opening:
            Store(tmp_path)
        store.engine.dispose()  # new connections pick up the short timeout
        store._wait_s = 0.3
        with pytest.raises(StoreError) as writing:
            store.set_setting("k", "v")
    finally:
        other.execute("ROLLBACK")
        other.close()
    for caught in (opening, writing):
        message = str(caught.value)
        assert caught.value.kind == "locked" and str(tmp_path / DB_NAME) in message and one_line(message)
        assert "in use by another program" in message and "try again" in message
    store.set_setting("k", "v")  # the store is usable once the lock is gone
    assert store.get_setting("k") == "v"
    store.close()


# -- files and folders drill cannot use --------------------------------------------------


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / DB_NAME
    path.write_bytes(GARBAGE)
    for attempt in (Store, read_states, read_settings):
        with pytest.raises(StoreError) as caught:
            attempt(tmp_path)
        message = str(caught.value)
        assert message == (
            f"{path} is not a drill database (file is not a database); move it aside and drill will start a new one"
        )
        assert caught.value.kind == "not_a_database" and caught.value.path == path
    assert path.read_bytes() == GARBAGE  # the learner's file is left as it was


def test_a_damaged_database(tmp_path):
    store = Store(tmp_path)
    for i in range(300):
        store.set_setting(f"k{i}", "x" * 200)
    store.close()
    path = tmp_path / DB_NAME
    data = bytearray(path.read_bytes())
    page = 4096
    data[page : page * 8] = b"\xff" * (page * 7)  # the pages after the header: schema and tables
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as caught:
        Store(tmp_path)
    assert caught.value.kind in {"damaged", "not_a_database"} and str(path) in str(caught.value)
    assert one_line(str(caught.value))


def test_a_database_of_another_program(tmp_path):
    path = tmp_path / DB_NAME
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE card_state (something_else TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError) as caught:
        Store(tmp_path)
    assert str(caught.value) == (
        f"{path} is not a database drill can use (table card_state already exists); "
        "move it aside and drill will start a new one"
    )
    conn = sqlite3.connect(path)  # the failed first step left nothing behind
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {"card_state"}
    conn.close()


def test_an_empty_file_is_initialised(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"")
    assert read_states(tmp_path) == {} and read_settings(tmp_path) == {}
    store = Store(tmp_path)
    assert (store.migrated_from, store.version) == (0, migrations.LATEST)
    assert store.journal_mode() == "wal"
    store.set_setting("new_per_day", "12")
    store.close()
    assert read_settings(tmp_path) == {"new_per_day": "12"}


def make_newer(data_dir: Path) -> None:
    Store(data_dir).close()
    conn = sqlite3.connect(data_dir / DB_NAME)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(migrations.LATEST + 1),))
    conn.commit()
    conn.close()


def test_a_file_from_a_newer_drill_is_refused_everywhere(tmp_path):
    make_newer(tmp_path)
    path = tmp_path / DB_NAME
    for attempt in (Store, read_states, read_settings):
        with pytest.raises(StoreError) as caught:
            attempt(tmp_path)
        assert str(caught.value) == (
            f"{path} was written by a newer drill (schema version {migrations.LATEST + 1}; "
            f"this drill knows up to {migrations.LATEST}); upgrade drill to open it"
        )
        assert caught.value.kind == "newer"


def test_a_data_directory_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError) as caught:
        Store(blocker / "data")
    message = str(caught.value)
    assert str(blocker / "data") in message and one_line(message) and "--data-dir" in message


def test_a_read_only_file_is_refused_when_opening(tmp_path, monkeypatch):
    """SQLite told to open the file read-only (as it would a file without write permission)."""
    Store(tmp_path).close()
    real_connect = sqlite3.connect
    path = tmp_path / DB_NAME

    def read_only_connect(database, *args, **kwargs):
        if Path(str(database)) == path:
            kwargs["uri"] = True
            return real_connect(f"{path.as_uri()}?mode=ro", *args, **kwargs)
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(store_module.sqlite3, "connect", read_only_connect)
    with pytest.raises(StoreError) as caught:
        Store(tmp_path)
    assert caught.value.kind == "read_only"
    assert str(caught.value) == (
        f"{path} is read-only (attempt to write a readonly database); make it writable, "
        "or choose another data directory with --data-dir or DRILL_HOME"
    )


# Run by a user who may not write to the data directory: the test itself when it is
# not root, else a child process under the unprivileged `nobody` through setpriv
# (root's writes ignore file modes, so chmod alone proves nothing for root).
READ_ONLY_CHECK = r"""
import json, sys
from pathlib import Path
from drill.store import reader
from drill.store.errors import StoreError
from drill.store.store import Store
from tests.conftest import stretched

out = {}
for name in ("fresh", "existing"):
    data = Path(sys.argv[1]) / name
    row = {}
    for label, attempt in (("states", reader.read_states), ("settings", reader.read_settings), ("store", Store)):
        try:
            value = attempt(data)
            row[label] = ["ok", {k: str(v) for k, v in value.items()} if isinstance(value, dict) else ""]
            if not isinstance(value, dict):
                value.close()
        except StoreError as exc:
            row[label] = ["StoreError", str(exc), exc.kind]
        except Exception as exc:
            row[label] = ["raw", f"{type(exc).__name__}: {exc}"]
    out[name] = row
print(json.dumps(out))
"""


def _run_read_only_check(root: Path) -> dict:
    if os.geteuid() != 0:
        for folder in ("fresh", "existing"):
            (root / folder).chmod(0o555)
        try:
            out = subprocess.run([sys.executable, "-c", READ_ONLY_CHECK, str(root)], capture_output=True, text=True)
        finally:
            for folder in ("fresh", "existing"):
                (root / folder).chmod(0o755)
    else:
        setpriv = shutil.which("setpriv")
        if not setpriv:
            pytest.skip("running as root without setpriv: no way to be a user that read-only folders stop")
        # `nobody` may read the folders (root's, mode 755) but not write to them; the file is its own
        root.chmod(0o755)
        os.chown(root / "existing" / DB_NAME, 65534, 65534)
        cmd = [
            setpriv,
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            READ_ONLY_CHECK,
            str(root),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).parents[2])
        if out.returncode != 0 and "Permission denied" in out.stderr and "drill" not in out.stderr:
            pytest.skip(f"the unprivileged user cannot run this Python: {out.stderr.strip()[:200]}")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_read_only_data_directory():
    root = Path(tempfile.mkdtemp(prefix="drill-ro-"))
    try:
        (root / "fresh").mkdir()
        (root / "existing").mkdir()
        store = Store(root / "existing")
        store.set_setting("new_per_day", "7")
        record = store.record_review(
            CardState("a"),
            CardState("a", sm2=SM2State(1, 2.5, 1), due=DAY, introduced_on=DAY),
            grade=4,
            at=NOW,
            day=DAY,
            duration_ms=5,
            mode="review",
        )
        assert record
        store.close()
        got = _run_read_only_check(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    fresh, existing = got["fresh"], got["existing"]
    # nothing there yet: the first-paint reads find nothing; opening for writes says why it cannot
    assert fresh["states"] == ["ok", {}] and fresh["settings"] == ["ok", {}]
    # a good file in a read-only folder: still readable, but not writable
    assert existing["settings"] == ["ok", {"new_per_day": "7"}]
    assert list(existing["states"][1]) == ["a"]
    for case, name in ((fresh, "fresh"), (existing, "existing")):
        kind, message, error_kind = case["store"]
        assert kind == "StoreError" and error_kind == "read_only", case["store"]
        assert f"{root / name / DB_NAME} cannot be written: the data directory {root / name} is read-only" in message
        assert "--data-dir" in message and one_line(message)


# -- the oldest schema -----------------------------------------------------------------

V1_CARD_COLUMNS = [
    "card_id",
    "content_hash",
    "changed",
    "repetitions",
    "ef",
    "interval",
    "due",
    "lapses",
    "suspended",
    "buried_until",
    "introduced_on",
]
V1_REVIEW_COLUMNS = [
    "id",
    "card_id",
    "reviewed_at",
    "day",
    "grade",
    "duration_ms",
    "mode",
    "state_before",
    "state_after",
]


def v1_rows(path: Path) -> tuple[list, list]:
    conn = sqlite3.connect(path)
    try:
        cards = conn.execute(f"SELECT {', '.join(V1_CARD_COLUMNS)} FROM card_state ORDER BY card_id").fetchall()
        reviews = conn.execute(f"SELECT {', '.join(V1_REVIEW_COLUMNS)} FROM review_log ORDER BY id").fetchall()
    finally:
        conn.close()
    return cards, reviews


def test_the_version_1_fixture_is_the_oldest_schema():
    conn = sqlite3.connect(f"{FIXTURE.as_uri()}?immutable=1", uri=True)  # leaves no -wal/-shm beside it
    try:
        assert migrations.schema_version(conn) == 1
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"meta", "card_state", "review_log"}
    finally:
        conn.close()


def test_migrating_the_version_1_fixture_keeps_every_row(tmp_path):
    path = tmp_path / DB_NAME
    shutil.copy(FIXTURE, path)
    cards_before, reviews_before = v1_rows(path)
    assert len(cards_before) == 6 and len(reviews_before) == 5

    first_paint = read_states(tmp_path)  # the fast reader copes with the old file before it is migrated
    assert set(first_paint) == {c[0] for c in cards_before}

    store = Store(tmp_path)
    assert (store.migrated_from, store.version) == (1, migrations.LATEST)
    states = store.states()
    reviews = store.reviews()
    store.close()

    assert v1_rows(path) == (cards_before, reviews_before)  # every old column of every row, as it was
    conn = sqlite3.connect(path)
    leech = dict(conn.execute("SELECT card_id, leech FROM card_state"))
    new_columns = conn.execute("SELECT DISTINCT last_review_day, repeat_pending FROM card_state").fetchall()
    answers = conn.execute("SELECT DISTINCT answer FROM review_log").fetchall()
    conn.close()
    assert leech == {c[0]: int(c[7] >= 8) for c in cards_before}  # the migration flags the frequent lapsers
    assert new_columns == [(None, 0)] and answers == [(None,)]

    by_id = {c[0]: c for c in cards_before}
    for card_id, state in states.items():
        row = dict(zip(V1_CARD_COLUMNS, by_id[card_id]))
        due = dt.date.fromisoformat(row["due"]) if row["due"] else None
        assert (state.sm2, state.due) == (SM2State(row["repetitions"], row["ef"], row["interval"]), due)
        assert (state.lapses, state.suspended, state.changed, state.content_hash) == (
            row["lapses"],
            bool(row["suspended"]),
            bool(row["changed"]),
            row["content_hash"],
        )
    assert [(r.id, r.card_id, r.grade, r.duration_ms, r.mode) for r in reviews] == [
        (r[0], r[1], r[4], r[5], r[6]) for r in reviews_before
    ]
    assert reader.read_states(tmp_path) == states


def test_messages_are_single_lines_naming_the_file(tmp_path):
    cases = {}
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / DB_NAME).write_bytes(GARBAGE)
    newer = tmp_path / "newer"
    newer.mkdir()
    make_newer(newer)
    for name, folder in (("garbage", garbage), ("newer", newer)):
        with pytest.raises(StoreError) as caught:
            Store(folder)
        cases[name] = str(caught.value)
    for name, message in cases.items():
        assert one_line(message), name
        assert str(tmp_path / name / DB_NAME) in message
