"""The kernel card screen: edit the starter, run it in the judge, read the verdict, see the answer, grade.

In a mock that holds its answers until it ends (`held`), the reference solution is not shown and no grade is
asked for: once the file has run, F2 submits it with the grade the judge's verdict suggests (drill.kernel.verdict),
which the learner does not see until the report, where the reference solution is shown.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, TextArea

from drill.cards.field_values import number
from drill.config.settings import DEFAULT_JUDGE_TIMEOUT
from drill.kernel import drafts
from drill.kernel.cards import kernel_files
from drill.kernel.job import kernel_job
from drill.kernel.verdict import Verdict, suggest_kernel_grade
from drill.ui.markdown_view import MarkdownView
from drill.ui.messages import JudgeReported, KernelFinished
from drill.ui.screen_editor import SafeTextArea
from drill.ui.screen_keys import GRADE_KEYS, suggested_grade_hint
from drill.ui.screen_text import SafeStatic, markup_text
from drill.ui.verdict_view import one_line, render_verdict

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.kernel.client import JudgeClient
    from drill.kernel_shared.protocol import JudgeEvent

SAVE_DELAY = 0.3  # seconds of quiet typing before the draft is written
HIGHLIGHTS = Path(__file__).with_name("cuda_highlights.scm")
RESTORE_COMMAND = "Restore the draft from before the reset"
DRAFT_CONTINUED = "your saved draft is in the editor · F8 twice starts again from the starter (the draft is kept)"
HELD_WORDS = "the answer is held until the mock ends"
UNCHECKED = "the judge could not check this file, so it cannot be submitted: run it again, or Esc and skip it"
HELD_ANSWER = "the reference solution is held until the mock ends: its report shows it"
DRAFT_KEPT = (
    f"started again from the starter · ctrl+z in the editor, or “{RESTORE_COMMAND}” (ctrl+p), brings your draft back"
)


@dataclass(frozen=True)
class KernelRun:
    """A kernel card's last finished run: the judge's verdict, the file it judged and the grade it suggests."""

    verdict: Verdict
    source: str
    suggested: int | None


class DraftEditor(SafeTextArea):
    """The kernel editor. Its undo (ctrl+z) goes one step past the edits typed since a start-over from the
    starter: back to the draft the start-over replaced. ctrl+home and ctrl+end go to the start and the end of
    the file, as in other editors (Textual's TextArea has home and end for the line only); with shift, selecting."""

    BINDINGS = [
        Binding("ctrl+home", "cursor_file_start", "Start of the file", show=False),
        Binding("ctrl+end", "cursor_file_end", "End of the file", show=False),
        Binding("ctrl+shift+home", "cursor_file_start(True)", "Select to the start of the file", show=False),
        Binding("ctrl+shift+end", "cursor_file_end(True)", "Select to the end of the file", show=False),
    ]

    before_reset: str | None = None  # the draft the last start-over replaced, while that is undoable here

    def action_cursor_file_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_cursor_file_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)

    def action_undo(self) -> None:
        if self.history.undo_stack or self.before_reset is None:
            super().action_undo()
            return
        draft = self.before_reset
        self.before_reset = None
        self.load_text(draft)  # its Changed message has the screen save it as the draft again


class KernelAttemptWriter(Protocol):
    """Where the screen keeps each run's source and verdict (the workspace's write path)."""

    def record_kernel_attempt(self, card_id: str, source: str, result: dict[str, Any]) -> int: ...


class KernelScreen(Screen[int | None]):
    """Opened for a kernel card; dismisses with the grade (0-5), or None to go back ungraded.

    A saved draft is always continued: the editor opens with it, and no question stands between the key that
    opened the card and the code typed next (a one-letter answer to one took the first letter of the code and
    threw the draft away). Starting again from the starter is F8 pressed twice, and keeps the draft it
    replaces: ctrl+z in the editor undoes the reset, and a palette command restores it later.
    """

    BINDINGS = [
        Binding("f5,ctrl+r", "run", "Run", id="kernel.run"),
        Binding("f4", "cancel", "Cancel run", id="kernel.cancel"),
        Binding("f8", "reset", "Reset to starter", id="kernel.reset"),
        Binding("f9", "toggle_answer", "Answer", id="kernel.answer"),
        Binding("f2", "submit", "Submit", id="kernel.submit"),
        Binding("escape", "back", "Back", id="kernel.back"),
        Binding("enter", "accept", "Accept grade", id="kernel.accept", show=False),
        *[Binding(str(g), f"grade({g})", f"grade {g}", id=f"kernel.grade{g}", show=False) for g in range(6)],
    ]
    DEFAULT_CSS = """
    KernelScreen { layout: vertical; }
    KernelScreen #ktop { height: 1; padding: 0 1; background: $boost; }
    KernelScreen #kmain { height: 1fr; }
    KernelScreen #kleft { width: 3fr; }
    KernelScreen #kprompt-box { height: auto; max-height: 9; padding: 0 1; border-bottom: solid $panel; }
    KernelScreen #keditor { height: 1fr; }
    KernelScreen #kside { width: 2fr; min-width: 30; padding: 0 1; border-left: solid $panel; }
    KernelScreen #kstatus { height: auto; color: $text-muted; }
    KernelScreen #kverdict { height: auto; }
    KernelScreen #kanswer { height: 1fr; padding: 0 1; display: none; }
    KernelScreen.answer-shown #kanswer { display: block; }
    KernelScreen.answer-shown #kmain { display: none; }
    KernelScreen #kbar { height: 1; padding: 0 1; background: $panel; }
    KernelScreen.narrow #kmain { layout: vertical; }
    KernelScreen.narrow #kleft { width: 1fr; height: 1fr; }
    KernelScreen.narrow #kprompt-box { max-height: 5; }
    KernelScreen.narrow #kside { width: 1fr; height: 40%; min-height: 7; min-width: 0; border-left: none; border-top: solid $panel; }
    """
    NARROW_BELOW = 110  # columns: below this the verdict goes under the editor, which keeps the full width

    def __init__(
        self,
        card: "Card",
        *,
        store: KernelAttemptWriter | None = None,
        data_dir: Path,
        judge: "JudgeClient",
        held: bool = False,
        last_runs: dict[str, KernelRun] | None = None,
    ) -> None:
        super().__init__()
        self.card = card
        self.held = held  # a mock's question: the reference and the grade held until the mock ends
        # each card's last run in this review: the card's comes back, verdict and suggested grade, when it reopens
        self.last_runs: dict[str, KernelRun] = {} if last_runs is None else last_runs
        self.store = store
        self.data_dir = Path(data_dir)
        self.files = kernel_files(card)
        self.language = str(card.fields.get("language", "cuda"))
        self.ext = drafts.extension_for(self.language)
        self.target_pct = number(card.fields.get("target_pct") or 0)
        self.judge = judge  # the app's warm judge, shared by every kernel card
        self.timeout = DEFAULT_JUDGE_TIMEOUT
        self.save_delay = SAVE_DELAY
        self.starter = self.files.starter.read_text(encoding="utf-8")
        self.running = False
        self.revealed = False
        self.verdict: Verdict | None = None
        self.suggested: int | None = None
        self.progress: list[str] = []
        self._save_timer: Timer | None = None
        self._saved_text: str | None = None
        self._reset_armed_at = 0.0

    # -- layout ---------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < self.NARROW_BELOW, "narrow")

    def compose(self) -> ComposeResult:
        yield SafeStatic(id="ktop")
        with Horizontal(id="kmain"):
            with Vertical(id="kleft"):
                with VerticalScroll(id="kprompt-box"):
                    yield MarkdownView(self.card.prompt, id="kprompt")
                yield self._make_editor()
            with VerticalScroll(id="kside"):
                yield SafeStatic(id="kstatus")
                yield SafeStatic(id="kverdict")
        with VerticalScroll(id="kanswer"):
            yield MarkdownView(id="kanswer-md")
        yield SafeStatic(id="kbar")
        yield Footer(compact=True)

    def _make_editor(self) -> TextArea:
        editor = DraftEditor.code_editor("", id="keditor", soft_wrap=False)
        if self.language == "cuda":
            try:
                import tree_sitter
                import tree_sitter_cuda

                editor.register_language(
                    "cuda", tree_sitter.Language(tree_sitter_cuda.language()), HIGHLIGHTS.read_text()
                )
                editor.language = "cuda"
            except Exception:  # no grammar here: plain text still edits fine
                editor.language = None
        else:
            try:
                editor.language = "python"
            except Exception:  # textual[syntax] not installed
                editor.language = None
        return editor

    @property
    def editor(self) -> "DraftEditor":
        return self.query_one("#keditor", DraftEditor)

    def on_mount(self) -> None:
        settings = getattr(self.app, "settings", None)  # the settings file's judge_timeout, when the app has one
        if settings is not None and getattr(settings, "judge_timeout", None):
            self.timeout = float(settings.judge_timeout)
        self.judge.start()  # warm up while the learner reads the prompt
        self.update_top()
        last = self.last_runs.get(self.card.id)
        if last is None:
            self.query_one("#kstatus", SafeStatic).update(self._not_run_words())
        else:
            self.show_run(last)
        self.set_bar()
        draft = drafts.load_draft(self.data_dir, self.card.id, self.ext)
        if draft is not None and draft != self.starter:
            self.load_text(draft)
            self.notify(DRAFT_CONTINUED, timeout=6)
        else:
            self.load_text(self.starter)
        self.editor.focus()

    def load_text(self, text: str) -> None:
        self._saved_text = text
        self.editor.load_text(text)

    def update_top(self) -> None:
        draft = "draft saved" if drafts.has_draft(self.data_dir, self.card.id, self.ext) else "starter"
        self.query_one("#ktop", SafeStatic).update(
            f"[b]{markup_text(self.card.id)}[/b] · {markup_text(self.card.topic)} · {markup_text(self.language)}"
            f" · {markup_text(self.files.starter.name)}"
            f" · target {self.target_pct:g} % · {draft}"
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A held question submits (F2) and never shows the answer; any other grades after the answer (F9)."""
        if action == "submit":
            return self.held
        if action in ("toggle_answer", "grade", "accept"):
            return not self.held
        return True

    def set_bar(self) -> None:
        if self.held:
            submit = "" if self.verdict is None else "[b]F2[/b] submit · "
            state = "running… [b]F4[/b] cancel" if self.running else "[b]F5[/b] run"
            self.query_one("#kbar", SafeStatic).update(
                f"{state} · {submit}[b]F8[/b] reset · [b]Esc[/b] back · {HELD_WORDS}"
            )
        elif self.revealed:
            hint = suggested_grade_hint(self.suggested)
            self.query_one("#kbar", SafeStatic).update(hint + GRADE_KEYS + " · [b]F9[/b] editor")
        elif self.running:
            self.query_one("#kbar", SafeStatic).update("running… [b]F4[/b] cancel · keep editing meanwhile")
        else:
            self.query_one("#kbar", SafeStatic).update(
                "[b]F5[/b] run · [b]F8[/b] reset · [b]F9[/b] answer · [b]Esc[/b] back"
            )

    def _not_run_words(self) -> str:
        return "Not run yet. F5 compiles, checks and times your file in the judge."

    # -- drafts -------------------------------------------------------------------------------
    @on(TextArea.Changed, "#keditor")
    def edited(self) -> None:
        if self.editor.text == self._saved_text:
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(self.save_delay, self.save_now)

    def save_now(self) -> None:
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        text = self.editor.text
        if text == self._saved_text:
            return
        try:
            if text == self.starter:
                drafts.discard_draft(self.data_dir, self.card.id, self.ext)
            else:
                drafts.save_draft(self.data_dir, self.card.id, self.ext, text)
        except OSError as exc:
            self.notify(f"could not save your draft: {exc}", severity="error")
            return
        self._saved_text = text
        self.update_top()

    def stop_for_exit(self) -> None:
        """The app is quitting: the edit typed a moment ago is saved now, not after the pause."""
        self.save_now()

    def on_unmount(self) -> None:
        try:
            self.save_now()
        except Exception:  # the screen is going away; never lose the exit over a draft
            pass

    # -- running --------------------------------------------------------------------------------
    def action_run(self) -> None:
        if self.running:
            self.notify("a run is in progress (F4 cancels it)")
            return
        self.save_now()
        self.running = True
        self.progress = []
        self.query_one("#kstatus", SafeStatic).update("starting the judge…")
        self.set_bar()
        self.run_judge(self.editor.text)

    @work(thread=True, exclusive=True, group="kernel-run")
    def run_judge(self, source: str) -> None:
        verdict = self.judge.run(
            kernel_job(self.card, self.data_dir), source, on_event=self.report, timeout=self.timeout
        )
        self.post_message(KernelFinished(verdict, source))

    def report(self, event: "JudgeEvent") -> None:
        """Called from the judge's thread for each streamed event."""
        self.post_message(JudgeReported(event))

    def on_judge_reported(self, message: JudgeReported) -> None:
        if not self.running:
            return
        event = message.event
        kind = event.get("event")
        if kind == "started":
            self.progress.append(f"judging on {markup_text(event.get('device'))}")
        elif kind == "compiled":
            ok = event.get("ok")
            secs = event.get("seconds")
            took = f" in {secs * 1000:.0f} ms" if isinstance(secs, (int, float)) else ""
            self.progress.append(("compiled" + took) if ok else "did not compile")
        elif kind == "case_started":
            self._end_step(
                f"{markup_text(event.get('name'))} …", replace=False
            )  # a step with no case of its own is done
        elif kind == "case":
            self._end_step(("✓ " if event.get("ok") else "✗ ") + markup_text(event.get("name")))
        elif kind == "timing":
            self._end_step(f"timed {markup_text(event.get('name'))}")
        self.query_one("#kstatus", SafeStatic).update("\n".join(self.progress[-12:]))

    def _end_step(self, line: str, replace: bool = True) -> None:
        """Add `line`; the step shown as running (" …") before it is replaced by it, or kept as done."""
        if self.progress and self.progress[-1].endswith(" …"):
            if replace:
                self.progress.pop()
            else:
                self.progress[-1] = self.progress[-1].removesuffix(" …")
        self.progress.append(line)

    def on_kernel_finished(self, message: KernelFinished) -> None:
        self.running = False
        verdict = message.verdict
        run = KernelRun(verdict, message.source, suggest_kernel_grade(verdict, self.target_pct))
        self.last_runs[self.card.id] = run
        self.show_run(run)
        if self.store is not None:
            try:
                self.store.record_kernel_attempt(self.card.id, message.source, verdict.to_json())
            except Exception as exc:  # the verdict is still on screen; say the history missed it
                self.notify(f"could not record this attempt: {exc}", severity="warning")
        first_error = next((m for m in verdict.messages if m.get("severity") == "error" and m.get("line")), None)
        if first_error and not self.revealed:
            self.editor.cursor_location = (
                int(first_error["line"]) - 1,
                max(0, int(first_error.get("column") or 1) - 1),
            )
        self.set_bar()

    def show_run(self, run: KernelRun) -> None:
        """The verdict of a finished run in the side pane, its outcome first; its suggested grade is the one F9 offers."""
        self.verdict = run.verdict
        self.suggested = run.suggested
        self.query_one("#kstatus", SafeStatic).update("")
        self.query_one("#kverdict", SafeStatic).update(
            render_verdict(run.verdict, run.source, self.target_pct, run.suggested, held=self.held)
        )
        self.query_one("#kside", VerticalScroll).scroll_home(animate=False)  # the outcome is its first line

    def action_cancel(self) -> None:
        if not self.running:
            return
        self.query_one("#kstatus", SafeStatic).update("cancelling…")
        self.run_worker(self.judge.cancel, thread=True, group="kernel-cancel")

    def action_reset(self) -> None:
        now = time.monotonic()
        if now - self._reset_armed_at > 3.0:
            self._reset_armed_at = now
            self.notify("press F8 again to start from the starter (your draft is kept, to bring back)")
            return
        self._reset_armed_at = 0.0
        text = self.editor.text
        if text == self.starter:
            self.notify("this is the starter already")
            return
        try:
            drafts.save_backup(self.data_dir, self.card.id, self.ext, text)
        except OSError as exc:  # a draft that cannot be kept is not replaced
            self.notify(f"could not keep your draft, so it stays: {exc}", severity="error")
            return
        self.remove_class("answer-shown")
        self.load_text(self.starter)
        self.editor.before_reset = text
        drafts.discard_draft(self.data_dir, self.card.id, self.ext)
        self.update_top()
        self.editor.focus()
        self.notify(DRAFT_KEPT, timeout=8)

    def restore_backup(self) -> None:
        """Put back the draft the last start-over replaced. What was typed since is kept in its place, so
        running the command again swaps them back: nothing in the editor is lost to it either."""
        backup = drafts.load_backup(self.data_dir, self.card.id, self.ext)
        if backup is None:
            self.notify("no draft was kept: this card was not started again from its starter")
            return
        self.remove_class("answer-shown")
        self.editor.before_reset = None  # back where it was: an undo has nothing past it to bring back
        text = self.editor.text
        if backup != text:
            try:
                if text != self.starter:
                    drafts.save_backup(self.data_dir, self.card.id, self.ext, text)
            except OSError as exc:  # what is in the editor could not be kept: it stays
                self.notify(f"could not keep what is in the editor, so it stays: {exc}", severity="error")
                return
            self.editor.load_text(backup)
            self.save_now()
        self.editor.focus()
        self.notify("your draft from before the reset is back in the editor")

    def palette_commands(self) -> Iterator[SystemCommand]:
        """The kernel screen's commands by name in the command palette (ctrl+p)."""
        if drafts.backup_path(self.data_dir, self.card.id, self.ext).is_file():
            yield SystemCommand(
                RESTORE_COMMAND, "Put back the draft that starting again from the starter replaced", self.restore_backup
            )

    # -- the answer and the grade -------------------------------------------------------------
    def action_submit(self) -> None:
        """A held question: submit the file last run, graded as its verdict suggests (shown in the report)."""
        if not self.held:
            return
        if self.running:
            self.notify("the run is not finished: wait for its verdict, or F4 cancels it")
            return
        if self.verdict is None:
            self.notify("run your file first (F5): the judge's verdict on it is what is submitted")
            return
        if self.suggested is None:  # the judge never checked it: nothing to grade it by but the reference
            self.notify(UNCHECKED, severity="warning", timeout=8)
            return
        self.leave(self.suggested)

    def action_toggle_answer(self) -> None:
        if self.held:
            self.notify(HELD_ANSWER, timeout=5)
            return
        if self.has_class("answer-shown"):
            self.remove_class("answer-shown")
            self.editor.focus()
            return
        self.save_now()
        self.query_one("#kanswer-md", MarkdownView).show(self.answer_markdown())
        self.revealed = True
        self.add_class("answer-shown")
        self.query_one("#kanswer", VerticalScroll).focus()
        self.set_bar()

    def reference_markdown(self) -> str:
        """The reference solution as a fenced block; raises OSError when its file cannot be read."""
        fence = "cuda" if self.language == "cuda" else "python"
        solution = self.files.solution.read_text(encoding="utf-8")
        return f"```{fence}\n{solution.rstrip()}\n```"

    def answer_markdown(self) -> str:
        fence = "cuda" if self.language == "cuda" else "python"
        solution = self.files.solution.read_text(encoding="utf-8")
        mine = self.editor.text
        diff = "".join(
            difflib.unified_diff(
                mine.splitlines(keepends=True),
                solution.splitlines(keepends=True),
                fromfile=f"yours/{self.files.starter.name}",
                tofile=f"answer/{self.files.solution.name}",
            )
        )
        parts = [f"## Answer\n\n{self.card.answer.strip()}"]
        if self.verdict is not None:
            parts.append(f"**Your last run:** {one_line(self.verdict)}")
        parts.append(f"## Reference solution\n\n```{fence}\n{solution.rstrip()}\n```")
        parts.append(
            f"## Your version against it\n\n```diff\n{diff.rstrip()}\n```"
            if diff
            else "## Your version is the reference solution"
        )
        try:
            parts.append(self.files.writeup.read_text(encoding="utf-8"))
        except OSError:
            pass
        if self.card.rubric:
            parts.append("**A strong answer names:**\n" + "\n".join(f"- {r}" for r in self.card.rubric))
        if self.card.sources:
            parts.append("*Sources: " + "; ".join(self.card.sources) + "*")
        return "\n\n".join(parts)

    def action_grade(self, grade: int) -> None:
        if not self.revealed:
            self.notify("see the answer first (F9), then grade")
            return
        self.leave(grade)

    def action_accept(self) -> None:
        if self.revealed and self.suggested is not None:
            self.leave(self.suggested)

    def on_key(self, event: events.Key) -> None:
        """Out of the editor before the answer is shown (esc moves the focus off it), a typed character goes back
        into the code at the cursor instead of vanishing: space, letters and digits are code here, as in the
        editor. Once the answer is shown, digits are grades and the bindings take them."""
        if self.revealed or self.editor.has_focus or not event.is_printable or event.character is None:
            return
        event.stop()
        event.prevent_default()
        self.editor.focus()
        self.editor.insert(event.character)

    def action_back(self) -> None:
        if self.running:
            self.action_cancel()
        self.leave(None)

    def leave(self, grade: int | None) -> None:
        self.save_now()
        if self.running:
            self.run_worker(self.judge.cancel, thread=True, group="kernel-cancel")
        self.dismiss(grade)
