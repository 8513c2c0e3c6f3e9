"""The mock interview screen: one question at a time against the clock, answers and verdicts held until the end.

A rubric card's points are ticked after the answer is submitted and before anything of the expected answer
is shown (their titles only); a point is ticked only for an answer that says enough for it
(drill.mock.answers.check_tick), or anyway with a reason the learner gives (drill.ui.rubric_ticks keeps the
ticks). In practice mode the verdict and the expected answer follow each question, and the ticks are final once
they are shown. The grading itself is drill.mock's; this screen asks, collects and shows.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Footer

from drill.cards.scenario import is_clarify, stage_type_of
from drill.mock.answers import RUBRIC_KINDS, grade_answer, kernel_grade
from drill.mock.follow_ups import FollowUpKind
from drill.mock.grading import HINT_COST, QuestionGrade
from drill.mock.report_record import MockReport
from drill.ui.answer_fields import Page
from drill.ui.answering import AnswerForm, DiagnosisForm, KeptAnswer
from drill.ui.markdown_view import MarkdownView
from drill.ui.mock_forms import CHOICES_COST_WORDS, SHOW_CHOICES_KEY, MockDiagnosisForm, mock_form_for
from drill.ui.press_again import PressAgain
from drill.ui.rubric_ticks import TICK_HINT, RubricTicks
from drill.ui.screen_keys import PageScreen, form_bindings, scroll_bindings
from drill.ui.screen_text import SafeStatic
from drill.ui.screen_text import markup_text as escape  # Textual markup: every bracket escaped

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.kernel.client import JudgeClient
    from drill.mock.record import MockRecorder
    from drill.mock.run import FollowUpSlot, MockRun, Slot
    from drill.ui.kernel_screen import KernelAttemptWriter, KernelScreen

# Ending early is a key no other screen binds (ctrl+g is Stats on the review screen), and it asks first.
END_KEY = "ctrl+l"
END_RISK = "End the mock now? Questions not answered count as unanswered; an answer not submitted is not scored."
QUIT_RISK = "A mock is running: quitting ends it (submitted answers are kept; one not submitted is not scored)."
SKIP_KEY = "ctrl+n"
KEYS_HINT = f"[b]{SKIP_KEY}[/b] skip · [b]{END_KEY}[/b] end"
# At a follow-up the skip key declines it: a follow-up never comes back.
FOLLOW_UP_KEYS_HINT = f"[b]{SKIP_KEY}[/b] decline · [b]{END_KEY}[/b] end"
BUILDING_REPORT = "building your report…"
LAST_DECLINE_RISK = "This follow-up is the last question: declining it ends the mock."
HELD = "answers and verdicts are held until the mock ends"


class Stage(enum.Enum):
    """Where the question on screen stands."""

    ANSWERING = "answering"  # the form takes the answer
    TICKING = "ticking"  # submitted; its rubric points are ticked, nothing of the expected answer shown
    SHOWN = "shown"  # practice mode: its verdict and expected answer are on screen, the ticks final


def chosen_reading(form: AnswerForm) -> int | None:
    """The reading chosen in a diagnosis form (an index into its choices); None for other forms."""
    if isinstance(form, (DiagnosisForm, MockDiagnosisForm)):
        return form.chosen
    return None


def kernel_record(screen: "KernelScreen") -> dict[str, object]:
    """What a kernel question's answer keeps for the report: the judge's verdict on the file submitted, the
    reference solution (in a held mock the learner first sees it there)."""
    from drill.ui.verdict_view import one_line

    record: dict[str, object] = {}
    if screen.verdict is not None:
        record["judged"] = one_line(screen.verdict)
    try:
        record["reference"] = screen.reference_markdown()
    except OSError:  # the report goes without it
        pass
    return record


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def verdict_text(grade: QuestionGrade) -> str:
    """A grade in words for practice mode: the score, what was graded, what was missed."""
    lines = [f"[b]{grade.score:.0%}[/b] · {escape('; '.join(grade.parts))}"]
    if abs(grade.score - grade.evidence) > 0.005:
        lines.append(f"graded {grade.evidence:.0%}: points ticked by your override are not graded")
    lines += [f"[red]✗[/red] {escape(m)}" for m in grade.missed]
    return "\n".join(lines)


class MockScreen(PageScreen[MockReport]):
    """Dismisses with the mock's report once it ends (all answered, time up, or ended early).

    An answer counts only once the learner submits it: one typed but not submitted when the mock ends
    (time up, ended early, the app quit) is kept with its question, which counts as unanswered."""

    SCROLL_ID = "mbody"

    BINDINGS = [
        Binding(SKIP_KEY, "skip", "Skip (or decline a follow-up)", id="mock.skip"),
        Binding(END_KEY, "end", "End the mock", id="mock.end"),
        Binding("enter", "next", "Next question", id="mock.next", show=False),
        Binding("space", "open_kernel", "Open the editor", id="mock.open_kernel", show=False),
        Binding(SHOW_CHOICES_KEY, "show_choices", "List the readings (costs)", id="mock.show_choices", show=False),
        Binding("escape", "cancel_override", "Cancel", id="mock.cancel_override", show=False),
        *form_bindings("mock"),
        *scroll_bindings("mock"),
    ]
    DEFAULT_CSS = """
    MockScreen #mtop { height: 1; padding: 0 1; background: $boost; }
    MockScreen #mtop.hurry { background: $error 40%; }
    MockScreen #mbody { height: 1fr; padding: 0 1; }
    MockScreen #mwork { height: auto; }
    MockScreen #mverdict { height: auto; }
    MockScreen #manswer { border-top: solid $primary; display: none; }
    MockScreen #manswer.shown { display: block; }
    MockScreen #mbar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(
        self,
        run: "MockRun",
        recorder: "MockRecorder",
        cards: Mapping[str, "Card"],
        store: "KernelAttemptWriter",  # the workspace's write path, handed on to a kernel card's screen
        *,
        judge: Callable[[], "JudgeClient"] | None = None,
        data_dir: Path,
        seed: int | None = None,
        practice: bool = False,
        hard: bool = False,
    ) -> None:
        super().__init__()
        self.run = run
        self.recorder = recorder
        self.cards = cards
        self.store = store
        self.judge = judge
        self.data_dir = data_dir
        self.seed = seed
        self.practice = practice  # show each verdict and expected answer after the question
        self.hard = hard  # numeric questions without their GPU and model figures (drill.mock.hard)
        self.slot: Slot | None = None
        self.follow: FollowUpSlot | None = None  # the follow-up being asked, when it is one
        self.card: Card | None = None  # the card asked now (a follow-up's own)
        self.form: AnswerForm | None = None
        self.stage = Stage.ANSWERING
        self.record: dict[str, object] | None = None  # the submitted answer, as its form gave it
        self.kernel_grade: int | None = None
        self.kernel_answer: dict[str, object] = {}  # a kernel question's verdict and its reference, for the report
        self.shown_at = time.monotonic()
        self.ended = False
        self.report_built = False  # the mock's report was built and stored (it is built once)
        self.end_guard = PressAgain(END_KEY, "end the mock")
        self.last_decline_guard = PressAgain(SKIP_KEY, "decline it and end the mock")
        # what was typed into a skipped question, put back when it comes round again
        self.drafts: dict[str, KeptAnswer] = {}

    def compose(self) -> ComposeResult:
        yield SafeStatic(id="mtop")
        with Page(id="mbody"):
            yield MarkdownView(id="mprompt")
            yield Vertical(id="mwork")
            yield SafeStatic(id="mverdict")
            yield RubricTicks(id="mticks")
            yield MarkdownView(id="manswer")
        yield SafeStatic(id="mbar")
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
        if self.run.follow_up_over():
            await self.close_follow_up()
            return
        self.update_top()

    def update_top(self) -> None:
        slot = self.slot
        left = self.run.time_left()
        if slot is None:
            self.query_one("#mtop", SafeStatic).update(f"[b]mock[/b] · {clock_text(left)} left")
            return
        kind = self.card.kind if self.card is not None else slot.kind
        stage = stage_type_of(self.card) if self.card is not None else None
        if stage is not None:  # a round's stage: what it asks, then the topic
            kind = f"{stage.value} stage"
        where = f"{kind.replace('_', ' ')} · {slot.topic}"  # the topic id, as the stats and reports name it
        follow = " · follow-up" if self.follow is not None else ""
        if self.hard:
            where += " · hard mode"
        budget = self.follow.budget_s if self.follow is not None else slot.budget_s
        spent = self.run.question_elapsed()
        top = self.query_one("#mtop", SafeStatic)
        top.update(  # the clocks first, so a narrow terminal cuts the topic, never the time left
            f"[b]{clock_text(left)} left[/b] │ question {slot.position}/{len(self.run.slots)}{follow}: "
            f"{clock_text(spent)} of {clock_text(budget)} │ {escape(where)}"
        )
        top.set_class(left < 60 or spent > budget, "hurry")

    # -- asking ------------------------------------------------------------------------
    async def ask_next(self) -> None:
        slot = self.run.begin()
        if slot is None:
            await self.end()
            return
        self.slot = slot
        self.follow = self.run.asking_follow_up()
        card = self.follow.card if self.follow is not None else self.cards[slot.card_id]
        self.card = card
        self.stage = Stage.ANSWERING
        self.record = None
        self.kernel_grade = None
        self.kernel_answer = {}
        self.shown_at = time.monotonic()
        work = self.query_one("#mwork", Vertical)
        await work.remove_children()
        self.query_one("#mverdict", SafeStatic).update("")
        self.query_one(RubricTicks).clear()
        answer = self.query_one("#manswer", MarkdownView)
        answer.remove_class("shown")
        answer.show("")
        seed = hash((card.id, self.recorder.mock_id, self.seed)) & 0xFFFFFFFF
        try:
            self.form = mock_form_for(card, seed, hard=self.hard)
        except ValueError as exc:
            self.notify(f"{card.where}: {card.id}: {exc}", severity="error", timeout=10)
            self.form = None
        prompt = self.form.prompt_markdown() if self.form else card.prompt
        if self.follow is not None:
            self.follow.shown = prompt
            prompt = f"{self.follow_up_heading(self.follow)}\n\n{prompt}"
        self.query_one("#mprompt", MarkdownView).show(prompt)
        body = self.query_one("#mbody", Page)
        body.let_go()  # the last question's field is gone
        body.scroll_home(animate=False)
        if self.form is not None:
            await work.mount(self.form)
            self.restore_draft(card.id)
            if self.form.FOCUS_AT_START:  # the field is held in view as the page is laid out (on_descendant_focus)
                self.form.focus_first()
            else:  # long evidence: the page has the focus, arrows scroll it until the learner tabs into the answer
                self.set_focus(body)
                body.scroll_home(animate=False)
            hint = self.form_hint(answering=self.form.FOCUS_AT_START)
        else:
            hint = f"[b]space[/b] open the editor · {self.keys_hint()}"
        self.query_one("#mbar", SafeStatic).update(hint)
        self.update_top()

    def keys_hint(self) -> str:
        """The mock's own keys in the key bar: skip a question, or decline a follow-up; end the mock."""
        return FOLLOW_UP_KEYS_HINT if self.follow is not None else KEYS_HINT

    def form_hint(self, *, answering: bool) -> str:
        """The key bar under an answer form: typing into it (`answering`), or reading the page above it."""
        if answering:
            hint = f"answer, [b]enter[/b] on the last field submits · {self.keys_hint()}"
        else:
            hint = f"read (↑↓ scroll), then [b]tab[/b] to answer · {self.keys_hint()}"
        if isinstance(self.form, MockDiagnosisForm):
            hint += f" · [b]{SHOW_CHOICES_KEY}[/b] list the readings (costs)"
        return hint

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A field of the answer form took the focus: keep it in view, the question's last lines above it (it
        sits at the foot of the page, under the prompt), and say how to answer; the page took it: how to read."""
        form = self.form
        if self.ended or self.stage is not Stage.ANSWERING or form is None or form.submitted:
            return
        body = self.query_one("#mbody", Page)
        if event.widget is body:
            self.query_one("#mbar", SafeStatic).update(self.form_hint(answering=False))
        elif form in event.widget.ancestors:
            body.hold(event.widget, top=False)
            self.query_one("#mbar", SafeStatic).update(self.form_hint(answering=True))

    def follow_up_heading(self, follow: "FollowUpSlot") -> str:
        """The words above a follow-up: what kind it is, and for a narrower one that its hint costs."""
        if follow.kind is FollowUpKind.DEEPER:
            return "**Follow-up: a deeper question.** It can only add to the question before it."
        cost = f"{HINT_COST:.0%} of the follow-up"
        return f"**Follow-up: a narrower question, with a hint** (the hint costs {cost}; it can only add)."

    def on_answer_form_mended(self, message: AnswerForm.Mended) -> None:
        message.stop()
        if self.stage is Stage.ANSWERING:  # "choose a reading first" no longer applies
            self.query_one("#mverdict", SafeStatic).update("")

    async def on_answer_form_submitted(self, message: AnswerForm.Submitted) -> None:
        message.stop()
        form = self.form
        card = self.card
        if form is None or card is None or self.stage is not Stage.ANSWERING or self.slot is None:
            return
        problem = form.unreadable()
        if problem is not None:  # mended before it is scored (at time-up it is scored as it stands)
            self.query_one("#mverdict", SafeStatic).update(f"[yellow]{escape(problem)}[/yellow]")
            return
        self.record = dict(form.check(time.monotonic() - self.shown_at).record)
        form.freeze()
        self.set_focus(None)
        self.query_one("#mverdict", SafeStatic).update("")
        if card.kind in RUBRIC_KINDS and not is_clarify(card):  # a round's clarifying stage is graded by its asks
            self.stage = Stage.TICKING
            rubric = self.query_one(RubricTicks).ask(card, self.record)
            then = "the answer" if self.practice else "next"
            self.query_one("#mbar", SafeStatic).update(TICK_HINT.format(then=then))
            # the question keeps its place: the points to tick are scrolled just into view beneath it, once they
            # are laid out (a long diagnosis's evidence above them pushes them below the view)
            self.call_after_refresh(rubric.scroll_visible, animate=False)
            return
        if self.practice:
            self.reveal()
            return
        await self.commit()

    # -- ticking: drill.ui.rubric_ticks keeps the ticks; the keys that reach them are the screen's --------
    def action_override(self) -> None:
        """Tick the highlighted point though the answer's check refused it, once a reason is given."""
        self.query_one(RubricTicks).override()

    def action_cancel_override(self) -> None:
        self.query_one(RubricTicks).cancel_override()

    # -- grading -----------------------------------------------------------------------
    def grade(self) -> QuestionGrade:
        """The grade of the answer on screen (drill.mock.answers), with the points ticked."""
        if self.kernel_grade is not None:
            return kernel_grade(self.kernel_grade)
        assert self.card is not None and self.record is not None
        return grade_answer(self.card, self.record, self.query_one(RubricTicks).ticks())

    def answer_given(self) -> dict[str, object]:
        if self.kernel_grade is not None:
            return {"verdict": f"kernel graded {self.kernel_grade}/5", **self.kernel_answer}
        return dict(self.record or {})

    def reveal(self) -> None:
        """Practice mode: the verdict and the expected answer, the ticks final from now on."""
        assert self.form is not None
        self.stage = Stage.SHOWN
        self.query_one(RubricTicks).make_final()
        self.query_one("#mverdict", SafeStatic).update(verdict_text(self.grade()))
        answer = self.query_one("#manswer", MarkdownView)
        answer.show(self.form.answer_markdown())
        answer.add_class("shown")
        self.set_focus(None)
        self.query_one("#mbar", SafeStatic).update("[b]enter[/b] next question")
        verdict = self.query_one("#mverdict", SafeStatic)
        self.call_after_refresh(verdict.scroll_visible, animate=False, top=True)

    async def commit(self) -> None:
        """Record the answer on screen (its grade, its follow-up's place) and go on."""
        slot = self.slot
        assert slot is not None
        grade = self.grade()
        if self.follow is not None:
            self.run.submit_follow_up(grade, self.answer_given())
            self.recorder.follow_up_answered(slot)
        else:
            offered = self.run.submit(grade, self.answer_given())
            self.recorder.answered(slot)
            if offered is not None:
                self.notify("a follow-up comes next", timeout=3)
        await self.ask_next()

    async def action_next(self) -> None:
        if self.ended or self.slot is None:
            return
        if self.kernel_grade is not None:
            await self.commit()
            return
        if self.stage is Stage.ANSWERING:
            if self.form is not None:
                self.form.focus_first(empty=True)
            return
        if self.query_one(RubricTicks).overriding is not None:
            return  # enter in the reason's box ticks the point; elsewhere it waits for the reason
        if self.stage is Stage.TICKING and self.practice:
            self.reveal()
            return
        await self.commit()

    def action_show_choices(self) -> None:
        """A diagnosis in a mock: list the readings, a hint that costs."""
        if self.stage is Stage.ANSWERING and isinstance(self.form, MockDiagnosisForm) and self.form.show_choices():
            self.notify(f"{CHOICES_COST_WORDS} (shown in the report)", timeout=5)

    def restore_draft(self, card_id: str) -> None:
        draft = self.drafts.pop(card_id, None)
        if draft is not None and self.form is not None:
            self.form.put_back(draft)

    async def action_skip(self) -> None:
        if self.ended or self.slot is None or self.stage is not Stage.ANSWERING or self.card is None:
            return
        last = self.follow is not None and self.run.next_slot() is None
        if last and not self.last_decline_guard.confirmed(self.notify, LAST_DECLINE_RISK):
            return  # nothing comes after this follow-up: declining it would end the mock unasked
        if self.form is not None and self.follow is None:  # keep what was typed for when the question comes back
            self.drafts[self.card.id] = self.form.kept()
        self.run.skip()  # at a follow-up: declined, the question keeps its score
        self.recorder.save()
        await self.ask_next()

    async def close_follow_up(self) -> None:
        """The follow-up's minutes are spent: a submitted answer is recorded, one not submitted is dropped (the
        question keeps its score), and the mock goes on."""
        self.notify("the follow-up's minutes are spent: on to the next question", timeout=4)
        if self.stage is not Stage.ANSWERING:
            await self.commit()
            return
        self.run.end_follow_up()
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

        # in a mock that holds its answers the editor never shows the reference: the file is submitted with the
        # grade its verdict suggests, and the report shows the reference
        held = not self.practice
        screen = KernelScreen(card, store=self.store, data_dir=self.data_dir, judge=self.judge(), held=held)

        async def graded(grade: int | None) -> None:
            if grade is None or self.slot is not slot:
                return
            self.kernel_grade = grade
            self.kernel_answer = kernel_record(screen)
            await self.action_next()

        self.app.push_screen(screen, graded)

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
        """The mock is ending with a question on screen. An answer submitted (its points being ticked) is
        scored; one typed or chosen but never submitted is kept with the question, which counts as unanswered:
        the learner never said it was their answer."""
        slot = self.slot
        form = self.form
        if self.ended or slot is None or self.run.current is not slot:
            return
        if self.kernel_grade is not None or self.stage is not Stage.ANSWERING:
            grade = self.grade()
            if self.follow is not None:
                self.run.submit_follow_up(grade, self.answer_given())
                self.recorder.follow_up_answered(slot)
            else:
                self.run.submit(grade, self.answer_given())
                self.recorder.answered(slot)
            return
        typed = form is not None and any(box.value.strip() for box in form.inputs())
        if form is None or not (typed or chosen_reading(form) is not None):
            return
        kept = dict(form.check(time.monotonic() - self.shown_at).record, submitted=False)
        if self.follow is not None:
            self.follow.answer = kept
        else:
            slot.answer = kept

    async def end(self) -> None:
        """Close the mock (answered questions kept, the rest unanswered) and hand back its report, once the
        notice that it is being built is on screen (building it reads the weakness figures: seconds)."""
        if self.ended:
            return
        self.close_current()
        self.ended = True
        self.query_one("#mbody", Page).let_go()
        self.run.quit()  # no-op when it already finished or ran out of time
        self.query_one("#mbar", SafeStatic).update(BUILDING_REPORT)
        self.call_after_refresh(self.hand_back_report)

    def hand_back_report(self) -> None:
        if self.report_built:  # the app quit in between: the report was built then
            return
        self.report_built = True
        self.dismiss(self.recorder.finish())

    def stop_for_exit(self) -> None:
        """The app is quitting mid-mock: keep what was answered and close the mock as quit."""
        if not self.ended:
            self.close_current()
            self.ended = True
            self.run.quit()
        if not self.report_built:  # not yet, or ended and its report still to be built
            self.report_built = True
            self.recorder.finish()
