"""Today's queue and a review session: what to show next and what a grade does."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Protocol

from drill.cards.model import Card
from drill.sm2 import PASSING, SAME_DAY_REPEAT_BELOW, review
from drill.store.records import CardState

DEFAULT_NEW_PER_DAY = 10
DEFAULT_ROLLOVER_HOUR = 4
LEECH_LAPSES = 8
REPEAT_GAP = 3  # a card graded below 4 comes back after this many other cards


def study_day(now: dt.datetime, rollover_hour: int = DEFAULT_ROLLOVER_HOUR) -> dt.date:
    """The day a review counts for: before `rollover_hour` local time it is still yesterday."""
    return (now - dt.timedelta(hours=rollover_hour)).date()


def build_queue(
    cards: Iterable[Card],
    states: Mapping[str, CardState],
    today: dt.date,
    *,
    new_limit: int = DEFAULT_NEW_PER_DAY,
    new_done_today: int = 0,
) -> list[str]:
    """Today's card ids: same-day repeats, then due cards (oldest due first), then new ones up to the limit."""
    repeats: list[str] = []
    due: list[tuple[dt.date, str]] = []
    new: list[str] = []
    for card in cards:
        state = states.get(card.id)
        if state is not None and (state.suspended or (state.buried_until and state.buried_until > today)):
            continue
        if state is None or state.is_new:
            new.append(card.id)
        elif state.repeat_pending and state.last_review_day == today:
            repeats.append(card.id)
        elif state.sm2.due is not None and state.sm2.due <= today:
            due.append((state.sm2.due, card.id))
    due.sort()
    room = max(0, new_limit - new_done_today)
    return repeats + [cid for _, cid in due] + new[:room]


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
        answer: dict[str, Any] | None = None,
        content_hash: str | None = None,
    ) -> int: ...
    def undo_review(self, log_id: int) -> CardState: ...
    def set_suspended(self, state: CardState, suspended: bool) -> None: ...
    def bury(self, state: CardState, until: dt.date) -> None: ...


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


@dataclass
class ReviewSession:
    """Today's queue in memory; every change goes straight to the store."""

    cards: Mapping[str, Card]
    states: dict[str, CardState]
    queue: list[str]
    today: dt.date
    done: int = 0
    history: list[Graded] = field(default_factory=list)

    @property
    def current(self) -> Card | None:
        return self.cards[self.queue[0]] if self.queue else None

    @property
    def left(self) -> int:
        return len(self.queue)

    def state_of(self, card_id: str) -> CardState:
        return self.states.get(card_id) or CardState(card_id)

    def grade(
        self,
        store: ReviewWriter,
        grade: int,
        *,
        now: dt.datetime,
        duration_ms: int = 0,
        answer: dict[str, Any] | None = None,
        mode: str = "review",
    ) -> Graded:
        """Grade the current card. The first grade of the day runs SM-2; later ones are same-day repeats."""
        if not self.queue:
            raise IndexError("no card to grade")
        card_id = self.queue[0]
        before = self.state_of(card_id)
        after = replace(before)
        is_repeat = before.last_review_day == self.today and before.repeat_pending
        if is_repeat:
            mode = "repeat"
        else:
            after.sm2 = review(before.sm2, grade, self.today)
            if grade < PASSING and before.sm2.repetitions > 0:
                after.lapses = before.lapses + 1
            after.leech = before.leech or after.lapses >= LEECH_LAPSES
            if before.introduced_on is None:
                after.introduced_on = self.today
        after.last_review_day = self.today
        after.repeat_pending = grade < SAME_DAY_REPEAT_BELOW
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
        )
        self.states[card_id] = after
        self.queue.pop(0)
        position = min(REPEAT_GAP, len(self.queue))
        if after.repeat_pending:
            self.queue.insert(position, card_id)
        else:
            self.done += 1
        graded = Graded(card_id, log_id, before, after, position, after.repeat_pending, mode)
        self.history.append(graded)
        return graded

    def undo(self, store: ReviewWriter) -> Graded | None:
        """Take back the last grade: the state before it returns and the log row goes."""
        if not self.history:
            return None
        last = self.history.pop()
        restored = store.undo_review(last.log_id)
        self.states[last.card_id] = restored
        if last.repeat_scheduled:
            if last.card_id in self.queue:
                self.queue.remove(last.card_id)
        else:
            self.done -= 1
        self.queue.insert(0, last.card_id)
        return last

    def suspend(self, store: ReviewWriter) -> str | None:
        if not self.queue:
            return None
        card_id = self.queue.pop(0)
        state = self.state_of(card_id)
        store.set_suspended(state, True)
        self.states[card_id] = state
        return card_id

    def bury(self, store: ReviewWriter) -> str | None:
        """Hide the current card until the next study day."""
        if not self.queue:
            return None
        card_id = self.queue.pop(0)
        state = self.state_of(card_id)
        store.bury(state, self.today + dt.timedelta(days=1))
        self.states[card_id] = state
        return card_id
