"""The review's commands by name in the command palette (ctrl+p): each says its key, where it has one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from textual.app import SystemCommand

from drill.ui.screen_text import markup_text

if TYPE_CHECKING:
    from drill.cards.model import Card


class Reviewing(Protocol):
    """What the palette asks of the review screen: the card shown, whether its answer is, and the commands."""

    @property
    def card(self) -> Card | None: ...

    revealed: bool

    async def reveal_or_check(self) -> None: ...
    async def action_suspend(self) -> None: ...
    async def action_bury(self) -> None: ...
    async def action_undo(self) -> None: ...
    def action_open_mock(self) -> None: ...
    def action_open_stats(self) -> None: ...
    def action_open_browser(self) -> None: ...
    def ask_for_practice(self, topics: tuple[str, ...] = (), weak: int | None = None, cram: bool = False) -> None: ...


def review_commands(screen: Reviewing) -> Iterator[SystemCommand]:
    """What the palette offers on the review screen: the card's own commands while one is shown, then undo, the
    other screens and focused practice."""
    if screen.card is not None:
        if not screen.revealed:
            yield SystemCommand(
                "Reveal / check",
                "Show the answer (a form is checked as it stands; a diagnosis once a reading is chosen)",
                screen.reveal_or_check,
            )
        yield SystemCommand("Suspend card (ctrl+s)", "Take this card out of every queue", screen.action_suspend)
        yield SystemCommand("Bury card (ctrl+t)", "Hide this card until tomorrow", screen.action_bury)
    yield SystemCommand("Undo (ctrl+z)", "Take back the last grade, suspension or burial", screen.action_undo)
    yield SystemCommand(
        "Mock interview (ctrl+o)", "A timed mock built from your weakest topics", screen.action_open_mock
    )
    yield SystemCommand("Stats (ctrl+g)", "Weak topics, heatmap, forecast, mocks", screen.action_open_stats)
    yield SystemCommand("Find cards (ctrl+f)", "Search every card; unsuspend; practise one", screen.action_open_browser)
    yield SystemCommand(
        "Practise your weakest topics",
        "Today's cards of the 3 weakest topics",
        lambda: screen.ask_for_practice(weak=3),
    )
    yield SystemCommand(
        "Cram your weakest topics",
        "Every card of the 3 weakest topics, hardest first; the schedule is left alone",
        lambda: screen.ask_for_practice(weak=3, cram=True),
    )
    yield SystemCommand(
        "Cram everything", "Every card seen so far, hardest first", lambda: screen.ask_for_practice(cram=True)
    )
    if screen.card is not None:
        topic = screen.card.topic
        yield SystemCommand(
            f"Practise this topic ({markup_text(topic)})",  # the palette reads a title as markup
            "Today's cards of this card's topic",
            lambda: screen.ask_for_practice((topic,)),
        )
