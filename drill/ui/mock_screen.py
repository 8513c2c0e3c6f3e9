"""The mock interview screen: one question at a time against the clock, answers hidden until submitted."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.strip import Strip
from textual.widgets import Footer, SelectionList, Static

from drill.ui.answer_fields import Page
from drill.ui.answering import AnswerForm, DiagnosisForm, LedgerForm
from drill.ui.markdown_view import MarkdownView
from drill.ui.press_again import PressAgain
from drill.ui.screen_keys import PageScreen, form_bindings, scroll_bindings

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.kernel.client import JudgeClient
    from drill.mock.record import MockRecorder
    from drill.mock.run import MockRun, Slot
    from drill.ui.answering import FormVerdict

SELF_CHECKED = ("concept", "diagnosis")
NO_RUBRIC = "my answer covered what the expected answer says"
# Ending early is a key no other screen binds (ctrl+g is Stats on the review screen), and it asks first.
END_KEY = "ctrl+l"
END_RISK = "End the mock now? Questions not answered count as unanswered; an answer not submitted is not scored."
QUIT_RISK = "A mock is running: quitting ends it (submitted answers are kept; one not submitted is not scored)."
KEYS_HINT = f"[b]ctrl+n[/b] skip · [b]{END_KEY}[/b] end"


def chosen_reading(form: AnswerForm) -> int | None:
    """The reading chosen in a diagnosis form (an index into its choices); None for other forms."""
    if isinstance(form, DiagnosisForm):
        return form.chosen
    return None


class Checklist(SelectionList[int]):
    """The rubric points to tick: space ticks, enter goes on to the next question."""

    BINDINGS = [Binding("enter", "screen.next", "Next question", show=False)]

    def action_select(self) -> None:
        """Space ticks the point highlighted when it was pressed (Textual's list ticks the one highlighted when
        its message is handled: in a burst, space down space ticked the last point twice and the first not)."""
        if self.highlighted is not None:
            self.toggle(self.get_option_at_index(self.highlighted))

    def render_line(self, y: int) -> Strip:
        """A point not ticked shows an empty box (Textual draws an X in both states, told apart by colour)."""
        strip = super().render_line(y)
        index = self.scroll_offset.y + y
        if index >= self.option_count or self.get_option_at_index(index).value in self.selected:
            return strip
        segments = list(strip)
        if len(segments) > 1 and segments[1].text.strip():
            segments[1] = Segment(" " * len(segments[1].text), segments[1].style)
            return Strip(segments, strip.cell_length)
        return strip


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class MockScreen(PageScreen[dict[str, Any]]):
    """Dismisses with the mock's report once it ends (all answered, time up, or ended early).

    An answer counts only once the learner submits it: one typed but not submitted when the mock ends
    (time up, ended early, the app quit) is kept with its question, which counts as unanswered."""

    SCROLL_ID = "mbody"

    BINDINGS = [
        Binding("ctrl+n", "skip", "Skip (comes back later)", id="mock.skip"),
        Binding(END_KEY, "end", "End the mock", id="mock.end"),
        Binding("enter", "next", "Next question", id="mock.next", show=False),
        Binding("space", "open_kernel", "Open the editor", id="mock.open_kernel", show=False),
        *form_bindings("mock"),
        *scroll_bindings("mock"),
    ]
    DEFAULT_CSS = """
    MockScreen #mtop { height: 1; padding: 0 1; background: $boost; }
    MockScreen #mtop.hurry { background: $error 40%; }
    MockScreen #mbody { height: 1fr; padding: 0 1; }
    MockScreen #mwork { height: auto; }
    MockScreen #mverdict { height: auto; }
    MockScreen #mrubric { height: auto; max-height: 12; display: none; }
    MockScreen #mrubric.shown { display: block; }
    MockScreen #manswer { border-top: solid $primary; display: none; }
    MockScreen #manswer.shown { display: block; }
    MockScreen #mbar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(
        self,
        run: "MockRun",
        recorder: "MockRecorder",
        cards: Mapping[str, "Card"],
        store: object,  # the workspace's Store, handed on to a kernel card's screen
        *,
        judge: Callable[[], "JudgeClient"] | None = None,
        data_dir: Path,
        seed: int | None = None,
    ) -> None:
        super().__init__()
        self.run = run
        self.recorder = recorder
        self.cards = cards
        self.store = store
        self.judge = judge
        self.data_dir = data_dir
        self.seed = seed
        self.slot: Slot | None = None
        self.form: AnswerForm | None = None
        self.verdict: FormVerdict | None = None
        self.kernel_grade: int | None = None
        self.shown_at = time.monotonic()
        self.ended = False
        self.end_guard = PressAgain(END_KEY, "end the mock")
        # what was typed into a skipped question, put back when it comes round again
        self.drafts: dict[str, tuple[list[str], int | None]] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="mtop")
        with Page(id="mbody"):
            yield MarkdownView(id="mprompt")
            yield Vertical(id="mwork")
            yield Static(id="mverdict")
            yield Checklist(id="mrubric")
            yield MarkdownView(id="manswer")
        yield Static(id="mbar")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        self.set_interval(1.0, self.tick)
        await self.ask_next()

    # -- the clock ------------------------------------------------------------------
    async def tick(self) -> None:
        if self.ended:
            return
        if self.run.time_left() <= 0:
            self.close_current()  # before the run closes: a submitted answer is scored, a typed one kept
        if not self.run.tick():
            self.notify("time is up: the mock has ended", timeout=6)
            await self.end()
            return
        self.update_top()

    def update_top(self) -> None:
        slot = self.slot
        left = self.run.time_left()
        if slot is None:
            self.query_one("#mtop", Static).update(f"[b]mock[/b] · {clock_text(left)} left")
            return
        where = f"{slot.kind.replace('_', ' ')} · {slot.topic}"  # the topic id, as the stats and reports name it
        follow = " · follow-up" if slot.follow_up_of else ""
        spent = self.run.question_elapsed()
        top = self.query_one("#mtop", Static)
        top.update(  # the clocks first, so a narrow terminal cuts the topic, never the time left
            f"[b]{clock_text(left)} left[/b] │ question {slot.position}/{len(self.run.slots)}{follow}: "
            f"{clock_text(spent)} of {clock_text(slot.budget_s)} │ {escape(where)}"
        )
        top.set_class(left < 60 or spent > slot.budget_s, "hurry")

    # -- asking ------------------------------------------------------------------------
    async def ask_next(self) -> None:
        slot = self.run.begin()
        if slot is None:
            await self.end()
            return
        self.slot = slot
        self.verdict = None
        self.kernel_grade = None
        self.shown_at = time.monotonic()
        work = self.query_one("#mwork", Vertical)
        await work.remove_children()
        self.query_one("#mverdict", Static).update("")
        rubric = self.query_one("#mrubric", SelectionList)
        rubric.clear_options()
        rubric.remove_class("shown")
        answer = self.query_one("#manswer", MarkdownView)
        answer.remove_class("shown")
        answer.show("")
        card = self.cards[slot.card_id]
        from drill.ui.answering import form_for

        seed = hash((slot.card_id, self.recorder.mock_id, self.seed)) & 0xFFFFFFFF
        try:
            self.form = form_for(card, seed)
        except ValueError as exc:
            self.notify(f"{card.where}: {card.id}: {exc}", severity="error", timeout=10)
            self.form = None
        self.query_one("#mprompt", MarkdownView).show(self.form.prompt_markdown() if self.form else card.prompt)
        if self.form is not None:
            await work.mount(self.form)
            self.restore_draft(slot.card_id)
            if self.form.FOCUS_AT_START:
                self.form.focus_first()
                hint = f"answer, [b]enter[/b] on the last field submits · {KEYS_HINT}"
            else:  # long evidence: the page has the focus, arrows scroll it until the learner tabs into the answer
                self.set_focus(self.query_one("#mbody"))
                hint = f"read (↑↓ scroll), then [b]tab[/b] to answer · {KEYS_HINT}"
        else:
            hint = f"[b]space[/b] open the editor · {KEYS_HINT}"
        self.query_one("#mbar", Static).update(hint)
        self.query_one("#mbody", VerticalScroll).scroll_home(animate=False)
        self.update_top()

    def on_answer_form_mended(self, message: AnswerForm.Mended) -> None:
        message.stop()
        if self.verdict is None:  # "choose a reading first" no longer applies
            self.query_one("#mverdict", Static).update("")

    async def on_answer_form_submitted(self, message: AnswerForm.Submitted) -> None:
        message.stop()
        if self.form is None or self.verdict is not None or self.slot is None:
            return
        problem = self.form.unreadable()
        if problem is not None:  # mended before it is scored (at time-up it is scored as it stands)
            self.query_one("#mverdict", Static).update(f"[yellow]{escape(problem)}[/yellow]")
            return
        self.verdict = self.form.check(time.monotonic() - self.shown_at)
        self.form.freeze()
        self.set_focus(None)
        self.query_one("#mverdict", Static).update(self.verdict.summary)
        answer = self.query_one("#manswer", MarkdownView)
        answer.show(self.form.answer_markdown())
        answer.add_class("shown")
        card = self.cards[self.slot.card_id]
        if self.slot.kind in SELF_CHECKED:
            rubric = self.query_one("#mrubric", SelectionList)
            points = list(card.rubric) or [NO_RUBRIC]
            rubric.add_options([(point, i) for i, point in enumerate(points)])
            rubric.add_class("shown")
            rubric.highlighted = 0
            rubric.focus()
            hint = "tick each point you covered ([b]space[/b]) · [b]enter[/b] next question"
        else:
            hint = "[b]enter[/b] next question"
        self.query_one("#mbar", Static).update(hint)
        if self.slot.kind not in SELF_CHECKED:
            # the verdict and the expected answer start at the top of the view
            verdict = self.query_one("#mverdict", Static)
            self.call_after_refresh(verdict.scroll_visible, animate=False, top=True)
        # a self-checked question keeps its place: the question stays in view and the focused points to tick
        # are scrolled just into view beneath it (the verdict above them is empty for such a card)

    def on_selection_list_selected_changed(self, message: SelectionList.SelectedChanged[int]) -> None:
        message.stop()

    # -- scoring ------------------------------------------------------------------------
    def score(self) -> tuple[float, dict[str, Any], list[str]]:
        """The current question's score (0-1), what was answered, and the points missed."""
        assert self.slot is not None
        card = self.cards[self.slot.card_id]
        if self.kernel_grade is not None:
            return self.kernel_grade / 5, {"verdict": f"kernel graded {self.kernel_grade}/5"}, []
        verdict = self.verdict
        assert verdict is not None
        record = dict(verdict.record)
        missed: list[str] = []
        if self.slot.kind in SELF_CHECKED:
            points = list(card.rubric) or [NO_RUBRIC]
            ticked = set(self.query_one("#mrubric", SelectionList).selected)
            missed = [p for i, p in enumerate(points) if i not in ticked]
            covered = len(ticked) / len(points)
            if self.slot.kind == "diagnosis":
                right = bool(record.get("correct"))
                if not right:
                    missed.insert(0, f"the evidence points to {card.fields.get('correct')}")
                return 0.5 * right + 0.5 * covered, record, missed
            return covered, record, missed
        if self.slot.kind == "shape_trace":
            from drill.cards.checking import check_shape_steps

            results = check_shape_steps(card, record.get("steps", []))
            labels = [str(s["label"]) for s in card.fields["steps"]]
            missed = [f"{labels[i]}: {r.expected}" for i, r in enumerate(results) if not r.ok]
            return sum(r.ok for r in results) / max(1, len(results)), record, missed
        if self.slot.kind == "memory_ledger" and isinstance(self.form, LedgerForm):
            answers = self.form.rendered.answers
            from drill.cards.number_check import check_number
            from drill.quantities import format_quantity

            given = record.get("given", [])
            for expected, text in zip(answers, given):
                if not check_number(text, expected.value, expected.unit, expected.tolerance).ok:
                    missed.append(f"{expected.label}: {format_quantity(expected.value, expected.unit)}")
            return record.get("right", 0) / max(1, len(answers)), record, missed
        return 0.0, record, missed

    async def action_next(self) -> None:
        if self.ended or self.slot is None:
            return
        if self.verdict is None and self.kernel_grade is None:
            if self.form is not None:
                self.form.focus_first(empty=True)
            return
        score, record, missed = self.score()
        slot = self.slot
        follow = self.run.submit(score, record, missed)
        self.recorder.answered(slot)
        if follow is not None:
            self.notify("a follow-up question comes next", timeout=3)
        await self.ask_next()

    def restore_draft(self, card_id: str) -> None:
        draft = self.drafts.pop(card_id, None)
        if draft is None or self.form is None:
            return
        values, chosen = draft
        for box, value in zip(self.form.inputs(), values):
            box.value = value
        if chosen is not None and isinstance(self.form, DiagnosisForm):
            self.form.choose(chosen)

    async def action_skip(self) -> None:
        if self.ended or self.slot is None or self.verdict is not None:
            return
        if self.form is not None:  # keep what was typed for when the question comes back
            values = [box.value for box in self.form.inputs()]
            self.drafts[self.slot.card_id] = (values, chosen_reading(self.form))
        self.run.skip()
        self.recorder.save()
        await self.ask_next()

    async def action_open_kernel(self) -> None:
        slot = self.slot
        if slot is None or slot.kind != "kernel" or self.kernel_grade is not None or self.judge is None:
            return
        from drill.kernel.trust import locked_reason
        from drill.ui.kernel_screen import KernelScreen

        card = self.cards[slot.card_id]
        reason = locked_reason(card, self.data_dir)
        if reason:
            self.notify(f"locked: {reason}", severity="warning", timeout=8)
            return

        async def graded(grade: int | None) -> None:
            if grade is None or self.slot is not slot:
                return
            self.kernel_grade = grade
            await self.action_next()

        self.app.push_screen(KernelScreen(card, store=self.store, data_dir=self.data_dir, judge=self.judge()), graded)

    # -- ending -------------------------------------------------------------------------
    async def action_end(self) -> None:
        """End the mock early, once a second press confirms it."""
        if self.ended or not self.end_guard.confirmed(self.notify, END_RISK):
            return
        await self.end()

    def quit_warning(self) -> str:
        """What a quit would cut short (the app asks before quitting mid-mock)."""
        return "" if self.ended else QUIT_RISK

    def close_current(self) -> None:
        """The mock is ending with a question on screen. An answer submitted (its verdict shown, its rubric
        being ticked) is scored; one typed or chosen but never submitted is kept with the question, which
        counts as unanswered: the learner never said it was their answer."""
        slot = self.slot
        form = self.form
        if self.ended or slot is None or self.run.current is not slot or self.kernel_grade is not None:
            return
        if self.verdict is not None:
            score, record, missed = self.score()
            self.run.submit(score, record, missed)
            self.recorder.answered(slot)
            return
        typed = form is not None and any(box.value.strip() for box in form.inputs())
        if form is not None and (typed or chosen_reading(form) is not None):
            slot.answer = dict(form.check(time.monotonic() - self.shown_at).record, submitted=False)

    async def end(self) -> None:
        """Close the mock (answered questions kept, the rest unanswered) and hand back its report."""
        if self.ended:
            return
        self.close_current()
        self.ended = True
        self.run.quit()  # no-op when it already finished or ran out of time
        report = self.recorder.finish()
        self.dismiss(report)

    def stop_for_exit(self) -> None:
        """The app is quitting mid-mock: keep what was answered and close the mock as quit."""
        if not self.ended:
            self.close_current()
            self.ended = True
            self.run.quit()
            self.recorder.finish()
