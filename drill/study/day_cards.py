"""The day's cards: one function decides them for the plan's "Today", its simulated days and the app's queue.

Same-day repeats come first (the queue puts them there), then the track's due reviews (oldest due
first), the early reviews of the interview's last days (lowest recall on the date first), the new
cards the plan deals that day (in the queue's order), the other decks' due reviews, and last the
top-up of the interview's last days (cards not due, lowest recall on the date first: only the
minutes nothing else wants go to them); each card is taken while its expected seconds (the
learner's pace times the views it is expected to need: a review, and a same-day repeat when graded
below 4) still fit in the minutes left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from drill.study.grades import GradeMix

Card_ = TypeVar("Card_")  # a card as the caller names it: its id in the app, its index in the simulation


@dataclass(frozen=True)
class DayCards(Generic[Card_]):
    """A day's cards in the order the queue asks them, each group taken while it fits in the minutes."""

    due: tuple[Card_, ...]  # the track's due reviews, oldest due first
    early: tuple[Card_, ...]  # brought up before they are due, lowest recall on the date first
    new: tuple[Card_, ...]  # new cards, in the queue's order
    other_due: tuple[Card_, ...]  # due reviews of cards outside the track
    top_up: tuple[Card_, ...]  # not due, asked with the minutes left over in the last days, lowest recall first
    left_over: tuple[Card_, ...]  # due reviews that do not fit today (they wait for tomorrow)
    seconds: float  # expected seconds of what is taken

    @property
    def cards(self) -> tuple[Card_, ...]:
        return self.due + self.early + self.new + self.other_due + self.top_up

    @property
    def reviews(self) -> int:
        return len(self.due) + len(self.early) + len(self.other_due) + len(self.top_up)

    @property
    def ahead(self) -> tuple[Card_, ...]:
        """The cards asked before they are due: the early reviews and the top-up."""
        return self.early + self.top_up


def day_cards(
    due: Sequence[Card_],
    early: Sequence[Card_],
    new: Sequence[Card_],
    other_due: Sequence[Card_],
    cost: Callable[[Card_], float],
    budget_seconds: float,
    top_up: Sequence[Card_] = (),
) -> DayCards[Card_]:
    """The day's cards: each group in turn, each card taken while its expected seconds fit in what is left.

    The first card of the day is taken even when it alone is longer than the minutes (a long
    card would otherwise never come up); once one card does not fit, the day is full.
    """
    spent = 0.0
    taken: list[list[Card_]] = [[], [], [], [], []]
    left_over: list[Card_] = []
    full = False
    for group, cards in enumerate((due, early, new, other_due, top_up)):
        for at, card in enumerate(cards):
            if full:  # nothing more is taken: the due reviews left wait for tomorrow, uncosted
                if group in (0, 3):
                    left_over.extend(cards[at:])
                break
            seconds = cost(card)
            if spent + seconds <= budget_seconds or not any(taken):
                taken[group].append(card)
                spent += seconds
                continue
            full = True
            if group in (0, 3):
                left_over.append(card)
    return DayCards(
        tuple(taken[0]), tuple(taken[1]), tuple(taken[2]), tuple(taken[3]), tuple(taken[4]), tuple(left_over), spent
    )


def expected_views(recall: float | None, grades: GradeMix) -> float:
    """Views a card is expected to need today: a new card (`recall` None) or a review, with its same-day repeat."""
    if recall is None:
        return 1 + grades.first_repeat_share()
    return 1 + (1 - recall) + recall * grades.recalled_repeat_share()
