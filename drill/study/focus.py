"""Focused practice: the queue of some topics (--topic, --weak, the palette), and why it shows no card."""

from __future__ import annotations

import datetime as dt
from typing import Iterable, Mapping

from drill.cards.model import Card
from drill.study.records import CardState
from drill.study.session import DEFAULT_FOCUS_NEW, DEFAULT_NEW_ORDER, ReviewSession, build_queue, out_of_queues


def focused_queue(
    cards: Iterable[Card],
    states: Mapping[str, CardState],
    today: dt.date,
    topics: Iterable[str],
    *,
    cram: bool = False,
    focus_new: int = DEFAULT_FOCUS_NEW,
    new_order: str = DEFAULT_NEW_ORDER,
    seed: int | str | None = None,
) -> list[str]:
    """The queue for practice on some topics (all topics when `topics` is empty).

    Scheduled (not cram): today's queue restricted to those topics, with up to `focus_new`
    of their new cards a study day (those of these topics introduced today count), whether
    or not the day's new-card limit is spent: the learner asked for these topics. They
    count toward that limit for the rest of the day.
    Cram: every card of those topics that is not suspended, whether due or not, the
    hardest first (most lapses, then lowest ease, then soonest due), then the unseen
    ones; the session logs these as cram and leaves the schedule alone.
    """
    wanted = set(topics)
    chosen = [c for c in cards if not wanted or c.topic in wanted]
    if not cram:
        introduced = [states[c.id].introduced_on for c in chosen if c.id in states]
        new_done = introduced.count(today)
        return build_queue(
            chosen,
            states,
            today,
            new_limit=focus_new,
            new_done_today=new_done,
            new_order=new_order,
            seed=seed,
        )
    seen: list[tuple[int, float, dt.date, str]] = []
    unseen: list[str] = []
    for card in chosen:
        state = states.get(card.id)
        if state is not None and state.suspended:
            continue
        if state is None or state.is_new:
            unseen.append(card.id)
        else:
            seen.append((-state.lapses, state.sm2.ef, state.due or today, card.id))
    seen.sort()
    return [cid for *_, cid in seen] + unseen


def nothing_to_show(session: ReviewSession) -> str:
    """Why a session on some topics (session.topics) had no card to show, and the command that shows some."""
    names = ", ".join(session.topics)
    again = " ".join(f"--topic {t}" for t in session.topics)
    cram = f"To go over them anyway, without touching the schedule: `drill {again} --cram`."
    states = [session.state_of(cid) for cid, card in session.cards.items() if card.topic in session.topics]
    introduced = sum(1 for s in states if s.introduced_on == session.today)
    waiting = sum(1 for s in states if s.is_new and not out_of_queues(s, session.today))
    if session.cram or not waiting:
        return f"Nothing in {names} is due or new today. {cram}"
    if session.focus_new == 0:
        held_back = "`--focus-new 0` lets a focused session introduce none"
    else:
        held_back = (
            f"{introduced} came in today and a focused session introduces at most {session.focus_new} a day"
            f" (`--focus-new {session.focus_new}`)"
        )
    more = f"`drill {again} --focus-new {introduced + DEFAULT_FOCUS_NEW}`"
    return f"Nothing in {names} is due today. {waiting} of its cards are new, but {held_back}. For more: {more}. {cram}"
