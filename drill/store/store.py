"""The Store: the one place that writes the database (SQLModel), and reads what a write needs.

Reads that write nothing go through drill.store.reader (stdlib sqlite3, no SQLModel
to import). The Store reads inside its own transactions (a card's row before its new
state is written, the log a replay rebuilds from) and keeps the few looks the writers
and the tests make through the same connection (`states`, `reviews`, `settings`).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from sqlalchemy import event, func, text
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, create_engine, select

from drill.store import errors, migrations
from drill.store.mocks import MockRecords
from drill.store.reader import database_path
from drill.store.rows import ImportCounts, fill_card_row, logged_review_from_row, state_from_row
from drill.store.tables import CardRow, KernelAttemptRow, ReviewRow, SessionRow, SettingRow
from drill.study.records import CardState, LoggedReview, same_review

BUSY_TIMEOUT_MS = 5000
# Reviews written per transaction by an import: under a second of the write lock each, and a batch's
# card states written once (a log of a million reviews of 500 cards is 50 batches).
IMPORT_BATCH = 20_000


class Store(MockRecords):
    """SQLite through SQLModel: WAL, busy timeout, every write committed at once.

    Every write takes SQLite's write lock before its first read (BEGIN IMMEDIATE),
    so another drill writing at the same time makes it wait, never fail, and what
    it reads inside the write is current. A file drill cannot use (not a database,
    damaged, read-only, newer than this drill, locked too long) raises StoreError.
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = database_path(self.data_dir)
        wait_s = BUSY_TIMEOUT_MS / 1000
        self._wait_s = wait_s
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.from_os_error(self.path, exc) from exc
        try:
            raw = sqlite3.connect(self.path, isolation_level=None, timeout=wait_s)
        except sqlite3.Error as exc:
            raise errors.from_sqlite(self.path, exc, wait_s) from exc
        try:
            raw.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
            # tables first, then WAL: a new file gets its first pages in rollback mode
            migrated_from, version = migrations.migrate(raw, wait_s=wait_s)
            self.migrated_from = migrated_from
            self.version = version
            migrations.use_wal(raw, wait_s=wait_s)
        except sqlite3.Error as exc:
            raise errors.from_sqlite(self.path, exc, wait_s) from exc
        finally:
            raw.close()
        # the earliest study day a write changed the review log at, since `take_log_change` last took it
        self._log_changed: dt.date | None = None
        self.engine = create_engine(f"sqlite:///{self.path}", connect_args={"timeout": wait_s})
        event.listen(self.engine, "connect", _pragmas)
        self._session = Session(self.engine, expire_on_commit=False)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction: the write lock first, commit at the end, roll back on any error."""
        try:
            dbapi = self._session.connection().connection.dbapi_connection
            if dbapi is not None and not dbapi.in_transaction:
                dbapi.execute("BEGIN IMMEDIATE")
            yield
            self._session.commit()
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, (sqlite3.Error, DBAPIError)):
                raise errors.from_sqlite(self.path, exc, self._wait_s) from exc
            raise

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Reads: a SQLite error becomes a StoreError."""
        try:
            yield
        except (sqlite3.Error, DBAPIError) as exc:
            self._rollback()
            raise errors.from_sqlite(self.path, exc, self._wait_s) from exc

    def _rollback(self) -> None:
        try:
            self._session.rollback()
        except Exception:  # the original error is the one worth reporting
            pass

    def _log_change(self, day: dt.date | str) -> None:
        """Inside a write of the review log: note the study day of a row added or removed (see take_log_change)."""
        if isinstance(day, str):
            day = dt.date.fromisoformat(day)
        if self._log_changed is None or day < self._log_changed:
            self._log_changed = day

    def take_log_change(self) -> dt.date | None:
        """The earliest study day the review log was changed at since the last call (None: unchanged), and forget
        it: drill.store.writes.Writes brings the derived data up to date with it after every write."""
        earliest = self._log_changed
        self._log_changed = None
        return earliest

    def close(self) -> None:
        self._session.close()
        self.engine.dispose()

    def check_writable(self) -> None:
        """Raise StoreError now if a grade could not be saved (a read-only file or folder, a full disk), so the
        learner hears it before answering. The probe rewrites the schema's own row with itself and commits."""
        with self._writing():
            self._session.connection().execute(text("UPDATE meta SET value = value"))

    # -- card state -------------------------------------------------------
    def states(self) -> dict[str, CardState]:
        with self._reading():
            rows = self._session.exec(select(CardRow).execution_options(populate_existing=True)).all()
            return {r.card_id: state_from_row(r.model_dump()) for r in rows}

    def sync_hashes(self, hashes: dict[str, str]) -> list[str]:
        """Record each card's content hash; cards whose text changed since are marked and returned."""
        changed = []
        with self._writing():
            for row in self._session.exec(select(CardRow).execution_options(populate_existing=True)).all():
                new = hashes.get(row.card_id)
                if new is None or new == row.content_hash:
                    continue
                if row.content_hash:
                    row.changed = True
                    changed.append(row.card_id)
                row.content_hash = new
                self._session.add(row)
        return changed

    def _put_state(
        self, state: CardState, content_hash: str | None = None, *, reviews: int = 0, row: CardRow | None = None
    ) -> None:
        """Inside `_writing`: the card's row set to `state` (read afresh, so another drill's write is seen, unless
        `row` is given: the row as already read in this transaction)."""
        if row is None:
            row = self._session.get(CardRow, state.card_id, populate_existing=True) or CardRow(card_id=state.card_id)
        fill_card_row(row, state)
        row.reviews = max(0, (row.reviews or 0) + reviews)
        if content_hash is not None:
            if row.content_hash and row.content_hash != content_hash:
                row.changed = True
            row.content_hash = content_hash
        self._session.add(row)

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
        answer: dict[str, Any] | None = None,
        content_hash: str | None = None,
        topic: str | None = None,
    ) -> int:
        """Store the new state and append to the review log in one transaction; returns the log id."""
        log = ReviewRow(
            card_id=after.card_id,
            reviewed_at=at.isoformat(timespec="seconds"),
            day=day.isoformat(),
            grade=grade,
            duration_ms=duration_ms,
            mode=mode,
            state_before=json.dumps(before.as_json()),
            state_after=json.dumps(after.as_json()),
            answer=json.dumps(answer) if answer is not None else None,
            topic=topic,
        )
        with self._writing():
            self._put_state(after, content_hash, reviews=1)
            self._session.add(log)
            self._count_day(day.isoformat(), grade, mode, topic, +1)
        self._log_change(day)
        assert log.id is not None
        return log.id

    def undo_review(self, log_id: int) -> CardState:
        """Remove a log row and put back the state it recorded as `before`."""
        with self._writing():
            log = self._session.get(ReviewRow, log_id, populate_existing=True)
            if log is None:
                raise KeyError(f"no review {log_id}")
            current = self._session.get(CardRow, log.card_id, populate_existing=True)
            base = state_from_row(current.model_dump()) if current else CardState(log.card_id)
            before = CardState.from_json(log.card_id, json.loads(log.state_before), base)
            self._put_state(before, reviews=-1)
            self._session.delete(log)
            self._count_day(log.day, log.grade, log.mode, log.topic, -1)
        self._log_change(log.day)
        return before

    def _card_rows(self, card_ids: list[str], chunk: int = 500) -> dict[str, CardRow]:
        """Inside `_writing`: these cards' rows, read afresh in one statement per `chunk` ids (an import's batch
        touches thousands of cards; SQLite takes at most 32,766 parameters a statement)."""
        found: dict[str, CardRow] = {}
        for at in range(0, len(card_ids), chunk):
            query = select(CardRow).where(col(CardRow.card_id).in_(card_ids[at : at + chunk]))
            for row in self._session.exec(query.execution_options(populate_existing=True)):
                found[row.card_id] = row
        return found

    def _count_day(self, day: str, grade: int, mode: str, topic: str | None, step: int) -> None:
        """Inside `_writing`: keep the per-day (and per-day-and-topic) review counts in step with the log."""
        self._count_days({(day, grade, mode, topic): step})

    def _count_days(self, steps: Mapping[tuple[str, int, str, str | None], int]) -> None:
        """Inside `_writing`: `_count_day` for many (day, grade, mode, topic) groups at once, summed per day and per
        day and topic first, in one statement each (an import's batch has thousands of groups)."""
        per_day: dict[str, list[int]] = {}
        per_topic: dict[tuple[str, str], list[int]] = {}
        for (day, grade, mode, topic), step in steps.items():
            scheduled = step if mode != "cram" else 0
            passed = scheduled if grade >= 3 else 0
            sums = per_day.setdefault(day, [0, 0, 0])
            sums[0] += step
            sums[1] += scheduled
            sums[2] += passed
            if topic:
                topic_sums = per_topic.setdefault((day, topic), [0, 0])
                topic_sums[0] += scheduled
                topic_sums[1] += passed
        connection = self._session.connection()
        if per_day:
            connection.execute(
                text(
                    "INSERT INTO review_day (day, reviews, scheduled, passed) VALUES (:day, :n, :s, :p) "
                    "ON CONFLICT(day) DO UPDATE SET reviews = reviews + :n, scheduled = scheduled + :s, "
                    "passed = passed + :p"
                ),
                [{"day": day, "n": n, "s": sched, "p": passed} for day, (n, sched, passed) in per_day.items()],
            )
        if per_topic:
            connection.execute(
                text(
                    "INSERT INTO review_topic_day (day, topic, scheduled, passed) VALUES (:day, :topic, :s, :p) "
                    "ON CONFLICT(day, topic) DO UPDATE SET scheduled = scheduled + :s, passed = passed + :p"
                ),
                [
                    {"day": day, "topic": topic, "s": sched, "p": passed}
                    for (day, topic), (sched, passed) in per_topic.items()
                ],
            )

    def set_suspended(self, state: CardState, suspended: bool) -> None:
        state.suspended = suspended
        with self._writing():
            self._put_state(state)

    def bury(self, state: CardState, until: dt.date | None) -> None:
        state.buried_until = until
        with self._writing():
            self._put_state(state)

    def replay_log(
        self,
        rebuild: Callable[[list[LoggedReview], dict[str, CardState]], Mapping[str, CardState]],
        settings: Mapping[str, str | None],
    ) -> tuple[int, int]:
        """Card states rebuilt from the review log, and `settings` saved (None removes one), in one write transaction.

        `rebuild(log, states)` gets every logged review (oldest first) and the current
        states, and returns the states to write. The log is only read; review counts
        are left alone. Returns (cards written, reviews read).
        """
        with self._writing():
            rows = self._session.exec(select(ReviewRow).order_by(col(ReviewRow.id))).all()
            log = [logged_review_from_row(r.model_dump()) for r in rows]
            cards = self._session.exec(select(CardRow).execution_options(populate_existing=True)).all()
            rebuilt = rebuild(log, {r.card_id: state_from_row(r.model_dump()) for r in cards})
            for state in rebuilt.values():
                self._put_state(state)
            for key, value in settings.items():
                setting = self._session.get(SettingRow, key, populate_existing=True)
                if value is None:
                    if setting is not None:
                        self._session.delete(setting)
                    continue
                setting = setting or SettingRow(key=key, value=value)
                setting.value = value
                self._session.add(setting)
        return len(rebuilt), len(log)

    # -- queries for the queue and stats -----------------------------------
    def new_introduced_on(self, day: dt.date) -> int:
        stmt = select(func.count()).select_from(CardRow).where(CardRow.introduced_on == day.isoformat())
        with self._reading():
            return int(self._session.exec(stmt).one())

    def review_count(self) -> int:
        with self._reading():
            return int(self._session.exec(select(func.count()).select_from(ReviewRow)).one())

    def reviews(self, card_id: str | None = None) -> list[ReviewRow]:
        stmt = select(ReviewRow).order_by(col(ReviewRow.id))
        if card_id:
            stmt = stmt.where(ReviewRow.card_id == card_id)
        with self._reading():
            return list(self._session.exec(stmt).all())

    def next_due_after(self, day: dt.date) -> dt.date | None:
        stmt = select(func.min(CardRow.due)).where(
            col(CardRow.due) > day.isoformat(), col(CardRow.suspended).is_(False)
        )
        with self._reading():
            value = self._session.exec(stmt).one()
        return dt.date.fromisoformat(value) if value else None

    def grades_by_card(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        with self._reading():
            rows = self._session.exec(select(ReviewRow.card_id, ReviewRow.grade)).all()
        for card_id, grade in rows:
            out.setdefault(card_id, []).append(grade)
        return out

    # -- kernel attempts, settings ------------------------------------------
    def record_kernel_attempt(self, card_id: str, source: str, result: dict[str, Any]) -> int:
        row = KernelAttemptRow(
            card_id=card_id,
            at=dt.datetime.now().isoformat(timespec="seconds"),
            source=source,
            result=json.dumps(result, default=str),
        )
        with self._writing():
            self._session.add(row)
        assert row.id is not None
        return row.id

    def kernel_attempts(self, card_id: str) -> list[KernelAttemptRow]:
        stmt = select(KernelAttemptRow).where(KernelAttemptRow.card_id == card_id).order_by(col(KernelAttemptRow.id))
        with self._reading():
            return list(self._session.exec(stmt).all())

    def start_session(self, mode: str, at: dt.datetime) -> int:
        row = SessionRow(mode=mode, started_at=at.isoformat(timespec="seconds"))
        with self._writing():
            self._session.add(row)
        assert row.id is not None
        return row.id

    def end_session(self, session_id: int, at: dt.datetime, summary: dict[str, Any]) -> None:
        with self._writing():
            row = self._session.get(SessionRow, session_id, populate_existing=True)
            if row is not None:
                row.ended_at = at.isoformat(timespec="seconds")
                row.summary = json.dumps(summary)
                self._session.add(row)

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        with self._reading():
            row = self._session.get(SettingRow, key, populate_existing=True)
            return row.value if row else default

    def set_setting(self, key: str, value: str) -> None:
        with self._writing():
            row = self._session.get(SettingRow, key, populate_existing=True) or SettingRow(key=key, value=value)
            row.value = value
            self._session.add(row)

    def remove_setting(self, key: str) -> None:
        with self._writing():
            row = self._session.get(SettingRow, key, populate_existing=True)
            if row is not None:
                self._session.delete(row)

    def settings(self) -> dict[str, str]:
        with self._reading():
            rows = self._session.exec(select(SettingRow).execution_options(populate_existing=True)).all()
            return {r.key: r.value for r in rows}

    def journal_mode(self) -> str:
        with self._reading():
            return str(self._session.exec(text("PRAGMA journal_mode")).one()[0])  # type: ignore[call-overload]

    # -- bulk import ---------------------------------------------------------
    def import_reviews(self, logs: Iterable[dict[str, Any]], *, batch: int = IMPORT_BATCH) -> ImportCounts:
        """Append reviews from another log, `batch` rows to a transaction; returns what was added and skipped.

        Each log is a review_log row as a mapping of column to value (no `id`),
        read from `logs` as it goes, so a million rows cost no more memory than
        the keys of the log. A review already logged (`same_review`: the same card
        at the same second, whatever its grade and mode: an Anki package keeps
        grades 0 to 2 as one) is skipped, so importing twice, or a CSV after an
        Anki package of the same reviews, adds nothing; one given twice is
        counted apart. Each batch goes in by `reviewed_at`, the per-day counts
        and each card's review count follow the added rows, and a card whose
        newest logged review is now an imported one takes that review's
        `state_after` (its suspension and burial stay as they were). Between
        batches the write lock is free, so another drill waits a moment at most.
        """
        # the keys as hashes: 64 bits each, where the key's text would take a hundred bytes or more
        logged: set[int] = set()
        newest: dict[str, str] = {}
        with self._reading():
            raw = self._session.connection().connection.dbapi_connection
            assert raw is not None
            for cid, at in raw.execute("SELECT card_id, reviewed_at FROM review_log"):
                logged.add(hash(same_review(cid, at)))
                if at > newest.get(cid, ""):
                    newest[cid] = at
            self._session.rollback()  # end the read, so the batches below can take the write lock
        counts = ImportCounts()
        given: set[int] = set()
        fresh: list[dict[str, Any]] = []
        for log in logs:
            key = hash(same_review(log["card_id"], log["reviewed_at"]))
            if key in logged:
                counts.already_there += 1
            elif key in given:
                counts.repeated += 1
            else:
                given.add(key)
                fresh.append(log)
                if len(fresh) >= batch:
                    counts.added += self._import_batch(fresh, newest)
                    fresh = []
        counts.added += self._import_batch(fresh, newest)
        return counts

    def _import_batch(self, logs: list[dict[str, Any]], newest: dict[str, str]) -> int:
        """Write new reviews in one transaction (see import_reviews); `newest` is kept up to date."""
        if not logs:
            return 0
        ordered = sorted(logs, key=lambda r: str(r["reviewed_at"]))
        added: dict[str, list[dict[str, Any]]] = {}
        counts: dict[tuple[str, int, str, str | None], int] = {}
        rows: list[dict[str, Any]] = []
        for log in ordered:
            row = {**log, "duration_ms": log.get("duration_ms") or 0}
            row.setdefault("answer", None)
            row.setdefault("topic", None)
            rows.append(row)
            added.setdefault(row["card_id"], []).append(row)
            group = (row["day"], row["grade"], row["mode"], row["topic"])
            counts[group] = counts.get(group, 0) + 1
        with self._writing(), self._session.no_autoflush:
            # one executemany: an ORM object per row would cost a hundred times more
            self._session.connection().execute(ReviewRow.__table__.insert(), rows)  # type: ignore[attr-defined]
            self._count_days(counts)
            current_rows = self._card_rows(list(added))
            for cid, card_rows in added.items():  # flushed once, at the commit
                current = current_rows.get(cid)
                state = state_from_row(current.model_dump()) if current else CardState(cid)
                last = card_rows[-1]
                if last["reviewed_at"] >= newest.get(cid, ""):
                    state = CardState.from_json(cid, json.loads(last["state_after"]), state)
                self._put_state(state, reviews=len(card_rows), row=current or CardRow(card_id=cid))
        for cid, card_rows in added.items():
            newest[cid] = max(newest.get(cid, ""), card_rows[-1]["reviewed_at"])
        self._log_change(min(str(row["day"]) for row in rows))
        return len(rows)


def _pragmas(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    # the file is already in WAL mode: Store.__init__ switched it under a retry
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
