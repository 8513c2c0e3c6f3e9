"""The app factory used by `drill` and by the tests."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import Screen

from drill import paths
from drill.config.settings import Settings, load_settings, study_settings
from drill.config.study_day import clock_on
from drill.study.session import DEFAULT_FOCUS_NEW, MOCK_ONLY_KINDS, study_day
from drill.ui.answer_fields import InOrderKeys, hand_key
from drill.ui.press_again import AsksBeforeQuit, PressAgain
from drill.ui.routes import KeepsItsWork, OffersCommands, Routes
from drill.ui.screen_text import notice_text
from drill.workspace import Workspace

if TYPE_CHECKING:
    from drill.kernel.client import JudgeClient
    from drill.ui.mock_setup import MockOptions


class UnknownCard(LookupError):
    """`drill --card ID` named a card that no deck defines."""

    def __init__(self, card_id: str, cards: Mapping[str, object]) -> None:
        import difflib

        close = difflib.get_close_matches(card_id, list(cards), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        super().__init__(f"no card {card_id!r} in the decks{hint}")


class MockOnlyCard(LookupError):
    """`drill --card ID` named a card asked only in a mock round (a scenario): on its own it has no answer form, and
    a key typed at it would reveal and grade it."""

    def __init__(self, card_id: str, kind: str) -> None:
        super().__init__(
            f"{card_id!r} is a {kind} card, asked in stages in a mock round (`drill mock --round`), not on its own"
        )


class UnknownTopic(LookupError):
    """`drill --topic T` named a topic that has no cards."""

    def __init__(self, topic: str, topics: Iterable[str]) -> None:
        import difflib

        known = sorted(set(topics))
        close = difflib.get_close_matches(topic.lower(), known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else f" (topics: {', '.join(known)})"
        super().__init__(f"no cards in topic {topic!r}{hint}")


class DrillApp(Routes):
    CSS_PATH = "drill.tcss"
    TITLE = "drill"
    ENABLE_COMMAND_PALETTE = True  # ctrl+p: every command of the screen by name
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f1", "toggle_keys", "Keys", id="app.keys", priority=True),
    ]

    def action_toggle_keys(self) -> None:
        """F1: the panel of every key this screen takes (and the focused field's), or hide it again."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def __init__(
        self,
        data_dir: Path,
        deck_roots: Sequence[Path] | None = None,
        *,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        new_per_day: int | None = None,
        day_starts_at: int | None = None,
        new_order: str | None = None,
        card_id: str | None = None,
        cram: bool = False,
        topics: Sequence[str] = (),
        weak: int | None = None,
        focus_new: int | None = None,
        mock: "MockOptions | None" = None,
        seed: int | None = None,
        judge_factory: "Callable[[Path], JudgeClient] | None" = None,
        settings: Settings | None = None,
        gpu_host: str | None = None,
        chosen_day: dt.date | None = None,
    ) -> None:
        super().__init__()
        # The settings file, as make_app reads it; None: the built-in defaults, whatever the file says.
        self.settings = settings if settings is not None else Settings()
        # kernel cards run on this host over SSH when set (--gpu-host, or gpu_host in the settings file)
        self.gpu_host = gpu_host or self.settings.gpu_host or None
        if "theme" in self.settings.in_file:
            self.theme = self.settings.theme
        if self.settings.keys:
            self.set_keymap(dict(self.settings.keys))
        self.data_dir = Path(data_dir)
        self.seed = seed
        self.judge_factory = judge_factory
        self._judge: JudgeClient | None = None
        self._quit_guard = PressAgain("ctrl+q", "quit")  # with work at stake, ctrl+q warns once first
        self._quit_notice: Notification | None = None  # its warning, while it stands
        self.workspace = Workspace(
            self.data_dir,
            deck_roots,
            settings=self.settings,
            clock=clock,
            today=chosen_day,
            day_starts_at=day_starts_at,
        )
        decks = self.workspace.decks
        self.deck_problems = decks.problems
        saved = self.workspace.saved_settings()
        given = {"new_per_day": new_per_day, "day_starts_at": day_starts_at, "new_order": new_order}
        self.settings_to_save = {k: str(v) for k, v in given.items() if v is not None}
        # A flag, else the settings file, else what an earlier flag saved, else the default.
        self.new_per_day, self.rollover_hour, self.new_order = study_settings(
            self.settings, saved, new_per_day=new_per_day, day_starts_at=day_starts_at, new_order=new_order
        )
        self.focus_new = DEFAULT_FOCUS_NEW if focus_new is None else focus_new  # --focus-new
        # --today: the clock moved to that study day, time still running (drill.config.study_day)
        self.clock = clock_on(chosen_day, self.rollover_hour, clock)
        today = study_day(self.clock(), self.rollover_hour)
        if card_id is not None and card_id not in decks.cards:
            raise UnknownCard(card_id, decks.cards)
        if card_id is not None and decks.cards[card_id].kind in MOCK_ONLY_KINDS:
            raise MockOnlyCard(card_id, decks.cards[card_id].kind)
        focused = card_id is None and bool(topics or weak or cram)
        self.focus_topics: list[str] = []
        if focused:
            self.focus_topics = self.chosen_topics(decks.cards, topics, weak, today)
        self.single_card = card_id
        self.mock_options = mock or {}
        self.mock_only = mock is not None
        self.session = self.workspace.review_session(
            today,
            card_id=card_id,
            topics=self.focus_topics,
            focused=focused,
            cram=cram,
            new_per_day=self.new_per_day,
            new_order=self.new_order,
            focus_new=self.focus_new,
        )
        # The decks and states live as long as the app: keep the collector from walking them on every
        # full collection (with 10,000 cards that walk took longer than a grade).
        import gc

        gc.freeze()

    def chosen_topics(
        self, cards: Mapping[str, Any], topics: Sequence[str], weak: int | None, today: dt.date
    ) -> list[str]:
        """--topic names (checked), plus the `weak` weakest topics."""
        known = {c.topic for c in cards.values()}
        by_lower = {t.lower(): t for t in known}
        topics = [t if t in known else by_lower.get(t.lower(), t) for t in topics]  # MEMORY-ACCOUNTING too
        for topic in topics:
            if topic not in known:
                raise UnknownTopic(topic, known)
        chosen = list(dict.fromkeys(topics))
        if weak:
            from drill.study.standing import weakest

            ranked = weakest(self.workspace.weakness(today), weak + len(chosen))
            chosen += [t for t in ranked if t not in chosen][:weak]
        return chosen

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, OffersCommands):
            yield from screen.palette_commands()

    def kernel_judge(self) -> "JudgeClient":
        """The app's one kernel judge: started on the first kernel card, kept warm for the next."""
        if self._judge is None:
            if self.judge_factory is not None:
                self._judge = self.judge_factory(self.data_dir)
            else:
                from drill.kernel.client import JudgeClient

                if self.gpu_host:
                    from drill.kernel.remote import ssh_command

                    self._judge = JudgeClient(ssh_command(self.gpu_host), data_dir=self.data_dir)
                else:
                    self._judge = JudgeClient(data_dir=self.data_dir)
        return self._judge

    def review_screen(self) -> Screen[None]:
        from drill.ui.review import ReviewContext, ReviewScreen

        context = ReviewContext(
            session=self.session,
            data_dir=self.data_dir,
            clock=self.clock,
            judge=self.kernel_judge,
            workspace=self.workspace,
            seed=self.seed,
            settings_to_save=self.settings_to_save,
            deck_problems=self.deck_problems,
        )
        return ReviewScreen(context)

    def on_mount(self) -> None:
        # Once the app's start-up batch has ended: a screen pushed inside it is laid out and drawn
        # in the batch, where the drawing is thrown away, and then laid out and drawn again.
        self.call_later(self.push_screen, self.review_screen())
        self.call_after_refresh(self.after_first_paint)
        if self.mock_only:
            self.call_after_refresh(self.open_mock_setup_and_exit)

    def after_first_paint(self) -> None:
        """Keep the collector off what the start made (the decks, the screen), and turn it on if `drill` turned it off."""
        import gc

        gc.freeze()
        gc.enable()

    async def open_mock_setup_and_exit(self) -> None:
        await self.open_mock_setup(then_exit=True)

    async def _on_key(self, event: events.Key) -> None:
        """A character that reaches the app while an answer field has the focus was typed before that field was
        there: in the burst after a grade, it went to the revealed card, which takes no text, and waited here while
        the next card was put up. It belongs to the next card's answer, so it goes into the field, as typed. Any other
        key goes on to App._on_key (the bindings), which Textual calls after this one."""
        focused = self.screen.focused
        if event.is_printable and isinstance(focused, InOrderKeys):
            form = focused.form
            if form is not None and form.live_field() is focused:
                event.stop()
                event.prevent_default()  # Textual's own handler (the bindings) runs next otherwise
                await hand_key(focused, event)

    async def action_quit(self) -> None:
        risk = self.quit_warning()
        if risk and not self._quit_guard.confirmed(self.warn_before_quit, risk):
            return
        self.keep_work_on_exit(self.screen_stack)
        self.exit(self.return_code or 0)

    def warn_before_quit(self, message: str, *, severity: SeverityLevel, timeout: float) -> None:
        """The quit guard's warning, as a toast kept so that it can be taken back (`withdraw_quit_warning`)."""
        self._remove_quit_toast()
        notice = Notification(notice_text(message), severity=severity, timeout=timeout, markup=False)  # as `notify`
        self._quit_notice = notice
        self.post_message(Notify(notice))

    def withdraw_quit_warning(self) -> None:
        """What the quit warning spoke of is gone: its toast goes, and the next ctrl+q asks again."""
        self._remove_quit_toast()
        self._quit_guard = PressAgain(self._quit_guard.key, self._quit_guard.verb)  # unwarned

    def _remove_quit_toast(self) -> None:
        notice = self._quit_notice
        self._quit_notice = None
        if notice is not None and notice in self._notifications:  # Textual keeps toasts there (textual is pinned)
            self._unnotify(notice)

    def on_review_screen_card_shown(self, _message: object) -> None:
        self.withdraw_quit_warning()  # the card whose typed answer it warned of was graded or set aside

    def quit_warning(self) -> str:
        """What a quit now would cut short, as a sentence (a mock in progress, a typed answer), or ''."""
        for screen in reversed(self.screen_stack):
            warning = screen.quit_warning() if isinstance(screen, AsksBeforeQuit) else ""
            if warning:
                return warning
        typed = self.unkept_answer()
        return f"Your answer to {typed} is typed but not graded: quitting loses it." if typed else ""

    def unkept_answer(self) -> str:
        """The card whose typed answer a quit now would lose (a mock and the kernel editor keep their own), or ''."""
        from drill.ui.answering import AnswerForm

        screen = self.screen
        if isinstance(screen, KeepsItsWork):
            return ""
        for form in screen.query(AnswerForm):
            if any(box.value.strip() for box in form.inputs()):
                return form.card.id
        return ""

    def on_unmount(self) -> None:
        if self._judge is not None:
            self._judge.close()
        self.workspace.close()


def make_app(args: argparse.Namespace) -> DrillApp:
    roots = [paths.cards_dir(), *[Path(p) for p in (args.decks or [])]]
    return DrillApp(
        paths.data_dir(args.data_dir),
        roots,
        new_per_day=getattr(args, "new_per_day", None),
        day_starts_at=getattr(args, "day_starts_at", None),
        new_order=getattr(args, "new_order", None),
        card_id=getattr(args, "card", None),
        cram=bool(getattr(args, "cram", False)),
        topics=getattr(args, "topic", None) or (),
        weak=getattr(args, "weak", None),
        focus_new=getattr(args, "focus_new", None),
        settings=getattr(args, "settings", None) or load_settings(),
        clock=getattr(args, "clock", None) or dt.datetime.now,
        chosen_day=getattr(args, "today", None),  # drill --today: the app's clock is moved to that study day
        gpu_host=getattr(args, "gpu_host", None),
        mock=(
            {
                "minutes": args.minutes,
                "topics": _mock_topics(args),
                "questions": args.questions,
                "practice": bool(getattr(args, "practice", False)),
                "hard": bool(getattr(args, "hard", False)),
                "round": getattr(args, "round", None),
                "quick": bool(getattr(args, "quick", False)),
            }
            if getattr(args, "mock", False)
            else None
        ),
    )


def _mock_topics(args: argparse.Namespace) -> tuple[str, ...]:
    from drill.mock.plan import chosen_topics

    return tuple(chosen_topics(args.topics, args.track))


def run_app(args: argparse.Namespace) -> int:
    import sys

    try:
        app = make_app(args)
    except (UnknownCard, MockOnlyCard, UnknownTopic) as exc:
        print(f"drill: {exc}", file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # with no terminal to read keys from, the app spun forever
        print(
            "drill: the review app needs a terminal; `drill stats`, `drill check` and `drill export` run without one",
            file=sys.stderr,
        )
        return 2
    app.run()
    return app.return_code or 0
