"""The review screen: today's queue, one card at a time. It shows a card, checks its answer and takes its grade;
what it says in words is drill.ui.review_words, its palette commands drill.ui.review_commands, and the write path
its grades go to drill.ui.review_writes."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message

from drill.study.sm2 import GRADE_MEANINGS, SAME_DAY_REPEAT_BELOW
from drill.ui.answer_fields import Page
from drill.ui.answering import AnswerForm, KeptAnswer
from drill.ui.markdown_view import MarkdownView
from drill.ui.review_commands import review_commands
from drill.ui.review_words import card_place, done_text, interview_countdown
from drill.ui.review_writes import ReviewWrites
from drill.ui.screen_keys import (
    GRADE_KEYS,
    KeysFooter,
    PageScreen,
    form_bindings,
    scroll_bindings,
    suggested_grade_hint,
)
from drill.ui.screen_text import SafeStatic, markup_text
from drill.words import counted

if TYPE_CHECKING:
    from drill.cards.model import Card, Problem
    from drill.kernel.client import JudgeClient
    from drill.study.session import ReviewSession, ReviewWriter
    from drill.ui.kernel_screen import KernelRun
    from drill.ui.messages import StoreOpened
    from drill.workspace import Workspace, Writes


@dataclass
class ReviewContext:
    """What a review screen works with besides its widgets (the session, where the data lives, the clock, the
    judge), handed over by the app that owns them."""

    session: "ReviewSession"
    data_dir: Path
    clock: Callable[[], dt.datetime]
    judge: Callable[[], "JudgeClient"]  # the app's one warm kernel judge, started on first use
    workspace: "Workspace"  # the learner's data: the store grades are written to
    seed: int | None = None  # fixes every draw (tests)
    settings_to_save: dict[str, str] = field(default_factory=dict)
    deck_problems: Sequence["Problem"] = ()
    kernel_runs: dict[str, "KernelRun"] = field(default_factory=dict)  # each kernel card's last run in this review


class ReviewScreen(PageScreen[None]):
    # Commands are ctrl-keys, so no letter or digit typed into an answer can suspend,
    # bury, undo or quit; digits grade only once the answer is shown.
    BINDINGS = [
        Binding("space", "reveal", "Reveal", id="review.reveal", show=False),
        Binding("enter", "accept", "Check / accept", id="review.accept", show=False),
        *[
            Binding(str(g), f"grade({g})", f"{g} {GRADE_MEANINGS[g]}", id=f"review.grade{g}", show=False)
            for g in range(6)
        ],
        Binding("ctrl+z", "undo", "Undo", id="review.undo"),
        Binding("ctrl+s", "suspend", "Suspend", id="review.suspend"),
        Binding("ctrl+t", "bury", "Bury", id="review.bury"),
        Binding("ctrl+o", "open_mock", "Mock", id="review.mock"),
        Binding("ctrl+g", "open_stats", "Stats", id="review.stats"),
        Binding("ctrl+f", "open_browser", "Find", id="review.browser"),
        Binding("escape", "leave_input", "Keys", id="review.leave_input", show=False),
        *form_bindings("review"),
        Binding("q", "quit_when_done", "Quit", id="review.quit_when_done", show=False),
        *scroll_bindings("review"),
    ]

    class CardShown(Message):
        """Another card (or the end of the queue) is shown: a warning about the card before, such as the quit
        warning's "your answer is typed but not graded", no longer holds (the app takes it back)."""

    def __init__(self, context: ReviewContext) -> None:
        super().__init__()
        self.context = context
        self.writes = ReviewWrites(
            self,
            context.workspace,
            context.settings_to_save,
            lambda: {c.id: c.content_hash for c in context.session.cards.values()},
            context.clock,
        )
        self.revealed = False
        self.locked: str | None = None  # a kernel card's lock, read once when the card is shown
        self.suggested: int | None = None
        self.answer_record: dict[str, object] | None = None
        self.shown_at = time.monotonic()
        self.form: AnswerForm | None = None
        self._resumed = False
        self.answers_left: dict[str, KeptAnswer] = {}  # the answer each card left with, for ctrl+z
        self.grades_given: dict[str, list[int]] = {}  # this session's grades of each card, for its "again" mark

    def compose(self) -> ComposeResult:
        card = self.card
        self.form = self.form_for(card) if card is not None else None  # styled with the screen, in one pass
        if self.form is not None and self.form.FOCUS_AT_START:
            # Focus the form's first field as the screen opens, rather than the page (Textual's choice) and then
            # the field: each move of the focus restyles the page.
            self.AUTO_FOCUS = "AnswerInput"  # type: ignore[misc]
        yield SafeStatic(id="top")
        with Page(id="body"):
            yield MarkdownView(id="prompt")
            with Vertical(id="work"):
                if self.form is not None:
                    yield self.form
            yield SafeStatic(id="verdict")
            yield MarkdownView(id="answer")
        yield SafeStatic(id="gradebar")
        yield KeysFooter(compact=True)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        if not self._resumed:  # opened: its widgets were styled as they were mounted, so no second pass over them
            self._resumed = True
            event.refresh_styles = False

    async def on_mount(self) -> None:
        self.AUTO_FOCUS = ReviewScreen.AUTO_FOCUS  # type: ignore[misc]  # a return to this screen focuses as usual
        self.call_after_refresh(self.open_store)  # after the first paint: importing the store takes a while
        problems = self.context.deck_problems
        if problems:
            first = problems[0]
            others = sorted({Path(p.path).name for p in problems[1:]})
            more = f"; {len(problems) - 1} more in {', '.join(others)}" if others else ""
            where_and_what = str(replace(first, path=Path(first.path).name))  # as drill check prints it
            self.notify(
                f"{where_and_what}{more}. The cards that loaded are here; `drill check` lists every problem.",
                title="skipped what could not be read",
                severity="warning",
                timeout=12,
            )
        await self.show_current(composed=True)

    # -- the write path: drill.ui.review_writes opens it in the background ----------
    def open_store(self) -> None:
        self.writes.open()

    def on_store_opened(self, message: StoreOpened) -> None:
        if message.changed_cards:
            them = "it" if message.changed_cards == 1 else "them"
            self.notify(f"{counted(message.changed_cards, 'card')} edited since you last saw {them}", timeout=4)

    async def ready_store(self) -> "ReviewWriter | None":
        """The grades' writer, once the workspace has opened it; None (said to the learner) when it could not."""
        return await self.writes.writer()

    async def ready_writes(self) -> "Writes | None":
        """The write path, once the workspace has opened it; None (said to the learner) when it could not."""
        return await self.writes.writes()

    # -- showing cards -----------------------------------------------------
    @property
    def card(self) -> "Card | None":
        return self.context.session.current

    def update_top(self) -> None:
        session = self.context.session
        card = self.card
        where = card_place(card) if card else "drill"
        state = session.states.get(card.id) if card else None
        flags = "".join(
            [
                "  [reverse] leech [/reverse]" if state and state.leech else "",
                "  [i](edited)[/i]" if state and state.changed else "",
            ]
        )
        progress = f"done {session.done} · left {session.left}"  # cards; a card graded again counts once
        saved = f" · {counted(session.saved, 'grade')} saved" if session.saved else ""
        days_left = interview_countdown(self.context.workspace.settings.interview_date, session.today)
        countdown = f" · {days_left}" if days_left else ""
        # the cram mark and the again flag come before the card's place, which a narrow terminal cuts: a cram
        # session must say that its grades leave the schedule alone at any width
        cram = " [reverse] cram: schedule untouched [/reverse]" if session.cram else ""
        topics = f"  [i]topics: {markup_text(', '.join(session.topics))}[/i]" if session.topics else ""
        again = self.again_flag()
        self.query_one("#top", SafeStatic).update(
            f"[b]{progress}[/b]{saved}{countdown}{cram}{again} │ {markup_text(where)}{flags}{topics}"
        )

    def again_flag(self) -> str:
        """The top bar's mark on a card back for a same-day repeat: the grade that brought it back."""
        card = self.card
        if card is None:
            return ""
        state = self.context.session.state_of(card.id)
        if not (state.repeat_pending and state.last_review_day == self.context.session.today):
            return ""
        given = self.grades_given.get(card.id)
        if given:
            return f" [reverse] again: you gave it {given[-1]} [/reverse]"
        return f" [reverse] again: graded below {SAME_DAY_REPEAT_BELOW} earlier today [/reverse]"  # before a restart

    async def show_current(self, *, composed: bool = False) -> None:
        """Show the session's current card; `composed`: its form was composed with the screen."""
        with self.app.batch_update():
            await self._show_current(composed)

    async def _show_current(self, composed: bool) -> None:
        self.revealed = False
        self.locked = None
        self.suggested = None
        self.answer_record = None
        self.shown_at = time.monotonic()
        self.query_one("#body", Page).let_go()  # the card before held its verdict in view
        self.post_message(self.CardShown())
        self.update_top()
        card = self.card
        form = self.form if composed else await self.place_form(card)
        self.query_one("#verdict", SafeStatic).update("")
        answer = self.query_one("#answer", MarkdownView)
        answer.display = False  # an inline style: no stylesheet pass, as a class would need
        answer.show("")
        prompt = self.query_one("#prompt", MarkdownView)
        gradebar = self.query_one("#gradebar", SafeStatic)
        if card is None:
            prompt.show(done_text(self.context.session))
            gradebar.update("[b]q[/b] quit", layout=False)
            return
        prompt.show(form.prompt_markdown() if form else card.prompt)
        if form is not None:
            if form.FOCUS_AT_START:
                form.focus_first()
            else:  # the page has the focus: arrows scroll the evidence, tab or enter go into the form
                self.set_focus(self.query_one("#body"))
            self.show_field_hint()
        elif card.kind == "kernel":
            self.locked = self.kernel_lock(card)
            if self.locked:
                self.query_one("#verdict", SafeStatic).update(f"[b]locked:[/b] {markup_text(self.locked)}")
                gradebar.update("[b]space[/b] reveal the answer (the editor is locked)", layout=False)
            else:
                gradebar.update("[b]space[/b] open the editor / reveal", layout=False)
        else:
            gradebar.update("[b]space[/b] reveal the answer", layout=False)
        self.query_one("#body", Page).hold(None)  # the card from its top, as it is laid out

    def show_field_hint(self) -> None:
        """While the form takes answers, the bar says what the keys do in the focused field (or on the page)."""
        if self.form is None or self.form.submitted or self.revealed:
            return
        self.query_one("#gradebar", SafeStatic).update(self.form.hint(self.focused), layout=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.show_field_hint()

    async def place_form(self, card: "Card | None") -> "AnswerForm | None":
        """The card's form in #work: the form there, showing this card, when it has the same fields; else a new one."""
        form = self.form_for(card) if card is not None else None
        if form is not None and self.form is not None and self.form.same_fields(form):
            self.form.take_card(form)  # no widgets removed and mounted: the next card shows sooner
            return self.form
        work_area = self.query_one("#work", Vertical)
        if work_area.children:
            await work_area.remove_children()
        self.form = form
        if form is not None:
            await work_area.mount(form)
        return form

    def form_for(self, card: "Card") -> "AnswerForm | None":
        """The card's answer form (unmounted), or None for a kind without one or a card whose form cannot be made."""
        from drill.ui.answering import form_for

        try:
            return form_for(card, self.context.session.seed_for(card.id, self.context.seed))
        except ValueError as exc:  # e.g. a template problem in an unchecked deck added with --decks
            self.notify(f"{card.where}: {card.id}: {exc}", severity="error", timeout=10)
            return None

    async def reveal_answer(self) -> None:
        card = self.card
        if card is None:
            return
        self.revealed = True
        body = self.form.answer_markdown() if self.form else card.answer
        if card.rubric:
            body += "\n\n**A strong answer names:**\n" + "\n".join(f"- {r}" for r in card.rubric)
        if card.sources:
            body += "\n\n*Sources: " + "; ".join(card.sources) + "*"
        answer = self.query_one("#answer", MarkdownView)
        answer.show(body)
        answer.display = True
        self.query_one("#gradebar", SafeStatic).update(suggested_grade_hint(self.suggested) + GRADE_KEYS)

    # -- actions -----------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "grade":
            return self.card is not None and self.revealed
        if action == "quit_when_done":
            return self.card is None
        if action in ("suspend", "bury", "reveal"):
            return self.card is not None
        return True

    async def reveal_or_check(self) -> None:
        if self.form is not None:
            await self.check_form()
        else:
            await self.action_reveal()

    async def action_reveal(self) -> None:
        card = self.card
        if card is None or self.revealed:
            return
        if self.form is not None:
            self.form.focus_first(empty=True)  # a form is checked from its last field, never by a stray key
            return
        if card.kind == "kernel" and await self.open_kernel_screen(card):
            return
        await self.reveal_answer()

    async def check_form(self) -> None:
        if self.form is None or self.revealed:
            return
        problem = self.form.unreadable()
        if problem is not None:  # nothing is checked or shown yet: the learner mends the field
            self.query_one("#verdict", SafeStatic).update(f"[yellow]{markup_text(problem)}[/yellow]")
            return
        seconds = time.monotonic() - self.shown_at
        verdict = self.form.check(seconds)
        self.suggested = verdict.suggested_grade
        self.answer_record = verdict.record or None
        self.query_one("#verdict", SafeStatic).update(verdict.summary)
        self.form.freeze()
        self.set_focus(None)
        await self.reveal_answer()
        # the verdict at the top, the answer's start under it; with nothing checked, the question stays instead
        page = self.query_one("#body", Page)
        page.hold(self.query_one("#verdict", SafeStatic) if verdict.summary else None)

    def on_answer_form_mended(self, message: AnswerForm.Mended) -> None:
        message.stop()
        if not self.revealed:  # "choose a reading first" no longer applies
            self.query_one("#verdict", SafeStatic).update("")

    async def on_answer_form_submitted(self, message: AnswerForm.Submitted) -> None:
        message.stop()
        if self.form is not None and self.form.submitted:  # not a late message from the card before (same form)
            await self.check_form()

    async def action_accept(self) -> None:
        """Enter outside a field: back into the form while answering; accept the suggestion once shown."""
        if self.card is None:
            return
        if self.revealed:
            if self.suggested is not None:
                await self.action_grade(self.suggested)
        elif self.form is not None:
            self.form.focus_first(empty=True)
        else:
            await self.action_reveal()

    def action_leave_input(self) -> None:
        self.set_focus(self.query_one("#body"))  # the page: arrows scroll it, enter or space go back

    async def action_grade(self, grade: int) -> None:
        if self.card is None or not self.revealed:
            return
        store = await self.ready_store()
        if store is None:
            return
        card = self.card
        self.keep_answer(card.id)
        graded = self.context.session.grade(
            store,
            grade,
            now=self.context.clock(),
            duration_ms=int((time.monotonic() - self.shown_at) * 1000),
            answer=self.answer_record,
        )
        self.grades_given.setdefault(card.id, []).append(grade)
        if graded.after.leech and not graded.before.leech:
            self.notify(f"{card.id} is a leech: it has lapsed {graded.after.lapses} times", severity="warning")
        await self.show_current()

    def keep_answer(self, card_id: str) -> None:  # as the card leaves (graded, set aside): an undo puts it back
        self.answers_left[card_id] = self.form.kept() if self.form is not None else KeptAnswer()

    async def action_undo(self) -> None:
        store = await self.ready_store()
        if store is None:
            return
        last = self.context.session.undo(store)
        if last is None:
            self.notify("nothing to undo")
            return
        from drill.study.session import SetAside

        what = "grade"
        if isinstance(last, SetAside):
            what = {"suspend": "suspension", "bury": "burial"}.get(last.how, "grade")
        elif self.grades_given.get(last.card_id):
            self.grades_given[last.card_id].pop()
        await self.show_current()
        kept = self.answers_left.pop(last.card_id, KeptAnswer())
        said = f"[i]undid the {what} of {markup_text(last.card_id)}[/i]"
        if self.form is not None and self.card is not None and self.card.id == last.card_id and kept:
            self.form.put_back(kept)
            if kept.gave_something:
                said += ": your answer is back, to check again or change"
        if self.locked:
            said += f"\n[b]locked:[/b] {markup_text(self.locked)}"
        # said under the card, where the verdict was, not in a toast over the answer just put back
        verdict = self.query_one("#verdict", SafeStatic)
        verdict.update(said)
        self.query_one("#body", Page).hold(verdict, top=False)

    async def action_suspend(self) -> None:
        await self._set_aside(self.context.session.suspend, "suspended {} · ctrl+z undoes it")

    async def action_bury(self) -> None:
        await self._set_aside(self.context.session.bury, "buried {} until tomorrow · ctrl+z undoes it")

    async def _set_aside(self, set_aside: Callable[["ReviewWriter"], str | None], message: str) -> None:
        """Take the current card out of today's queue (suspend or bury) and show the next."""
        if self.card is None:
            return
        store = await self.ready_store()
        if store is not None:
            self.keep_answer(self.card.id)
            card_id = set_aside(store)
            self.notify(message.format(card_id))
            await self.show_current()

    async def action_quit_when_done(self) -> None:
        if self.card is None:
            self.app.exit(0)

    # -- commands that open other things: the palette, mocks, stats, the browser, focused practice --
    # Each posts a message the app routes (drill.ui.routes); the kernel editor the screen opens itself.
    def palette_commands(self) -> Iterator[SystemCommand]:
        """The review's commands by name in the command palette (ctrl+p)."""
        return review_commands(self)

    # The messages load with the first of them (the review's first paint does without them).
    def ask_for_practice(self, topics: tuple[str, ...] = (), weak: int | None = None, cram: bool = False) -> None:
        from drill.ui.messages import PracticeAsked

        self.post_message(PracticeAsked(topics, weak, cram))

    def action_open_mock(self) -> None:
        from drill.ui.messages import MockAsked

        self.post_message(MockAsked())

    def action_open_stats(self) -> None:
        from drill.ui.messages import StatsAsked

        self.post_message(StatsAsked())

    def action_open_browser(self) -> None:
        from drill.ui.messages import BrowserAsked

        self.post_message(BrowserAsked())

    # -- kernel cards --------------------------------------------------------
    def kernel_lock(self, card: "Card") -> str | None:
        """Why this kernel card cannot run here (its harness comes from a folder not trusted), or None."""
        from drill.kernel.trust import locked_reason

        return locked_reason(card, self.context.data_dir)

    async def open_kernel_screen(self, card: "Card") -> bool:
        if self.locked is not None:
            return False
        try:
            from drill.ui.kernel_screen import KernelScreen
        except ImportError:
            return False
        store = await self.ready_writes()
        if store is None:
            return True

        async def graded(grade: int | None) -> None:
            if grade is None:
                return
            self.revealed = True
            await self.action_grade(grade)

        self.app.push_screen(
            KernelScreen(
                card,
                store=store,
                data_dir=self.context.data_dir,
                judge=self.context.judge(),
                last_runs=self.context.kernel_runs,
            ),
            graded,
        )
        return True
