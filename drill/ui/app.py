"""The review app, assembled on a decided start, and `make_app`: the one factory `drill` and the tests use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import Screen

from drill.start import AppOptions, AppStart, app_start
from drill.study.choice import REFUSALS
from drill.ui.answer_fields import InOrderKeys, hand_key
from drill.ui.press_again import AsksBeforeQuit, PressAgain
from drill.ui.routes import KeepsItsWork, OffersCommands, ScreenRequests
from drill.ui.screen_text import notice_text

if TYPE_CHECKING:
    from drill.kernel.client import JudgeClient


# Textual writes each frame to the terminal from a thread of its own, which needs the interpreter's lock to run:
# while the event loop goes on after a paint (the callbacks after it, a grade's write starting in its thread), the
# frame waited for the loop to give the lock up, up to the interpreter's switch interval (5 ms by default). The
# next card after a grade reaches the terminal within this much of being drawn instead.
FRAME_HANDOFF_S = 0.001


class DrillApp(ScreenRequests):
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

    def __init__(self, start: AppStart, *, judge_factory: "Callable[[Path], JudgeClient] | None" = None) -> None:
        """The app on a start decided before it (drill.start.app_start); `judge_factory` replaces the kernel
        judge (tests)."""
        super().__init__()
        self.start = start
        self.settings = start.settings
        if "theme" in self.settings.in_file:
            self.theme = self.settings.theme
        if self.settings.keys:
            self.set_keymap(dict(self.settings.keys))
        self.workspace = start.workspace
        self.data_dir = start.data_dir
        self.clock = start.clock
        self.seed = start.seed
        self.session = start.session
        self.rollover_hour = start.study.rollover_hour
        self.new_per_day = start.study.new_per_day
        self.new_order = start.study.new_order
        self.mock_asked = start.mock
        self.judge_factory = judge_factory
        self._judge: JudgeClient | None = None
        self._quit_guard = PressAgain("ctrl+q", "quit")  # with work at stake, ctrl+q warns once first
        self._quit_notice: Notification | None = None  # its warning, while it stands
        self._switch_interval_before: float | None = None  # the interpreter's, until the first paint sets ours
        # The decks and states live as long as the app: keep the collector from walking them on every
        # full collection (with 10,000 cards that walk took longer than a grade).
        import gc

        gc.freeze()

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

                if self.start.gpu_host:
                    from drill.kernel.remote import ssh_command

                    self._judge = JudgeClient(ssh_command(self.start.gpu_host), data_dir=self.data_dir)
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
            settings_to_save=dict(self.start.settings_to_save),
            deck_problems=self.start.deck_problems,
        )
        return ReviewScreen(context)

    def get_default_screen(self) -> Screen[Any]:
        """The review is the app's first screen: drawn once, as it starts. (Pushed over Textual's blank default
        screen, it was styled and laid out a second time, the most of what the first card waited for beside a
        bare Textual app.)"""
        return self.review_screen()

    def on_mount(self) -> None:
        self.call_after_refresh(self.after_first_paint)
        if self.mock_asked is not None:
            self.call_after_refresh(self.open_mock_setup_and_exit)

    def after_first_paint(self) -> None:
        """Keep the collector off what the start made (the decks, the screen), and turn it on if `drill` turned it off;
        and hand each painted frame to the terminal sooner (FRAME_HANDOFF_S)."""
        import gc
        import sys

        gc.freeze()
        gc.enable()
        self._switch_interval_before = sys.getswitchinterval()
        sys.setswitchinterval(FRAME_HANDOFF_S)

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
        import sys

        if self._judge is not None:
            self._judge.close()
        self.workspace.close()
        if self._switch_interval_before is not None:  # as it was, for a process that goes on without the app
            sys.setswitchinterval(self._switch_interval_before)


def make_app(options: AppOptions, *, judge_factory: "Callable[[Path], JudgeClient] | None" = None) -> DrillApp:
    """The app for these options, as `drill` opens it: the start decided (drill.start.app_start: UnknownCard,
    MockOnlyCard or UnknownTopic for an option that names nothing), then the app assembled on it."""
    return DrillApp(app_start(options), judge_factory=judge_factory)


def run_app(options: AppOptions) -> int:
    """Open the review app in this terminal; a refused option or a missing terminal is one line on stderr."""
    import sys

    try:
        app = make_app(options)
    except REFUSALS as exc:
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
