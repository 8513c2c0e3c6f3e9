"""The review screen's write path: opened by the workspace in the background once the first card is painted, and
each grade written behind the next card's paint, in the order given."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.screen import Screen

from drill.ui.markdown_view import load_markdown
from drill.workspace import failure_text

if TYPE_CHECKING:
    from drill.study.session import ReviewWriter
    from drill.workspace import OpenedWrites, Workspace, Writes


class ReviewWrites:
    """Where a review screen's grades go. `open` asks the workspace to open its write path (once); `writer` waits
    for it and hands out the grades' writer, or says to the learner why grades cannot be saved."""

    def __init__(
        self,
        screen: Screen[None],
        workspace: Workspace,
        settings_to_save: dict[str, str],
        content_hashes: Callable[[], dict[str, str]],
        now: Callable[[], dt.datetime],
    ) -> None:
        self.screen = screen  # the screen that shows what happens to the writes and runs their workers
        self.workspace = workspace
        self.settings_to_save = settings_to_save
        self.content_hashes = content_hashes  # each card's text hash, read when the path is opened
        self.now = now
        self.store: ReviewWriter | None = None  # the grades' writer, once open
        self._opening: asyncio.Future[OpenedWrites] | None = None
        self._error: str | None = None

    def open(self) -> None:
        """Have the workspace open its write path in the background (after the first paint: importing the store
        takes a while), and hear when it is open."""
        if self._opening is not None:  # asked already (a grade given before the first paint was done)
            return
        opening = self.workspace.open_writes(self.settings_to_save, self.content_hashes(), self.now())
        self._opening = asyncio.wrap_future(opening)
        self.screen.run_worker(self._opened(), exclusive=True, group="store")

    async def _opened(self) -> None:
        assert self._opening is not None
        try:
            opened = await self._opening
        except Exception as exc:  # shown to the learner; nothing is graded without a store
            self.screen.notify(self._cannot_save(exc), severity="error", timeout=30)
            return
        if self.store is None:
            self.store = self._write_behind(opened.writes)
        from drill.ui.messages import StoreOpened

        self.screen.post_message(StoreOpened(len(opened.changed_cards)))
        # the answers are Markdown: load its parser before the first one is shown
        await asyncio.to_thread(load_markdown)

    def _write_behind(self, writes: Writes) -> ReviewWriter:
        """The grades' writer: each write runs in a thread once the next card is painted, in the order given."""
        loop = asyncio.get_running_loop()
        screen = self.screen

        def start(drain: Callable[[], None]) -> None:
            screen.call_after_refresh(screen.run_worker, drain, thread=True, group="writes")

        def failed(exc: BaseException) -> None:  # from the writing thread, or the loop's own (an undo drains)
            message = f"a grade was not saved: {failure_text(exc)}"
            loop.call_soon_threadsafe(lambda: screen.notify(message, severity="error", timeout=30))

        return writes.write_behind(start, failed)

    def _cannot_save(self, exc: BaseException) -> str:
        self._error = f"grades cannot be saved: {failure_text(exc)}"
        return self._error

    async def writer(self) -> ReviewWriter | None:
        """The grades' writer (each write behind the next card's paint), once the workspace has opened the write
        path; None (said to the learner) when it could not."""
        if await self.writes() is None:
            return None
        return self.store

    async def writes(self) -> Writes | None:
        """The write path, once the workspace has opened it; None (said to the learner) when it could not."""
        self.open()
        assert self._opening is not None
        try:
            opened = await self._opening
        except Exception as exc:  # said again: a key was pressed that needs the store
            self.screen.notify(self._error or self._cannot_save(exc), severity="error", timeout=10)
            return None
        if self.store is None:
            self.store = self._write_behind(opened.writes)
        return opened.writes
