"""One way into a learner's data: the data directory, the settings, the decks and the database, opened once.

The command line and the review app ask a Workspace for what they show and write:
the card states and today's session, the progress report and the weakness figures,
a mock's report, a card's history. Reads go through drill.store.reader (stdlib
sqlite3: the first paint never imports SQLModel). Every write of the app goes through
`writes()` (drill.store.writes.Writes), one path that keeps the data derived from the
review log current; each feature types it as the narrow writer it defines (a review
session's ReviewWriter, a mock's MockWriter, the kernel screen's KernelAttemptWriter).
The workspace opens the store (in the background for the review screen, `open_writes`)
and closes it; only the command line's data commands get the Store itself (`store()`).
Nothing in drill.ui imports drill.store: it gets all of this from here.
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cards.deck_cache import load_decks_cached
from drill.cards.loader import DeckSet
from drill.cards.model import Card
from drill.config.settings import Settings, rollover_hour
from drill.config.study_day import study_day_of
from drill.store import reader, start_read
from drill.store.errors import StoreError
from drill.store.rows import CardTuple, ReviewRecord, states_from_tuples
from drill.store.rows import ImportCounts as ImportCounts
from drill.store.writes import OpenedWrites as OpenedWrites
from drill.store.writes import Writes as Writes
from drill.study.day_session import SessionAsked, day_session, follows_plan, plan_for_queue, planned_day
from drill.study.records import CardState, LoggedReview, ProgressRows
from drill.study.scheduling import saved_parameters
from drill.study.session import (
    DEFAULT_FOCUS_NEW,
    DEFAULT_NEW_ORDER,
    DEFAULT_NEW_PER_DAY,
    MOCK_ONLY_KINDS,
    ReviewSession,
)

# The progress report, the weakness figures and the deck summary are imported where they are asked for:
# the first paint needs none of them.
if TYPE_CHECKING:
    from drill.cards.deck_summary import CardSummary, DeckSummary
    from drill.mock.report_record import MockReport
    from drill.store.store import Store
    from drill.study.calibration import CalibrationFigures
    from drill.study.forecast import DayReplay, MemoryModel
    from drill.study.progress import ProgressReport, StatsFigures
    from drill.study.readiness import Interview, ReadinessFigures, ReadinessInputs
    from drill.study.records import CardFacts
    from drill.study.standing import TopicFigures


def ensure_schema(data_dir: Path) -> None:
    """Make the database, or migrate an older file, before reading progress from it (the Store does it once).

    A folder or file drill could not write to is opened by the Store too, which
    refuses it with its one-line message: grades given there would be lost.
    """
    folder = Path(data_dir)
    database = reader.database_path(folder)
    writable = os.access(folder, os.W_OK) and (not database.exists() or os.access(database, os.W_OK))
    if not writable or not reader.has_progress_schema(folder):
        from drill.store.store import Store

        Store(folder).close()


def load_store() -> None:
    """Import the Store's modules (SQLModel takes a while): a command starts it in a thread before it needs a write."""
    import drill.store.store  # noqa: F401


def topic_titles() -> dict[str, str]:
    """Each topic's title by its id, from the topic list."""
    from drill.cards.loader import known_topics

    return {key: str(topic.get("title", key)) for key, topic in known_topics().items()}


def read_weakness(
    cards: Mapping[str, Card], data_dir: Path, today: dt.date, titles: Mapping[str, str] | None = None
) -> list[TopicFigures]:
    """Per-topic figures from the data directory, weakest first (migrating an older database file first)."""
    from drill.study.standing import topic_figures

    ensure_schema(data_dir)
    return topic_figures(cards, reader.read_progress(data_dir, today), today, titles)


@dataclass(frozen=True)
class ReportRead:
    """What the progress report reads: saved settings, the study day, the progress rows, and every card's state
    when they were asked for with them (read from the same read of the card table; None when not asked)."""

    saved: dict[str, str]
    today: dt.date
    rows: ProgressRows
    states: dict[str, CardState] | None = None


def read_for_report(
    data_dir: Path,
    rollover_hour: int | None = None,
    now: dt.datetime | None = None,
    chosen_day: dt.date | None = None,
    *,
    states: bool = False,
) -> ReportRead:
    """What the progress report reads: saved settings, the study day (`chosen_day`, --today, when given), and
    the progress rows, with every card's state when `states` (the card table read once for both)."""
    from drill.study.progress import saved_rollover_hour

    saved = reader.read_settings(data_dir)
    if rollover_hour is None:
        rollover_hour = saved_rollover_hour(saved)
    today = study_day_of(now or dt.datetime.now(), rollover_hour, chosen_day)
    if not states:
        return ReportRead(saved, today, reader.read_progress(data_dir, today))
    read = reader.read_progress_and_states(data_dir, today)
    return ReportRead(saved, today, read.progress, read.states)


def collect(
    cards: Mapping[str, Card],
    data_dir: Path,
    now: dt.datetime | None = None,
    rollover_hour: int | None = None,
    *,
    new_per_day: int | None = None,
    new_order: str | None = None,
) -> ProgressReport:
    """The progress report of the data directory, read without SQLModel (drill.study.progress builds it).

    Settings left as None are read as the review app saved them. The database must
    be at the current schema (`ensure_schema` first).
    """
    read = read_for_report(data_dir, rollover_hour, now)
    return _report(cards, read, rollover_hour=rollover_hour, new_per_day=new_per_day, new_order=new_order)


def _report(
    cards: Mapping[str, CardFacts],
    read: ReportRead,
    *,
    rollover_hour: int | None,
    new_per_day: int | None,
    new_order: str | None,
) -> ProgressReport:
    """The progress report built from what `read_for_report` read (drill.study.progress builds it)."""
    from drill.study.progress import build_report

    return build_report(
        cards,
        read.saved,
        read.today,
        read.rows,
        topic_titles(),
        rollover_hour=rollover_hour,
        new_per_day=new_per_day,
        new_order=new_order,
    )


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector held off while `drill stats` or the stats screen reads its figures: the read
    builds a few hundred thousand small records at 10,000 cards, none of them in a cycle, and the collector's
    passes over them (a tenth of the command's time) free nothing. What is let go is freed as usual."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def failure_text(exc: BaseException) -> str:
    """What went wrong opening or writing the database, in one line: the store's own words when it has them."""
    if isinstance(exc, StoreError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class StartReads:
    """What the app's start reads of the learner's data once the study day is known, in one pass: today's grades,
    the progress rows (for --weak) and what readiness reads (for a day's queue that follows the plan)."""

    graded_today: dict[str, int]
    progress: ProgressRows | None = None
    readiness: ReadinessInputs | None = None


def studied(cards: Mapping[str, CardSummary]) -> dict[str, CardSummary]:
    """The cards the day's reviews, the plan and the forecast count: a scenario is asked only in a mock round."""
    return {card_id: card for card_id, card in cards.items() if card.kind not in MOCK_ONLY_KINDS}


class Workspace:
    """A learner's data directory with its settings and decks: what the CLI and the UI read and write through.

    The decks are loaded on first use (the deck cache makes that quick); the Store is
    opened on the first write and kept until `close`.
    """

    def __init__(
        self,
        data_dir: Path,
        deck_roots: Sequence[Path] | None = None,
        *,
        settings: Settings | None = None,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        today: dt.date | None = None,
        day_starts_at: int | None = None,
    ) -> None:
        """`today`: the study day --today chose (None: the clock's); `day_starts_at`: --day-starts-at, if given."""
        self.data_dir = Path(data_dir)
        self.deck_roots = deck_roots
        # the settings file, as the command line read it; None: the built-in defaults
        if settings is None:
            settings = Settings()
        self.settings = settings
        self.clock = clock
        self.chosen_day = today
        self.day_starts_at = day_starts_at
        self._decks: DeckSet | None = None
        self._summary: DeckSummary | None = None
        self._store: Store | None = None
        self._writes: Writes | None = None
        self._opening: Future[OpenedWrites] | None = None
        # the card table's rows the start read with the settings, kept for its progress rows (`start_reads`)
        self._start_cards: list[CardTuple] | None = None
        # held while the Store is opened, prepared or closed: a close at exit waits for a preparation under way
        self._store_lock = threading.RLock()

    # -- decks and reads ---------------------------------------------------------------
    @property
    def decks(self) -> DeckSet:
        if self._decks is None:
            self._decks = load_decks_cached(self.deck_roots, self.data_dir)
        return self._decks

    @property
    def cards(self) -> Mapping[str, Card]:
        return self.decks.cards

    @property
    def summary(self) -> DeckSummary:
        """Each card's id, topic and kind: what progress figures read, without building every card."""
        from drill.cards.deck_summary import load_summary_cached, summarise

        if self._summary is None:
            if self._decks is not None:
                self._summary = summarise(self._decks)
            else:
                self._summary = load_summary_cached(self.deck_roots, self.data_dir)
        return self._summary

    def saved_settings(self) -> dict[str, str]:
        """The settings the review app saved in the database (flags given earlier), {} before the first run."""
        return reader.read_settings(self.data_dir)

    def saved_settings_and_states(self) -> tuple[dict[str, str], dict[str, CardState]]:
        """The saved settings and every card's state, read at once (the app's first read). The card table's rows
        are kept for the start's progress rows (`start_reads`), so it is read once; on a file an older drill
        wrote, migrated before those, they are read again."""
        first = reader.read_settings_and_cards(self.data_dir)
        self._start_cards = first.cards if first.current else None
        return first.settings, states_from_tuples(first.cards)

    def rollover_hour(self) -> int:
        """The hour the study day starts: --day-starts-at, the settings file, the saved setting or the default."""
        return rollover_hour(self.settings, self.saved_settings(), self.day_starts_at)

    def study_day(self) -> dt.date:
        """Today's study day, as the review app and every command take it (drill.config.study_day)."""
        return study_day_of(self.clock(), self.rollover_hour(), self.chosen_day)

    def states(self) -> dict[str, CardState]:
        """Every card's state from the database, {} before the first run."""
        self.settle_writes()
        return reader.read_states(self.data_dir)

    def settle_writes(self) -> None:
        """Wait for the writes a review made behind its screen (drill.store.writes.WriteBehind): a read sees them."""
        writes = self._writes
        if writes is not None:
            writes.drain()

    def weakness(self, today: dt.date) -> list[TopicFigures]:
        """Per-topic figures, weakest first."""
        self.settle_writes()
        return read_weakness(self.cards, self.data_dir, today)

    def report(
        self,
        *,
        rollover_hour: int | None = None,
        new_per_day: int | None = None,
        new_order: str | None = None,
    ) -> ProgressReport:
        """The progress report (`drill stats`, the stats screen) of `study_day()`; a setting left None is the one
        in force (a flag the workspace was given, the settings file, the saved setting).

        The database is read in a thread while the deck summary loads (SQLite lets go of the GIL as it reads).
        """
        report, _ = self._report_and_states(
            states=False, rollover_hour=rollover_hour, new_per_day=new_per_day, new_order=new_order
        )
        return report

    def _report_and_states(
        self, *, states: bool, rollover_hour: int | None, new_per_day: int | None, new_order: str | None
    ) -> tuple[ProgressReport, dict[str, CardState] | None]:
        """`report`, with every card's state when `states` (made from the same read of the card table)."""
        ensure_schema(self.data_dir)  # an older file: the Store migrates it once
        self.settle_writes()
        if rollover_hour is None:
            rollover_hour = self.rollover_hour()
        with ThreadPoolExecutor(max_workers=1) as pool:
            read = pool.submit(
                read_for_report, self.data_dir, rollover_hour, self.clock(), self.chosen_day, states=states
            )
            cards = studied(self.summary.cards)
            figures = read.result()
        report = _report(cards, figures, rollover_hour=rollover_hour, new_per_day=new_per_day, new_order=new_order)
        return report, figures.states

    def stats(self, *, new_per_day: int | None = None, new_order: str | None = None) -> StatsFigures:
        """What `drill stats` prints and the stats screen shows (settings left None as `report` takes them): the
        report, readiness with the day's plan when a date is set (the card states read with the report's rows, in
        one read of the card table, for both readiness and the plan's new cards of today, which the report's
        `new_today` then counts), and the calibration."""
        from drill.study.progress import StatsFigures

        with no_cycle_collection():
            dated = self.interview() is not None  # the card states are read for readiness only
            report, states = self._report_and_states(
                states=dated, rollover_hour=None, new_per_day=new_per_day, new_order=new_order
            )
            readiness = None
            if states is not None:
                today = report.today
                readiness = self.readiness(today, states=states, new_order=report.new_order)
                if readiness is not None and readiness.plan is not None:  # the queue takes the plan's new cards
                    report = replace(report, new_today=len(self.planned_new(readiness, states, today)))
            return StatsFigures(report, readiness, self.calibration())

    def progress_rows(self, today: dt.date) -> ProgressRows:
        """The progress figures' rows of study day `today` (the database migrated first)."""
        ensure_schema(self.data_dir)
        self.settle_writes()
        return reader.read_progress(self.data_dir, today)

    def has_current_schema(self) -> bool:
        """Whether the database file is there and at the current schema (nothing is written to find out)."""
        return reader.has_progress_schema(self.data_dir)

    def mock_report(self, mock_id: int) -> MockReport | None:
        """A finished mock's stored report, or None."""
        from drill.mock.report_record import MockReport

        kept = reader.mock_report_json(self.data_dir, mock_id)
        return MockReport.from_json(kept) if isinstance(kept, dict) else None

    def has_abandoned_mock(self, now: dt.datetime) -> bool:
        """Whether a mock is still marked running past its time (a cheap read; no SQLModel)."""
        return reader.has_abandoned_mock(self.data_dir, now)

    def card_history(self, card_id: str) -> list[dict[str, Any]]:
        """The card's logged reviews, oldest first."""
        self.settle_writes()  # a grade written behind the screen is in the log read
        return reader.card_history(self.data_dir, card_id)

    def studied_on(self, day: dt.date) -> set[str]:
        """The cards graded on study day `day`, in any mode."""
        self.settle_writes()  # a grade written behind the screen is in the log read
        return reader.studied_on(self.data_dir, day)

    # -- readiness for the interview date ----------------------------------------------
    def review_log(self) -> list[LoggedReview]:
        """Every logged review, oldest first."""
        self.settle_writes()  # a grade written behind the screen is in the log read
        return reader.read_log(self.data_dir)

    def review_records(self) -> list[ReviewRecord]:
        """Every logged review as it is kept, oldest first (what an export writes; an older file migrated first)."""
        ensure_schema(self.data_dir)
        self.settle_writes()
        return reader.review_records(self.data_dir)

    def fsrs_parameters(self) -> tuple[float, ...] | None:
        """FSRS parameters fitted to this learner (`drill fsrs fit`); None: the fsrs package's defaults."""
        return saved_parameters(self.saved_settings())

    def memory_model(self, saved: Mapping[str, str] | None = None) -> MemoryModel:
        """FSRS as it predicts this learner's recall: their fitted parameters (in `saved`, the saved settings, when
        they were read already), the settings' longest interval."""
        from drill.study.forecast import MemoryModel

        parameters = self.fsrs_parameters() if saved is None else saved_parameters(saved)
        return MemoryModel(parameters, self.settings.max_interval_days)

    def interview(self) -> Interview | None:
        """The interview date and what goes with it in the settings file; None when no date is set."""
        date = self.settings.interview_date
        if date is None:
            return None  # before the import: without a date, `drill stats` needs none of the planner's modules
        from drill.study.readiness import Interview

        track = self.settings.interview_track or None
        return Interview(date, track, self.settings.readiness_target, self.settings.minutes_per_day)

    def readiness(
        self,
        today: dt.date,
        *,
        states: Mapping[str, CardState] | None = None,
        new_order: str = DEFAULT_NEW_ORDER,
        suggest: bool = True,
    ) -> ReadinessFigures | None:
        """Readiness on the interview date and the plan to it; None when no date is set or the date has passed.

        `suggest` False leaves out what would fit when the plan does not (the queue needs none of it).
        """
        read = self.readiness_inputs(today)
        if read is None:
            return None
        from drill.study.readiness import readiness_of

        return readiness_of(
            read, self.states() if states is None else states, today, new_order=new_order, suggest=suggest
        )

    def readiness_inputs(self, today: dt.date) -> ReadinessInputs | None:
        """What readiness on the interview date reads besides the card states; None when no date is set or the
        date has passed."""
        self.settle_writes()
        interview = self.interview()
        if interview is None or interview.date < today:
            return None  # before the import: a start without a date needs none of the planner's modules
        from drill.store.plan_cache import PlanFile
        from drill.study.readiness import ReadinessInputs

        ensure_schema(self.data_dir)
        cards, others = self._track_cards(interview)
        model = self.memory_model()
        replayed = self.replay_day(today, model)
        return ReadinessInputs(interview, cards, others, topic_titles(), model, replayed, PlanFile(self.data_dir))

    def _track_cards(self, interview: Interview) -> tuple[list[CardSummary], list[CardSummary]]:
        """The studied cards of the interview's track, and the others (all are the track's without one)."""
        track = None
        if interview.track is not None:
            from drill.study.tracks import track_topics

            track = track_topics(interview.track)
        every = studied(self.summary.cards).values()
        cards = [card for card in every if track is None or card.topic in track]
        others = [card for card in every if track is not None and card.topic not in track]
        return cards, others

    def readiness_line(self, today: dt.date) -> str | None:
        """One line on readiness for the interview date (what a mock's report shows); None without a date."""
        figures = self.readiness(today, suggest=False)  # the line says nothing of what would fit
        return figures.summary_line() if figures is not None else None

    def calibration(self) -> CalibrationFigures:
        """Predicted recall against what happened, over the learner's whole record.

        The replay behind it is cached (drill.store.replay_cache): with nothing graded since the last
        look this reads two numbers from the database, and after a day's reviews it replays those only.
        """
        from drill.store import replay_cache
        from drill.study.calibration import CalibrationFigures

        ensure_schema(self.data_dir)
        self.settle_writes()
        today = self.study_day()
        tally = replay_cache.calibration_tally(self.data_dir, self.memory_model(), today)
        return CalibrationFigures(tally.calibration())

    def replay_day(self, today: dt.date, model: MemoryModel | None = None) -> DayReplay:
        """The review log replayed through the memory model to the start of study day `today` and whole (cached)."""
        from drill.store import replay_cache

        return replay_cache.replay_day(self.data_dir, model or self.memory_model(), today)

    # -- today's session ---------------------------------------------------------------
    def review_session(
        self,
        today: dt.date,
        *,
        states: dict[str, CardState] | None = None,
        card_id: str | None = None,
        topics: Iterable[str] = (),
        focused: bool = False,
        cram: bool = False,
        new_per_day: int = DEFAULT_NEW_PER_DAY,
        new_order: str = DEFAULT_NEW_ORDER,
        focus_new: int = DEFAULT_FOCUS_NEW,
    ) -> ReviewSession:
        """A review session on study day `today`: one card (`card_id`), some topics (`focused` or `cram`), or the day's queue.

        `states` are read from the database unless given. The new cards a restart shows are the
        same: their order is seeded with the day. With an interview date ahead, the day's queue
        follows the plan to it (drill.study.day_session.plan_for_queue).
        """
        if states is None:
            states = self.states()
        asked = SessionAsked(card_id, tuple(topics), focused, cram, new_per_day, new_order, focus_new)
        planned = None
        if follows_plan(card_id, focused, cram):
            figures = self.readiness(today, states=states, new_order=new_order, suggest=False)
            planned = plan_for_queue(figures, self.cards, states, today)
        return day_session(
            self.cards,
            states,
            today,
            asked,
            planned=planned,
            graded_today=reader.reviews_on(self.data_dir, today),
            max_interval=self.settings.max_interval_days,
        )

    def start_reads(self, today: dt.date, saved: Mapping[str, str], *, progress: bool, readiness: bool) -> StartReads:
        """What the app's start reads once the study day is known (`StartReads`), in one pass after the saved
        settings (`saved`): today's grades, the progress rows when `progress`, readiness's inputs when `readiness`
        (None without an interview date ahead). The database is migrated first when either is asked for."""
        self.settle_writes()
        interview = self.interview() if readiness else None
        if interview is not None and interview.date < today:
            interview = None  # the date has passed: no plan
        model = None if interview is None else self.memory_model(saved)
        if progress or interview is not None:
            ensure_schema(self.data_dir)
        start_cards = self._start_cards  # the rows read with the settings: the progress rows' cards are made of them
        self._start_cards = None
        day = start_read.read_day(self.data_dir, today, progress=progress, model=model, cards=start_cards)
        if interview is None or model is None or day.replayed is None:
            return StartReads(day.graded_today, day.progress)
        from drill.store.plan_cache import PlanFile
        from drill.study.readiness import ReadinessInputs

        cards, others = self._track_cards(interview)
        keeper = PlanFile(self.data_dir)
        read = ReadinessInputs(interview, cards, others, topic_titles(), model, day.replayed, keeper)
        return StartReads(day.graded_today, day.progress, read)

    def planned_new(self, figures: ReadinessFigures, states: Mapping[str, CardState], today: dt.date) -> list[str]:
        """The new cards the day's queue still holds (the plan's for today, less those introduced or set aside)."""
        if figures.plan is None:
            return []
        new = set(figures.plan.today_cards.new)
        # the deck summary holds every card id the queue may ask: the decks themselves need not be built for it
        listed = planned_day(figures, self.summary.cards, states, today).queue
        return [card_id for card_id in listed if card_id in new]

    # -- writes: one path, handed out as the narrow writers each feature defines ---------
    def store(self) -> Store:
        """The Store, opened (and an older file migrated) on the first call; StoreError when it cannot be used.

        For the command line's data commands (import, export, a scheduler switch) only: the app and the
        features write through `writes()`, which keeps the derived data current."""
        with self._store_lock:
            if self._store is None:
                from drill.store.store import Store

                self._store = Store(self.data_dir)
            return self._store

    def writes(self) -> Writes:
        """The one path every write of the app takes (the Store opened on the first call; StoreError when it
        cannot be): the review session's, a mock's, the kernel screen's and the browser's writers are this."""
        with self._store_lock:
            if self._writes is None:
                self._writes = Writes(self.store(), self._keep_derived)
            return self._writes

    def open_writes(
        self, settings_to_save: Mapping[str, str], content_hashes: Mapping[str, str], now: dt.datetime
    ) -> Future[OpenedWrites]:
        """Open the write path in the background and bring it up to date (the review screen's first paint does
        not wait for SQLModel): the settings given on the command line saved, the cards whose text changed
        marked, mocks cut off by a closed terminal closed, and whether grades can be written checked (the
        future raises StoreError when they cannot). `close` waits for an opening under way."""
        with self._store_lock:
            if self._opening is None:
                hashes = dict(content_hashes)
                saved = dict(settings_to_save)
                opening: Future[OpenedWrites] = Future()
                self._opening = opening

                def open_now() -> None:
                    if not opening.set_running_or_notify_cancel():  # given up on before it began
                        return
                    try:
                        opening.set_result(self._prepare(opening, saved, hashes, now))
                    except BaseException as exc:  # the future carries it to whoever waits
                        opening.set_exception(exc)

                threading.Thread(target=open_now, name="drill-open-store", daemon=True).start()
            return self._opening

    def _prepare(
        self,
        opening: Future[OpenedWrites],
        settings_to_save: Mapping[str, str],
        content_hashes: dict[str, str],
        now: dt.datetime,
    ) -> OpenedWrites:
        with self._store_lock:
            if self._opening is not opening:  # closed before the thread began: nothing is opened again
                raise StoreError(self.data_dir, "the data folder was closed before it was opened")
            writes = self.writes()
            store = writes.store
            for key, value in settings_to_save.items():
                store.set_setting(key, value)
            changed = store.sync_hashes(content_hashes)
            store.close_abandoned_mocks(now)
            store.check_writable()
            return OpenedWrites(writes, changed)

    def import_reviews(self, logs: Iterable[dict[str, Any]]) -> ImportCounts:
        """Add reviews from another log (drill.store.store.Store.import_reviews); the derived data is brought up
        to date once, at the end, in one streamed pass (the first `drill stats` after it replays nothing); with an
        interview date set, the day's plan is made and kept too (drill.store.plan_cache), as `drill stats` asks it."""
        counts = self.writes().import_reviews(logs)
        if counts.added and self.settings.interview_date is not None:
            from drill.config.settings import study_settings

            new_order = study_settings(self.settings, self.saved_settings())[2]
            self.readiness(self.study_day(), new_order=new_order)
        return counts

    def _keep_derived(self, earliest: dt.date) -> None:
        """After a write to the review log whose earliest row is of study day `earliest`: the cached replay, and the
        digest the plan reads, brought up to date now when the write reached before today (an import, an undo
        across the day's start). Rows of today are taken on by whoever reads (a day's rows, never the log)."""
        from drill.store import replay_cache

        today = self.study_day()
        if earliest < today:
            replay_cache.replay_day(self.data_dir, self.memory_model(), today)

    def rebuild_derived(self) -> DayReplay:
        """The derived data rebuilt from the whole log, whatever was cached (`drill stats` reads it after)."""
        from drill.store import replay_cache

        return replay_cache.rebuild(self.data_dir, self.memory_model(), self.study_day())

    def close(self) -> None:
        """Close the Store if it was opened (after an opening under way: it holds the lock until it is done)."""
        with self._store_lock:
            if self._writes is not None:
                self._writes.drain()  # a grade written behind the screen is saved before the store closes
            self._writes = None
            self._opening = None
            if self._store is not None:
                self._store.close()
                self._store = None
