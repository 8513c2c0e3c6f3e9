"""What `drill` opens on: the review app's options, checked, and the start they make (the session, the focus,
the plan, the deck problems), decided before the app exists.

The command line turns its arguments into `AppOptions`; `app_start` reads the learner's data once through the
workspace and returns an `AppStart`; the app is assembled from that and decides nothing itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drill.cards.model import Problem
from drill.config.settings import Settings, study_settings
from drill.config.study_day import clock_on
from drill.study.choice import check_card, known_topic_names, with_weakest
from drill.study.day_session import SessionAsked, day_session, follows_plan, plan_for_queue
from drill.study.session import DEFAULT_FOCUS_NEW, ReviewSession, study_day
from drill.workspace import Workspace

Clock = Callable[[], dt.datetime]


@dataclass(frozen=True)
class MockAsked:
    """What `drill mock` asked for on the command line: the setup screen opens with it (None: not given).
    `round`: the round asked for with --round (offered first); `quick`: --quick, the quiz format only."""

    minutes: int | None = None
    topics: tuple[str, ...] = ()
    questions: int | None = None
    practice: bool = False
    hard: bool = False
    round: str | None = None
    quick: bool = False


@dataclass(frozen=True)
class AppOptions:
    """The review app's options, as the command line (or a test, or a script) gives them; None: not given.

    `deck_roots` None: the bundled decks alone. `settings` None: the built-in defaults, whatever the settings
    file says. `chosen_day`: --today. `seed` fixes every draw (tests). `mock` opens the mock setup at once.
    """

    data_dir: Path
    deck_roots: Sequence[Path] | None = None
    clock: Clock = dt.datetime.now
    settings: Settings | None = None
    chosen_day: dt.date | None = None
    new_per_day: int | None = None
    day_starts_at: int | None = None
    new_order: str | None = None
    card_id: str | None = None
    cram: bool = False
    topics: Sequence[str] = ()
    weak: int | None = None
    focus_new: int | None = None
    gpu_host: str | None = None
    mock: MockAsked | None = None
    seed: int | None = None


@dataclass(frozen=True)
class StudyChoices:
    """The day's study settings in force: each from a flag, else the settings file, else what an earlier flag
    saved in the database, else the default."""

    new_per_day: int
    rollover_hour: int
    new_order: str
    focus_new: int


@dataclass(frozen=True)
class AppStart:
    """Everything the app opens on, decided: the workspace, the settings in force, the clock (moved to --today's
    study day), the focus, today's session (its queue follows the plan to an interview date) and the problems
    the decks had."""

    workspace: Workspace
    settings: Settings
    study: StudyChoices
    clock: Clock
    today: dt.date
    session: ReviewSession
    focus_topics: tuple[str, ...]
    single_card: str | None
    deck_problems: Sequence[Problem]
    settings_to_save: Mapping[str, str] = field(default_factory=dict)
    gpu_host: str | None = None
    mock: MockAsked | None = None
    seed: int | None = None

    @property
    def data_dir(self) -> Path:
        return self.workspace.data_dir


def app_start(options: AppOptions) -> AppStart:
    """The start `options` make, in one pass over the learner's data: the saved settings and the card states read
    together, every option checked (drill.study.choice.REFUSALS), the focus and today's session
    decided."""
    settings = options.settings if options.settings is not None else Settings()
    workspace = Workspace(
        options.data_dir,
        options.deck_roots,
        settings=settings,
        clock=options.clock,
        today=options.chosen_day,
        day_starts_at=options.day_starts_at,
    )
    saved, states = workspace.saved_settings_and_states()
    given = {"new_per_day": options.new_per_day, "day_starts_at": options.day_starts_at, "new_order": options.new_order}
    new_per_day, rollover, new_order = study_settings(settings, saved, **given)
    clock = clock_on(options.chosen_day, rollover, options.clock)
    today = study_day(clock(), rollover)
    study = StudyChoices(
        new_per_day=new_per_day,
        rollover_hour=rollover,
        new_order=new_order,
        focus_new=DEFAULT_FOCUS_NEW if options.focus_new is None else options.focus_new,
    )
    cards = workspace.cards
    check_card(options.card_id, cards)
    focused = options.card_id is None and bool(options.topics or options.weak or options.cram)
    topics = known_topic_names(options.topics, cards) if focused else []
    weak = options.weak if focused and options.weak else 0
    plan = follows_plan(options.card_id, focused, options.cram)
    # what the day's session needs of the store, read at once; from here on the records are handed down
    reads = workspace.start_reads(today, saved, progress=weak > 0, readiness=plan)
    if reads.progress is not None:
        from drill.study.standing import topic_figures

        topics = with_weakest(topics, topic_figures(cards, reads.progress, today), weak)
    figures = None
    if reads.readiness is not None:
        from drill.study.readiness import readiness_of

        figures = readiness_of(reads.readiness, states, today, new_order=study.new_order, suggest=False)
    planned = plan_for_queue(figures, cards, states, today)
    asked = SessionAsked(
        card_id=options.card_id,
        topics=tuple(topics),
        focused=focused,
        cram=options.cram,
        new_per_day=study.new_per_day,
        new_order=study.new_order,
        focus_new=study.focus_new,
    )
    session = day_session(
        cards,
        states,
        today,
        asked,
        planned=planned,
        graded_today=reads.graded_today,
        max_interval=settings.max_interval_days,
    )
    return AppStart(
        workspace=workspace,
        settings=settings,
        study=study,
        clock=clock,
        today=today,
        session=session,
        focus_topics=tuple(topics),
        single_card=options.card_id,
        deck_problems=workspace.decks.problems,
        settings_to_save={key: str(value) for key, value in given.items() if value is not None},
        gpu_host=options.gpu_host or settings.gpu_host or None,
        mock=options.mock,
        seed=options.seed,
    )
