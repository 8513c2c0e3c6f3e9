"""The app's answers to what screens ask for: mock interviews, stats, the browser and focused practice.

Screens post messages (drill.ui.messages); DrillApp is built on ScreenRequests and
answers them here, so no screen imports the app.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen

from drill.start import MockAsked
from drill.study.choice import with_weakest
from drill.ui.screen_text import notice_text
from drill.workspace import topic_titles

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.kernel.client import JudgeClient
    from drill.mock.plan import MockPlan
    from drill.mock.report_record import MockReport
    from drill.mock.rounds import RoundPlan
    from drill.study.session import ReviewSession
    from drill.ui.messages import PracticeAsked, UnsuspendAsked
    from drill.ui.mock_setup import MockRequest
    from drill.workspace import Workspace


@runtime_checkable
class KeepsItsWork(Protocol):
    """A screen that keeps the learner's work itself when the app quits (a mock in progress, the kernel
    editor's draft): the app calls `stop_for_exit` on each such screen in its stack, and does not warn that
    a quit loses what is typed on it."""

    def stop_for_exit(self) -> None: ...


@runtime_checkable
class OffersCommands(Protocol):
    """A screen with commands of its own for the command palette (ctrl+p), beside the app's."""

    def palette_commands(self) -> Iterator[SystemCommand]: ...


class ScreenRequests(App[int]):
    """The app's answers to the screens' requests: what each one opens. DrillApp is this app, and sets what
    is declared here (from its start, drill.start.AppStart)."""

    data_dir: Path
    workspace: "Workspace"
    clock: Callable[[], dt.datetime]
    seed: int | None
    session: "ReviewSession"
    rollover_hour: int
    new_per_day: int
    new_order: str
    mock_asked: MockAsked | None
    kernel_judge: Callable[[], "JudgeClient"]
    review_screen: Callable[[], Screen[None]]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notice, from any screen (a widget's `notify` is the app's): its words pass the screen's filter
        and are shown as text, never read as markup, since most carry data (a card id, a path, an error)."""
        super().notify(notice_text(message), title=notice_text(title), severity=severity, timeout=timeout, markup=False)

    def today(self) -> dt.date:
        from drill.study.session import study_day

        return study_day(self.clock(), self.rollover_hour)

    # -- mock interviews ------------------------------------------------------------
    async def on_mock_asked(self, _message: object = None) -> None:
        await self.open_mock_setup()

    async def open_mock_setup(self, *, then_exit: bool = False) -> None:
        from drill.mock.plan import DEFAULT_MINUTES, judge_can_run, load_tracks, reviewed_within
        from drill.mock.rounds import DEFAULT_ROUND_MINUTES
        from drill.study.standing import measured_weakness
        from drill.ui.mock_setup import MockSetupScreen

        cards = self.session.cards
        figures = await asyncio.to_thread(self.workspace.weakness, self.today())
        weakness = measured_weakness(figures)  # the practised topics' scores: the ranking's input
        suspended = [cid for cid, s in self.session.states.items() if s.suspended]
        asked = self.mock_asked or MockAsked()

        async def chosen(request: "MockRequest | None") -> None:
            if request is None:
                if then_exit:
                    self.exit(0)
                return
            await self.start_mock(
                request.plan,
                weakness,
                then_exit=then_exit,
                practice=request.practice,
                round_plan=request.round,
                hard=request.hard,
            )

        self.push_screen(
            MockSetupScreen(
                cards,
                weakness,
                topic_titles(),
                load_tracks(),
                minutes=asked.minutes or (DEFAULT_ROUND_MINUTES if asked.round else DEFAULT_MINUTES),
                topics=asked.topics,
                questions=asked.questions,
                judge_available=judge_can_run(),
                exclude=suspended,
                seed=self.seed,
                recent=reviewed_within(self.session.states.values(), self.today()),
                practice=asked.practice,
                hard=asked.hard,
                round_asked=asked.round,
                quick=asked.quick,
            ),
            chosen,
        )

    async def start_mock(
        self,
        plan: "MockPlan",
        weakness: Mapping[str, float],
        *,
        then_exit: bool,
        practice: bool = False,
        round_plan: "RoundPlan | None" = None,
        hard: bool = False,
    ) -> None:
        import time

        from drill.mock.plan import reviewed_within
        from drill.mock.record import MockRecorder
        from drill.mock.run import MockRun
        from drill.study.standing import measured_weakness
        from drill.ui.mock_report_screen import MockReportScreen
        from drill.ui.mock_screen import MockScreen

        try:
            store = await asyncio.to_thread(self.workspace.writes)
        except Exception as exc:  # shown, never a traceback: the mock cannot be saved
            self.notify(f"the mock cannot be saved: {exc}", severity="error", timeout=10)
            return
        # a round asks its own stage cards (its twists the only follow-ups); a quick mock the decks' cards
        cards: Mapping[str, Card] = self.session.cards if round_plan is None else round_plan.cards
        recent = reviewed_within(self.session.states.values(), self.today())
        suspended = [cid for cid, s in self.session.states.items() if s.suspended]
        run = MockRun(plan, cards, time.monotonic, recent=recent, exclude=suspended)

        def weakness_now() -> Mapping[str, float]:
            return measured_weakness(self.workspace.weakness(self.today()))

        def readiness_now() -> str | None:  # the report's line on the interview date, the mock's answers counted
            # the line never shows what would fit, so the plan is read (or made) without it
            figures = self.workspace.readiness(self.today(), new_order=self.new_order, suggest=False)
            return None if figures is None else figures.summary_line()

        recorder = MockRecorder(
            store,
            run,
            plan,
            cards,
            self.clock,
            self.today,
            topic_titles(),
            weakness,
            weakness_now,
            readiness_after=readiness_now,
            round_plan=round_plan,
            hard=hard,
        )

        async def ended(report: MockReport | None) -> None:
            if report is None:
                return

            def closed(_: None) -> None:
                if then_exit:
                    self.exit(0)

            self.push_screen(MockReportScreen(report, self.data_dir), closed)

        self.push_screen(
            MockScreen(
                run,
                recorder,
                cards,
                store,
                judge=self.kernel_judge,
                data_dir=self.data_dir,
                seed=self.seed,
                practice=practice,
                hard=hard,
            ),
            ended,
        )

    # -- stats and the browser ---------------------------------------------------------
    async def on_stats_asked(self, _message: object = None) -> None:
        from drill.ui.stats_screen import StatsScreen

        # what `drill stats` prints, read as it reads it (the database migrated first, if it must be)
        figures = await asyncio.to_thread(self.workspace.stats, new_order=self.new_order)
        self.push_screen(StatsScreen(figures.report, topic_titles(), figures.readiness, figures.calibration.result))

    async def on_browser_asked(self, _message: object = None) -> None:
        from drill.ui.browser import BrowserScreen

        states = await asyncio.to_thread(self.workspace.states)
        self.push_screen(BrowserScreen(self.session.cards, states, self.today(), self.workspace))

    async def on_unsuspend_asked(self, message: "UnsuspendAsked") -> None:
        def write() -> None:
            self.workspace.writes().unsuspend(message.card_id)

        try:
            await asyncio.to_thread(write)
        except Exception as exc:  # shown, never a traceback
            self.notify(f"could not unsuspend {message.card_id}: {exc}", severity="error", timeout=10)
            return
        state = self.session.states.get(message.card_id)
        if state is not None:
            state.suspended = False
        self.notify(f"{message.card_id} is back in the queues", timeout=4)

    # -- focused practice -------------------------------------------------------------
    async def on_practice_asked(self, message: "PracticeAsked") -> None:
        """Rebuild today's queue for some topics (or as cram) and start a fresh review screen on it.

        One card (`card_id`, from the browser) is practised above the browser instead: practise_card_now.
        """
        from drill.words import counted

        if message.card_id is not None:
            await self.practise_card_now(message.card_id)
            return
        today = self.today()
        states = await asyncio.to_thread(self.workspace.states)
        topics = list(message.topics)
        if message.weak:
            figures = await asyncio.to_thread(self.workspace.weakness, today)
            topics = with_weakest(topics, figures, message.weak)
        self.session = self.workspace.review_session(
            today,
            states=states,
            topics=topics,
            focused=True,
            cram=message.cram,
            new_order=self.new_order,
            focus_new=self.session.focus_new,
        )
        queue = self.session.queue
        what = "cram" if message.cram else "practice"
        scope = ", ".join(topics) if topics else "every topic"
        self.notify(f"{what}: {scope} · {counted(len(queue), 'card')}", timeout=5)
        await self.switch_screen(self.review_screen())

    async def practise_card_now(self, card_id: str) -> None:
        """One card from the browser, reviewed above it; once graded, the browser again with its search as it was."""
        from drill.study.session import MOCK_ONLY_KINDS
        from drill.ui.browser import BrowsedCardReview, BrowserScreen
        from drill.ui.review import ReviewContext

        kind = self.workspace.cards[card_id].kind
        if kind in MOCK_ONLY_KINDS:  # no answer form on its own: a key typed at it would reveal and grade it
            self.notify(
                f"{card_id} is a {kind} card, asked in stages in a mock round: ctrl+o, then its round", timeout=6
            )
            return
        browser = self.screen
        states = await asyncio.to_thread(self.workspace.states)
        session = self.workspace.review_session(
            self.today(), states=states, card_id=card_id, focus_new=self.session.focus_new
        )

        def back(_: None) -> None:
            state = session.states.get(card_id)
            if state is None or not session.saved:
                return  # back without a grade (ctrl+f): nothing changed
            # The review beneath the browser goes on from this grade; a card passed here is not asked again
            # there today (unless it is the card shown there now).
            beneath = self.session
            beneath.states[card_id] = state
            if not state.repeat_pending:
                beneath.queue[1:] = [cid for cid in beneath.queue[1:] if cid != card_id]
            if isinstance(browser, BrowserScreen):
                browser.practised(card_id, state)

        context = ReviewContext(
            session=session,
            data_dir=self.data_dir,
            clock=self.clock,
            judge=self.kernel_judge,
            workspace=self.workspace,
            seed=self.seed,
        )
        self.notify(f"practise {card_id} · graded, back to the search · ctrl+f back without a grade", timeout=5)
        self.push_screen(BrowsedCardReview(context), back)

    def keep_work_on_exit(self, screens: Sequence[Screen[Any]]) -> None:
        """On quit: a mock in progress keeps its answers and is closed as quit; a kernel draft is saved."""
        for screen in screens:
            if isinstance(screen, KeepsItsWork):
                screen.stop_for_exit()
