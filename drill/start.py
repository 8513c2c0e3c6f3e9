"""What `drill` opens on: the review app's options, checked, and the start they make (the session, the focus,
the plan, the deck problems), decided before the app exists.

The command line turns its arguments into `AppOptions`; `app_start` reads the learner's data once through the
workspace and returns an `AppStart`; the app is assembled from that and decides nothing itself.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from drill.cards.model import Card, Problem
from drill.config.settings import Settings, study_settings
from drill.config.study_day import clock_on
from drill.study.session import DEFAULT_FOCUS_NEW, MOCK_ONLY_KINDS, ReviewSession, study_day
from drill.workspace import Workspace

Clock = Callable[[], dt.datetime]


class UnknownCard(LookupError):
    """`drill --card ID` named a card that no deck defines."""

    def __init__(self, card_id: str, cards: Iterable[str]) -> None:
        close = difflib.get_close_matches(card_id, list(cards), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        super().__init__(f"no card {card_id!r} in the decks{hint}")


class MockOnlyCard(LookupError):
    """`drill --card ID` named a card asked only in a mock round (a scenario): on its own it has no answer form, and
    a key typed at it would reveal and grade it."""

    def __init__(self, card_id: str, kind: str) -> None:
        super().__init__(
            f"{card_id!r} is a {kind} card, asked in stages in a mock round (`drill mock --round`), not on its own"
        )


class UnknownTopic(LookupError):
    """`drill --topic T` named a topic that has no cards."""

    def __init__(self, topic: str, topics: Iterable[str]) -> None:
        known = sorted(set(topics))
        close = difflib.get_close_matches(topic.lower(), known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else f" (topics: {', '.join(known)})"
        super().__init__(f"no cards in topic {topic!r}{hint}")


# What a start can refuse, each with a one-line message for the command line.
START_REFUSALS = (UnknownCard, MockOnlyCard, UnknownTopic)


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
    """The start `options` make: the decks and the learner's data read once, every option checked (UnknownCard,
    MockOnlyCard, UnknownTopic), the focus and today's session decided."""
    settings = options.settings if options.settings is not None else Settings()
    workspace = Workspace(
        options.data_dir,
        options.deck_roots,
        settings=settings,
        clock=options.clock,
        today=options.chosen_day,
        day_starts_at=options.day_starts_at,
    )
    cards = workspace.cards
    _check_card(options.card_id, cards)
    given = {"new_per_day": options.new_per_day, "day_starts_at": options.day_starts_at, "new_order": options.new_order}
    new_per_day, rollover, new_order = study_settings(settings, workspace.saved_settings(), **given)
    study = StudyChoices(
        new_per_day=new_per_day,
        rollover_hour=rollover,
        new_order=new_order,
        focus_new=DEFAULT_FOCUS_NEW if options.focus_new is None else options.focus_new,
    )
    clock = clock_on(options.chosen_day, rollover, options.clock)
    today = study_day(clock(), rollover)
    focused = options.card_id is None and bool(options.topics or options.weak or options.cram)
    topics: list[str] = []
    if focused:
        topics = with_weakest(workspace, today, known_topic_names(options.topics, cards), options.weak or 0)
    session = workspace.review_session(
        today,
        card_id=options.card_id,
        topics=topics,
        focused=focused,
        cram=options.cram,
        new_per_day=study.new_per_day,
        new_order=study.new_order,
        focus_new=study.focus_new,
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


def _check_card(card_id: str | None, cards: Mapping[str, Card]) -> None:
    """--card names a card of the decks that can be asked on its own."""
    if card_id is None:
        return
    if card_id not in cards:
        raise UnknownCard(card_id, cards)
    if cards[card_id].kind in MOCK_ONLY_KINDS:
        raise MockOnlyCard(card_id, cards[card_id].kind)


def known_topic_names(topics: Iterable[str], cards: Mapping[str, Card]) -> list[str]:
    """--topic names as the decks spell them (MEMORY-ACCOUNTING is memory-accounting), each once; UnknownTopic for
    a topic with no cards."""
    known = {card.topic for card in cards.values()}
    by_lower = {topic.lower(): topic for topic in known}
    named = [topic if topic in known else by_lower.get(topic.lower(), topic) for topic in topics]
    for topic in named:
        if topic not in known:
            raise UnknownTopic(topic, known)
    return list(dict.fromkeys(named))


def with_weakest(workspace: Workspace, today: dt.date, topics: Sequence[str], weak: int) -> list[str]:
    """`topics`, then the `weak` weakest topics not among them (--weak N, and practice asked from a screen)."""
    chosen = list(topics)
    if weak <= 0:
        return chosen
    from drill.study.standing import weakest

    ranked = weakest(workspace.weakness(today), weak + len(chosen))
    return chosen + [topic for topic in ranked if topic not in chosen][:weak]
