"""Today's queue and a review session: what to show next and what a grade does."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Protocol, Sequence, runtime_checkable

from drill.cards.model import Card
from drill.study.records import CardFacts, CardState
from drill.study.scheduling import (
    EARLY,
    PARAMETERS_SETTING,
    SETTING,
    Scheduler,
    after_grade,
    saved_parameters,
    saved_scheduler,
    scheduler_named,
)
from drill.study.sm2 import DEFAULT_MAX_INTERVAL, SAME_DAY_REPEAT_BELOW

DEFAULT_NEW_PER_DAY = 10
DEFAULT_FOCUS_NEW = 10  # new cards of the chosen topics a focused session may introduce a day (drill.study.focus)
DEFAULT_ROLLOVER_HOUR = 4
NEW_ORDERS = ("lab", "random", "deck")  # how new cards are introduced; see build_queue
DEFAULT_NEW_ORDER = "lab"
REPEAT_GAP = 3  # a card graded below 4 comes back after this many other cards


def study_day(now: dt.datetime, rollover_hour: int = DEFAULT_ROLLOVER_HOUR) -> dt.date:
    """The day a review counts for: before `rollover_hour` local time it is still yesterday."""
    return (now - dt.timedelta(hours=rollover_hour)).date()


def new_card_order(new: Sequence[CardFacts], order: str, seed: int | str | None) -> list[str]:
    """New card ids in the order they are introduced (see build_queue's `new_order`)."""
    if order == "deck":
        return [card.id for card in new]
    if order == "random":
        import random

        salt = str(random.getrandbits(64) if seed is None else seed)

        def draw(card: CardFacts) -> tuple[bytes, str]:
            return hashlib.blake2b(f"{salt}\0{card.id}".encode(), digest_size=8).digest(), card.id

        return [card.id for card in sorted(new, key=draw)]
    from itertools import zip_longest

    from drill.cards.loader import known_topics

    topics = list(known_topics().items())
    ranked = sorted((t["lab"], i) for i, (_, t) in enumerate(topics) if t.get("lab") is not None)
    ranked += [(None, i) for i, (_, t) in enumerate(topics) if t.get("lab") is None]
    rank = {topics[i][0]: r for r, (_, i) in enumerate(ranked)}
    by_topic: dict[str, list[CardFacts]] = {}
    for card in new:
        by_topic.setdefault(card.topic, []).append(card)
    # Topics missing from the topic list (only possible for hand-made cards) come last.
    ordered = sorted(by_topic, key=lambda t: rank.get(t, len(rank)))
    rounds = zip_longest(*(_kinds_in_turn(by_topic[t], turn) for turn, t in enumerate(ordered)))
    return [cid for one_round in rounds for cid in one_round if cid is not None]


# Within a topic the kinds take turns, each topic starting one kind further on, so that the first day's
# cards are not all concepts (most topics open with one); kernel cards, which want a GPU, come last.
KIND_TURNS = ("concept", "diagnosis", "memory_ledger", "shape_trace")


def _kinds_in_turn(cards: list[CardFacts], turn: int) -> list[str]:
    """A topic's card ids, kinds in turn from KIND_TURNS[turn], each kind's cards in deck order."""
    from itertools import zip_longest

    by_kind: dict[str, list[str]] = {}
    for card in cards:
        by_kind.setdefault(card.kind, []).append(card.id)

    def place(kind: str) -> int:
        if kind not in KIND_TURNS:
            return len(KIND_TURNS) + (kind == "kernel")
        return (KIND_TURNS.index(kind) - turn) % len(KIND_TURNS)

    kinds = sorted(by_kind, key=place)
    turns = [by_kind[k] for k in kinds if k in KIND_TURNS]
    rest = [cid for k in kinds if k not in KIND_TURNS for cid in by_kind[k]]
    return [cid for one_round in zip_longest(*turns) for cid in one_round if cid is not None] + rest


# Card kinds asked only in a mock round (a scenario is a 40-minute problem), never in the day's queue.
MOCK_ONLY_KINDS = ("scenario",)


def out_of_queues(state: CardState, today: dt.date) -> bool:
    """Suspended, or buried past `today`: in no queue today."""
    return state.suspended or (state.buried_until is not None and state.buried_until > today)


def build_queue(
    cards: Iterable[Card],
    states: Mapping[str, CardState],
    today: dt.date,
    *,
    new_limit: int = DEFAULT_NEW_PER_DAY,
    new_done_today: int = 0,
    new_order: str = DEFAULT_NEW_ORDER,
    seed: int | str | None = None,
) -> list[str]:
    """Today's card ids: same-day repeats, then due cards (oldest due first), then new ones up to the limit.

    `new_order` picks which new cards come first:
      lab     one card per topic in turn, topics in the order of the labs, then the
              topics without a lab in the topic list's order; within a topic the card kinds
              take turns (KIND_TURNS), kernel cards last, each kind's cards in deck order
      random  a shuffle fixed by `seed`: the same seed gives the same cards (pass one
              made from the study day so a restart shows the same new cards)
      deck    the order the cards come in (deck files alphabetically, cards top to bottom)
    """
    if new_order not in NEW_ORDERS:
        raise ValueError(f"unknown new-card order {new_order!r} (choose from {', '.join(NEW_ORDERS)})")
    repeats: list[str] = []
    due: list[tuple[dt.date, str]] = []
    new: list[Card] = []
    # Today's plan of new cards is drawn from the cards still new and those introduced today, so that a
    # restart mid-day keeps it (the lab order deals topics in turns: drawn from the rest alone, it would
    # start a fresh round and put another card where the next planned one was).
    pool: list[Card] = []
    for card in cards:
        if card.kind in MOCK_ONLY_KINDS:
            continue
        state = states.get(card.id)
        if state is not None and state.introduced_on == today:
            pool.append(card)
        if state is not None and out_of_queues(state, today):
            continue
        if state is None or state.is_new:
            new.append(card)
            pool.append(card)
        elif state.repeat_pending and state.last_review_day == today:
            repeats.append(card.id)
        elif state.due is not None and state.due <= today:
            due.append((state.due, card.id))
    due.sort()
    room = max(0, new_limit - new_done_today)
    fresh: list[str] = []
    if room and new:
        still_new = {card.id for card in new}
        fresh = [cid for cid in new_card_order(pool, new_order, seed) if cid in still_new][:room]
    return repeats + [cid for _, cid in due] + fresh


class ReviewWriter(Protocol):
    """What a session needs from the store (the real Store, or a fake in tests)."""

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
        answer: dict[str, object] | None = None,
        content_hash: str | None = None,
        topic: str | None = None,
    ) -> int: ...
    def undo_review(self, log_id: int) -> CardState: ...
    def set_suspended(self, state: CardState, suspended: bool) -> None: ...
    def bury(self, state: CardState, until: dt.date | None) -> None: ...


@runtime_checkable
class SettingReader(Protocol):
    """A store that can tell which scheduler is active (the real Store can)."""

    def get_setting(self, key: str, default: str | None = None) -> str | None: ...


@dataclass
class Graded:
    """The outcome of one grade, enough to undo it."""

    card_id: str
    log_id: int
    before: CardState
    after: CardState
    position: int
    repeat_scheduled: bool
    mode: str
    duration_ms: int = 0


@dataclass
class SetAside:
    """A card suspended or buried during the session, enough to undo it."""

    card_id: str
    how: str  # "suspend" or "bury"
    before: CardState


def draw_seed(card_id: str, state: CardState, today: dt.date, salt: int | None = None, graded_today: int = 0) -> int:
    """A seed for what a review draws (ledger numbers, choice order).

    It depends on the card, the study day, the card's state before this review and how many
    times the card was graded today, so every showing draws anew (a same-day repeat or a
    cram grade leaves the state as it was) while an undo or a restart shows the same draw again.
    """
    blob = json.dumps([card_id, today.isoformat(), state.as_json(), salt, graded_today], sort_keys=True)
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")


@dataclass
class ReviewSession:
    """Today's queue in memory; every change goes straight to the store.

    In a cram session grades are logged but the schedule is left as it was.
    `scheduler` names the active scheduler (sm2 or fsrs); None reads the saved setting
    from the store at the first grade.
    """

    cards: Mapping[str, Card]
    states: dict[str, CardState]
    queue: list[str]
    today: dt.date
    done: int = 0
    history: list[Graded | SetAside] = field(default_factory=list)
    cram: bool = False
    topics: tuple[str, ...] = ()  # the topics this queue was built for (--topic, --weak); empty: every topic
    saved: int = 0  # grades written this session (less any undone)
    scheduler: str | None = None
    max_interval: int = DEFAULT_MAX_INTERVAL  # days; the settings file's max_interval_days
    focus_new: int = DEFAULT_FOCUS_NEW  # what drill.study.focus.focused_queue was given, for the words when it is empty
    # cards in the queue although not due: in the interview's last days, those below target on the date and
    # those topping up the minutes left; their first grade of the day is logged as EARLY (a review FSRS and
    # retention count like any other)
    early: frozenset[str] = frozenset()
    # FSRS's parameters fitted to the learner; None: the defaults (read from the store with the scheduler)
    fsrs_parameters: tuple[float, ...] | None = None
    # the seconds of the day's minutes still left when the session began (a plan to an interview date sets
    # it); once the graded views have taken them, the rest of the queue waits for tomorrow (`held_back`)
    budget_seconds: float | None = None
    spent_seconds: float = 0.0
    held_back: list[str] = field(default_factory=list)
    # how many times each card was graded on `today`, any mode (read from the log: drill.store.reader.reviews_on)
    graded_today: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hold_back_past_budget()

    @property
    def budget_reached(self) -> bool:
        return self.budget_seconds is not None and self.spent_seconds >= self.budget_seconds

    def hold_back_past_budget(self) -> None:
        """Once the day's minutes are spent, the rest of the queue waits for tomorrow."""
        if self.budget_reached and self.queue:
            self.held_back = self.queue + self.held_back
            self.queue = []

    @property
    def current(self) -> Card | None:
        return self.cards[self.queue[0]] if self.queue else None

    @property
    def left(self) -> int:
        return len(self.queue)

    def state_of(self, card_id: str) -> CardState:
        return self.states.get(card_id) or CardState(card_id)

    def seed_for(self, card_id: str, salt: int | None = None) -> int:
        return draw_seed(card_id, self.state_of(card_id), self.today, salt, self.graded_today.get(card_id, 0))

    def grade(
        self,
        store: ReviewWriter,
        grade: int,
        *,
        now: dt.datetime,
        duration_ms: int = 0,
        answer: dict[str, object] | None = None,
        mode: str = "review",
    ) -> Graded:
        """Grade the current card: the day's first grade runs the active scheduler; later ones are same-day repeats."""
        if not self.queue:
            raise IndexError("no card to grade")
        card_id = self.queue[0]
        before = self.state_of(card_id)
        is_repeat = before.last_review_day == self.today and before.repeat_pending
        if self.cram:
            mode = "cram"
        elif is_repeat:
            mode = "repeat"
        elif mode == "review" and card_id in self.early:
            mode = EARLY
        after = after_grade(self.active_scheduler(store), before, grade, self.today, mode)
        if not self.cram:
            after.changed = False
        log_id = store.record_review(
            before,
            after,
            grade=grade,
            at=now,
            day=self.today,
            duration_ms=duration_ms,
            mode=mode,
            answer=answer,
            content_hash=self.cards[card_id].content_hash,
            topic=self.cards[card_id].topic,
        )
        self.states[card_id] = after
        self.graded_today[card_id] = self.graded_today.get(card_id, 0) + 1
        self.saved += 1
        self.queue.pop(0)
        position = min(REPEAT_GAP, len(self.queue))
        again = grade < SAME_DAY_REPEAT_BELOW
        if again:
            self.queue.insert(position, card_id)
        else:
            self.done += 1
        graded = Graded(card_id, log_id, before, after, position, again, mode, duration_ms)
        self.history.append(graded)
        self.spent_seconds += duration_ms / 1000
        self.hold_back_past_budget()
        return graded

    def active_scheduler(self, store: object) -> Scheduler:
        """The scheduler this session grades with, read once from the store's saved setting unless given."""
        if self.scheduler is None:
            saved: dict[str, str] = {}
            if isinstance(store, SettingReader):
                saved = {key: store.get_setting(key) or "" for key in (SETTING, PARAMETERS_SETTING)}
            self.scheduler = saved_scheduler(saved)
            self.fsrs_parameters = saved_parameters(saved)
        return scheduler_named(self.scheduler, self.max_interval, self.fsrs_parameters)

    def undo(self, store: ReviewWriter) -> Graded | SetAside | None:
        """Take back the last grade, suspension or burial: the state before it returns and the card is shown again."""
        if not self.history:
            return None
        last = self.history.pop()
        if isinstance(last, SetAside):
            before = last.before
            if last.how == "suspend":
                store.set_suspended(replace(before), before.suspended)
            else:
                store.bury(replace(before), before.buried_until)
            self.states[last.card_id] = before
            self.queue.insert(0, last.card_id)
            return last
        restored = store.undo_review(last.log_id)
        self.states[last.card_id] = restored
        self.graded_today[last.card_id] = max(0, self.graded_today.get(last.card_id, 0) - 1)
        self.saved -= 1
        self.spent_seconds -= last.duration_ms / 1000
        if self.held_back and not self.budget_reached:
            self.queue.extend(self.held_back)
            self.held_back = []
        if last.repeat_scheduled:
            if last.card_id in self.queue:
                self.queue.remove(last.card_id)
        else:
            self.done -= 1
        self.queue.insert(0, last.card_id)
        return last

    def suspend(self, store: ReviewWriter) -> str | None:
        """Take the current card out of every queue until it is unsuspended."""
        return self._set_aside(store, "suspend")

    def bury(self, store: ReviewWriter) -> str | None:
        """Hide the current card until the next study day."""
        return self._set_aside(store, "bury")

    def _set_aside(self, store: ReviewWriter, how: str) -> str | None:
        if not self.queue:
            return None
        card_id = self.queue.pop(0)
        before = self.state_of(card_id)
        state = replace(before)
        if how == "suspend":
            store.set_suspended(state, True)
        else:
            store.bury(state, self.today + dt.timedelta(days=1))
        self.states[card_id] = state
        self.history.append(SetAside(card_id, how, before))
        return card_id
