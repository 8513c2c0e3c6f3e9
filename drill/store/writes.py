"""The one path every write of the app takes: the Store's transaction, then the data derived from the log kept true.

The review session, a mock, the kernel screen and the browser each define the narrow writer
they need (drill.study.session.ReviewWriter, drill.mock.record.MockWriter, the kernel
screen's KernelAttemptWriter, the browser's unsuspend) and get this object from the
workspace (drill.workspace.Workspace.writes). After every write that changed the review log
it hands the earliest study day the change reached to `keep_derived` (the workspace's:
the cached replay and its digest, drill.store.replay_cache), so no writer can leave the
derived data behind. The per-day counts and each card's review count are kept by the Store
in the write's own transaction.

Importing this module imports no SQLModel: the Store it wraps is opened by the workspace.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from drill.store.rows import ImportCounts
from drill.study.records import CardState

if TYPE_CHECKING:
    from drill.store.store import Store


@dataclass(frozen=True)
class OpenedWrites:
    """The write path, opened and brought up to date for a review, and the cards whose text changed since."""

    writes: "Writes"
    changed_cards: list[str]


class Writes:
    """Every write of the app, through one Store; `keep_derived(day)` runs after each that changed the log."""

    def __init__(self, store: "Store", keep_derived: Callable[[dt.date], None]) -> None:
        self.store = store
        self._keep_derived = keep_derived
        self._behind: list[WriteBehind] = []

    def write_behind(
        self, start: Callable[[Callable[[], None]], None], failed: Callable[[BaseException], None]
    ) -> "WriteBehind":
        """A review's writer whose writes run in order off the caller's thread (see WriteBehind); `drain` waits
        for them, and the workspace drains before it reads or closes."""
        behind = WriteBehind(self, start, failed)
        self._behind.append(behind)
        return behind

    def drain(self) -> None:
        """Every write handed to a WriteBehind, done."""
        for behind in self._behind:
            behind.drain()

    def _settle(self) -> None:
        """Bring the derived data up to date with what the last write did to the log (nothing when it did not)."""
        earliest = self.store.take_log_change()
        if earliest is not None:
            self._keep_derived(earliest)

    # -- grades (drill.study.session.ReviewWriter) ----------------------------------------
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
        try:
            return self.store.record_review(
                before,
                after,
                grade=grade,
                at=at,
                day=day,
                duration_ms=duration_ms,
                mode=mode,
                answer=answer,
                content_hash=content_hash,
                topic=topic,
            )
        finally:
            self._settle()

    def undo_review(self, log_id: int) -> CardState:
        try:
            return self.store.undo_review(log_id)
        finally:
            self._settle()

    def import_reviews(self, logs: Iterable[dict[str, Any]]) -> ImportCounts:
        """Reviews from another log (Store.import_reviews); the derived data follows once, at the end."""
        try:
            return self.store.import_reviews(logs)
        finally:
            self._settle()

    def set_setting(self, key: str, value: str) -> None:
        self.store.set_setting(key, value)

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """A saved setting (the session reads the active scheduler with it)."""
        return self.store.get_setting(key, default)

    def states(self) -> dict[str, CardState]:
        """Every card's state, read in the Store's own connection (a mock reads it before it logs an answer), once
        the grades written behind the review screen are made."""
        self.drain()
        return self.store.states()

    # -- suspensions and burials ------------------------------------------------------------
    def set_suspended(self, state: CardState, suspended: bool) -> None:
        self.store.set_suspended(state, suspended)

    def bury(self, state: CardState, until: dt.date | None) -> None:
        self.store.bury(state, until)

    def unsuspend(self, card_id: str) -> bool:
        """Put a suspended card back in the queues; False when it is not suspended (or has no state)."""
        state = self.store.states().get(card_id)
        if state is None or not state.suspended:
            return False
        self.store.set_suspended(state, False)
        return True

    # -- kernel attempts ----------------------------------------------------------------------
    def record_kernel_attempt(self, card_id: str, source: str, result: dict[str, Any]) -> int:
        return self.store.record_kernel_attempt(card_id, source, result)

    # -- mocks (drill.mock.record.MockWriter) ---------------------------------------------------
    def close_abandoned_mocks(self, now: dt.datetime) -> list[int]:
        return self.store.close_abandoned_mocks(now)

    def start_mock(self, at: dt.datetime, minutes: int, plan: Sequence[dict[str, Any]]) -> int:
        return self.store.start_mock(at, minutes, plan)

    def save_mock_answer(self, mock_id: int, card_id: str, **fields: Any) -> None:
        self.store.save_mock_answer(mock_id, card_id, **fields)

    def finish_mock(
        self, mock_id: int, at: dt.datetime, status: str, score: float | None, report: dict[str, Any] | None
    ) -> None:
        self.store.finish_mock(mock_id, at, status, score, report)


class WriteBehind:
    """A review session's writer (drill.study.session.ReviewWriter) whose writes run after the call returns.

    A grade's write is queued and `start(job)` is asked to run `job` elsewhere (the review screen runs it in a
    thread once the next card is painted), so the UI's event loop never waits on SQLite. Writes run one at a
    time in the order given, whoever runs them: `drain` takes the queue under a lock. A grade's log id is a
    ticket until its write is done; an undo (rare) drains the queue first and undoes the real row. A write
    that fails is handed to `failed` (the screen says it); the ones after it still run.
    """

    def __init__(
        self, writes: Writes, start: Callable[[Callable[[], None]], None], failed: Callable[[BaseException], None]
    ) -> None:
        self._writes = writes
        self._start = start
        self._failed = failed
        self._pending: deque[Callable[[], None]] = deque()
        self._lock = threading.Lock()  # held while the queue is drained: one write at a time, in order
        self._tickets = 0
        self._log_ids: dict[int, int] = {}  # a grade's ticket to its row's id, once written

    def _queue(self, job: Callable[[], None]) -> None:
        self._pending.append(job)
        self._start(self.drain)

    def drain(self) -> None:
        """Run every queued write, oldest first."""
        with self._lock:
            while self._pending:
                job = self._pending.popleft()
                try:
                    job()
                except Exception as exc:  # said by the screen; the writes after it are still made
                    self._failed(exc)

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
        """Queue the grade's write; returns its ticket, which `undo_review` takes as the log id."""
        self._tickets += 1
        ticket = self._tickets

        def write() -> None:
            self._log_ids[ticket] = self._writes.record_review(
                before,
                after,
                grade=grade,
                at=at,
                day=day,
                duration_ms=duration_ms,
                mode=mode,
                answer=answer,
                content_hash=content_hash,
                topic=topic,
            )

        self._queue(write)
        return ticket

    def undo_review(self, log_id: int) -> CardState:
        """Undo a grade given through this writer (by its ticket), once every queued write is made."""
        self.drain()
        if log_id not in self._log_ids:
            raise KeyError(f"no review written for grade {log_id}")
        return self._writes.undo_review(self._log_ids.pop(log_id))

    def set_suspended(self, state: CardState, suspended: bool) -> None:
        state.suspended = suspended  # the caller's record shows it at once, as the Store's write would
        self._queue(lambda: self._writes.set_suspended(state, suspended))

    def bury(self, state: CardState, until: dt.date | None) -> None:
        state.buried_until = until
        self._queue(lambda: self._writes.bury(state, until))

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        self.drain()
        return self._writes.get_setting(key, default)
