"""What the review screen says in words: the top bar's countdown to the interview and a card's place, and the
page shown once the queue is empty."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from drill.study.focus import nothing_to_show
from drill.study.sm2 import SAME_DAY_REPEAT_BELOW
from drill.words import counted

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.study.session import ReviewSession


def interview_countdown(date: dt.date | None, today: dt.date) -> str:
    """The top bar's days left: `12 days to the interview`, `interview today`, or '' (no date, or it has passed)."""
    if date is None or date < today:
        return ""
    days = (date - today).days
    if days == 0:
        return "interview today"
    return f"{counted(days, 'day')} to the interview"


def card_place(card: "Card") -> str:
    """The top bar's words for where a card is from: its kind and deck; a kernel card by its name and topic, as
    `drill kernel list` and the kernel screen name it (its deck, "Kernel exercises", holds every kernel card)."""
    kind = card.kind.replace("_", " ")
    if card.kind == "kernel":
        return f"{kind} · {card.id} · {card.topic}"
    return f"{kind} · {card.deck}"


def done_text(session: "ReviewSession") -> str:
    """The review screen's words once the queue is empty: what was done, what is next."""
    upcoming = [
        s.due
        for cid, s in session.states.items()
        if s.due and s.due > session.today and not s.suspended and cid in session.cards
    ]
    scope = f" in {', '.join(session.topics)}" if session.topics else ""
    what = "crammed" if session.cram else "reviewed"
    graded = ""
    if session.saved != session.done:  # the top bar's "grades saved" counts each repeat as well
        graded = f"; {counted(session.saved, 'grade')} saved (a card graded below {SAME_DAY_REPEAT_BELOW} comes back to be graded again)"
    head = f"# All done for today{scope}\n\nYou {what} {counted(session.done, 'card')} this session{graded}.\n\n"
    if session.topics and not session.done:
        head += nothing_to_show(session) + "\n\n"
    if session.held_back:  # the minutes a day the plan was made for are spent
        head += f"Today's minutes are spent: {counted(len(session.held_back), 'card')} wait for tomorrow.\n\n"
    if upcoming:
        nxt = min(upcoming)
        days = (nxt - session.today).days
        when = "tomorrow" if days == 1 else f"in {days} days"
        return head + f"The next card is due **{when}** ({nxt.isoformat()})."
    return head + "No card is scheduled yet."
