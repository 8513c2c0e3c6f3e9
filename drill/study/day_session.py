"""Today's review session, decided from what the start read: one card, some topics, the plan's day, or the
day's queue. Pure: the card states, the plan and today's grades are handed in; nothing here reads the store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drill.cards.model import Card
from drill.study.focus import focused_queue
from drill.study.records import CardState
from drill.study.session import (
    DEFAULT_FOCUS_NEW,
    DEFAULT_NEW_ORDER,
    DEFAULT_NEW_PER_DAY,
    ReviewSession,
    build_queue,
    out_of_queues,
)
from drill.study.sm2 import DEFAULT_MAX_INTERVAL

# the planner's modules are imported where a plan is made: a start without an interview date needs none of them
if TYPE_CHECKING:
    from drill.study.readiness import ReadinessFigures


@dataclass(frozen=True)
class PlannedDay:
    """The day's queue as the plan decides it, its cards asked before they are due (early reviews and top-up), and
    the seconds of the budget still left."""

    queue: list[str]
    early: tuple[str, ...]
    budget_left_seconds: float


def planned_day(
    figures: ReadinessFigures, cards: Mapping[str, object], states: Mapping[str, CardState], today: dt.date
) -> PlannedDay:
    """Today's repeats, then the plan's list for today less what is done or set aside.

    The plan's list (drill.study.day_cards) holds the track's due reviews, the early ones, the new cards, the
    other decks' due reviews and, in the last days, the top-up, as many as fit in the minutes given; the minutes
    already spent today are taken off the day's budget."""
    assert figures.plan is not None
    repeats = [
        card_id
        for card_id, state in states.items()
        if state.repeat_pending and state.last_review_day == today and not out_of_queues(state, today)
    ]
    listed = figures.plan.today_cards
    rest = []
    for card_id in listed.cards:
        state = states.get(card_id)
        if card_id not in cards or card_id in repeats:
            continue
        if state is not None and (out_of_queues(state, today) or state.last_review_day == today):
            continue
        if card_id in listed.new and state is not None and not state.is_new:
            continue
        rest.append(card_id)
    budget = figures.interview.minutes_per_day * 60 - figures.spent_today_seconds
    early = tuple(card_id for card_id in listed.ahead if card_id in rest)
    return PlannedDay([*(r for r in repeats if r in cards), *rest], early, max(0.0, budget))


def plan_for_queue(
    figures: ReadinessFigures | None, cards: Mapping[str, object], states: Mapping[str, CardState], today: dt.date
) -> PlannedDay | None:
    """The day's queue when it follows the plan to the interview date; None without a plan (no date, the date
    passed, or the interview is today)."""
    if figures is None or figures.plan is None:
        return None
    return planned_day(figures, cards, states, today)


@dataclass(frozen=True)
class SessionAsked:
    """What the day's session is for: one card (`card_id`), some topics (`focused` or `cram`), or the day's queue;
    and the study settings in force."""

    card_id: str | None = None
    topics: tuple[str, ...] = ()
    focused: bool = False
    cram: bool = False
    new_per_day: int = DEFAULT_NEW_PER_DAY
    new_order: str = DEFAULT_NEW_ORDER
    focus_new: int = DEFAULT_FOCUS_NEW


def day_session(
    cards: Mapping[str, Card],
    states: dict[str, CardState],
    today: dt.date,
    asked: SessionAsked,
    *,
    planned: PlannedDay | None,
    graded_today: dict[str, int],
    max_interval: int = DEFAULT_MAX_INTERVAL,
) -> ReviewSession:
    """A review session on study day `today`. The new cards a restart shows are the same: their order is seeded
    with the day. `planned`: the plan's day (`plan_for_queue`), which the day's queue follows when there is one;
    `graded_today`: how many times each card was graded today (drill.store.reader.reviews_on)."""
    seed = today.toordinal()
    early: tuple[str, ...] = ()
    budget: float | None = None
    if asked.card_id is not None:
        queue = [asked.card_id]
    elif asked.focused or asked.cram:
        queue = focused_queue(
            cards.values(),
            states,
            today,
            asked.topics,
            cram=asked.cram,
            focus_new=asked.focus_new,
            new_order=asked.new_order,
            seed=seed,
        )
    elif planned is not None:
        queue = planned.queue
        early = planned.early
        budget = planned.budget_left_seconds
    else:
        new_done = sum(1 for s in states.values() if s.introduced_on == today)
        queue = build_queue(
            cards.values(),
            states,
            today,
            new_limit=asked.new_per_day,
            new_done_today=new_done,
            new_order=asked.new_order,
            seed=seed,
        )
    return ReviewSession(
        cards=cards,
        states=states,
        queue=queue,
        today=today,
        cram=asked.cram,
        topics=asked.topics,
        max_interval=max_interval,
        focus_new=asked.focus_new,
        early=frozenset(early),
        budget_seconds=budget,
        graded_today=graded_today,
    )


def follows_plan(card_id: str | None, focused: bool, cram: bool) -> bool:
    """Whether the session asked for is the day's queue, which follows the plan to an interview date when there is
    one (neither one card nor some topics)."""
    return card_id is None and not (focused or cram)
