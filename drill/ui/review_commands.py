"""The review screen's commands that open other things: the palette, mocks, stats, the browser, kernel cards.

Mixed into ReviewScreen. Each posts a message the app routes (drill.ui.routes),
except the kernel editor, which the screen opens itself with the app's judge.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand

from drill.focus import nothing_to_show

if TYPE_CHECKING:
    from drill.cards.model import Card


class ReviewCommands:
    """What ReviewScreen offers beyond answering and grading."""

    # provided by ReviewScreen / textual.Screen
    card: Any
    revealed: bool
    locked: str | None
    practice: Any
    app: Any
    post_message: Any
    action_suspend: Any
    action_bury: Any
    action_undo: Any
    action_grade: Any
    reveal_or_check: Any
    ready_store: Any

    def palette_commands(self) -> Iterator[SystemCommand]:
        """The review's commands by name in the command palette (ctrl+p)."""
        if self.card is not None:
            if not self.revealed:
                yield SystemCommand(
                    "Reveal / check",
                    "Show the answer (a form is checked as it stands; a diagnosis once a reading is chosen)",
                    self.reveal_or_check,
                )
            yield SystemCommand("Suspend card (ctrl+s)", "Take this card out of every queue", self.action_suspend)
            yield SystemCommand("Bury card (ctrl+t)", "Hide this card until tomorrow", self.action_bury)
        yield SystemCommand("Undo (ctrl+z)", "Take back the last grade, suspension or burial", self.action_undo)
        yield SystemCommand(
            "Mock interview (ctrl+o)", "A timed mock built from your weakest topics", self.action_open_mock
        )
        yield SystemCommand("Stats (ctrl+g)", "Weak topics, heatmap, forecast, mocks", self.action_open_stats)
        yield SystemCommand(
            "Find cards (ctrl+f)", "Search every card; unsuspend; practise one", self.action_open_browser
        )
        yield SystemCommand(
            "Practise your weakest topics", "Today's cards of the 3 weakest topics", lambda: self.practise(weak=3)
        )
        yield SystemCommand(
            "Cram your weakest topics",
            "Every card of the 3 weakest topics, hardest first; the schedule is left alone",
            lambda: self.practise(weak=3, cram=True),
        )
        yield SystemCommand(
            "Cram everything", "Every card seen so far, hardest first", lambda: self.practise(cram=True)
        )
        if self.card is not None:
            topic = self.card.topic
            yield SystemCommand(
                f"Practise this topic ({topic})", "Today's cards of this card's topic", lambda: self.practise((topic,))
            )

    # The messages load with the first of them (the review's first paint does without them).
    def practise(self, topics: tuple[str, ...] = (), weak: int | None = None, cram: bool = False) -> None:
        from drill.ui.messages import Practise

        self.post_message(Practise(topics, weak, cram))

    def action_open_mock(self) -> None:
        from drill.ui.messages import OpenMock

        self.post_message(OpenMock())

    def action_open_stats(self) -> None:
        from drill.ui.messages import OpenStats

        self.post_message(OpenStats())

    def action_open_browser(self) -> None:
        from drill.ui.messages import OpenBrowser

        self.post_message(OpenBrowser())

    # -- kernel cards --------------------------------------------------------
    def kernel_lock(self, card: "Card") -> str | None:
        """Why this kernel card cannot run here (its harness comes from a folder not trusted), or None."""
        from drill.kernel.trust import locked_reason

        return locked_reason(card, self.practice.data_dir)

    async def open_kernel_screen(self, card: "Card") -> bool:
        if self.locked is not None:
            return False
        try:
            from drill.ui.kernel_screen import KernelScreen
        except ImportError:
            return False
        store = await self.ready_store()
        if store is None:
            return True

        async def graded(grade: int | None) -> None:
            if grade is None:
                return
            self.revealed = True
            await self.action_grade(grade)

        self.app.push_screen(
            KernelScreen(card, store=store, data_dir=self.practice.data_dir, judge=self.practice.judge()), graded
        )
        return True


def done_text(session: Any) -> str:
    """The review screen's words once the queue is empty: what was done, what is next."""
    upcoming = [
        s.sm2.due
        for cid, s in session.states.items()
        if s.sm2.due and s.sm2.due > session.today and not s.suspended and cid in session.cards
    ]
    scope = f" in {', '.join(session.topics)}" if session.topics else ""
    what = "crammed" if session.cram else "reviewed"
    head = f"# All done for today{scope}\n\nYou {what} {session.done} card(s) this session.\n\n"
    if session.topics and not session.done:
        head += nothing_to_show(session) + "\n\n"
    if upcoming:
        nxt = min(upcoming)
        days = (nxt - session.today).days
        when = "tomorrow" if days == 1 else f"in {days} days"
        return head + f"The next card is due **{when}** ({nxt.isoformat()})."
    return head + "No card is scheduled yet."
