"""Answer forms: a concept's typed answer, and the checked kinds (shape traces, memory ledgers, diagnoses).

Keys typed into a form are handled by the field that received them, in the
order they arrived, so a fast burst or a paste reaches the checker exactly as
typed. A form is checked only when the learner presses enter on its last
field; once it is submitted, keys still on their way go nowhere.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

from drill.cards.field_values import mappings, texts
from drill.cards.model import Card
from drill.cards.question import question_markdown
from drill.ui.answer_fields import AnswerInput, ChoiceList, InOrderKeys
from drill.ui.form_base import AnswerFormBase
from drill.ui.screen_text import SafeLabel, SafeStatic, markup_text


@dataclass(frozen=True)
class KeptAnswer:
    """What the learner gave a form, kept as the card leaves (graded, set aside) to be put back: the text typed
    into each field, the reading chosen and whether the listed readings were shown."""

    typed: tuple[str, ...] = ()
    chosen: int | None = None
    choices_shown: bool = False

    @property
    def gave_something(self) -> bool:
        """Whether it holds anything the learner gave: text typed, or a reading chosen."""
        return any(self.typed) or self.chosen is not None


@dataclass
class FormVerdict:
    suggested_grade: int | None  # None where nothing could be checked (a concept answer)
    summary: str
    record: dict[str, object]


def check_mark(ok: bool) -> str:
    """✓ or ✗ before a checked answer's line, in colour."""
    if ok:
        return "[green]✓[/green]"
    return "[red]✗[/red]"


REFUSAL_SECONDS = 3.0  # how long a refusal notice shows; the same refusal is not repeated meanwhile

# The bar under the page says what the keys do where the focus is (`AnswerForm.hint`)
ON_THE_PAGE = "reading the page: [b]↑↓[/b] scroll · [b]tab[/b] or [b]enter[/b] to answer"
# A page with printed output (a diagnosis's evidence) shows it unwrapped: a line wider than the pane scrolls sideways
ON_A_PAGE_WITH_OUTPUT = (
    "reading the page: [b]↑↓[/b] scroll · [b]←→[/b] wide output · [b]tab[/b] or [b]enter[/b] to answer"
)
NEXT_FIELD = "[b]enter[/b] or [b]tab[/b] next field"
CHECKS = "[b]enter[/b] checks your answers"
BACK_A_FIELD = " · [b]shift+tab[/b] back"
LEAVE_FIELD = " · [b]esc[/b] scroll the page"


class AnswerForm(AnswerFormBase):
    """A form the learner fills in before the answer is shown."""

    DEFAULT_CSS = "AnswerForm { height: auto; }"
    FOCUS_AT_START = True
    _refused = ""  # the last refusal shown, and when: a burst of keys refused shows it once
    _refused_at = 0.0

    class Submitted(Message):
        """The learner pressed enter on the last field: check the form."""

    class Mended(Message):
        """What kept the form from being checked is put right (a reading is chosen now): a word said about it
        on the screen is stale."""

    def __init__(self, card: Card) -> None:
        super().__init__()
        self.card = card
        self.submitted = False

    def prompt_markdown(self) -> str:
        return question_markdown(self.card)  # a diagnosis's evidence, a shape trace's given line: as the report

    def answer_markdown(self) -> str:
        return self.card.answer

    def inputs(self) -> list[Input]:
        return list(self.query(Input))

    def fields(self) -> list[Widget]:
        return [w for w in self.query("AnswerInput, ChoiceList") if not w.disabled]

    def live_field(self) -> InOrderKeys | None:
        """The field that takes keys now: the focused field of this form, or none once submitted."""
        if self.submitted:
            return None
        focused = self.screen.focused
        if isinstance(focused, InOrderKeys) and focused in self.fields():
            return focused
        return None

    def kept(self) -> KeptAnswer:
        """What the learner gave, kept as the card leaves (graded, set aside) for an undo to put back."""
        return KeptAnswer(typed=tuple(box.value for box in self.inputs()))

    def put_back(self, kept: KeptAnswer) -> None:
        """The answer as it was before the grade that was undone, to check or change again."""
        for box, value in zip(self.inputs(), kept.typed):
            box.value = value

    def answered(self, field: Widget) -> bool:
        """Whether the learner has given this field an answer (text typed into it)."""
        return isinstance(field, Input) and bool(field.value)

    def hint(self, focused: Widget | None) -> str:
        """What the keys do where the focus is: in one of the fields (enter goes on, or checks on the last) or on
        the page around the form."""
        fields = self.fields()
        if focused is None or focused not in fields:
            return ON_A_PAGE_WITH_OUTPUT if "```" in self.prompt_markdown() else ON_THE_PAGE
        index = fields.index(focused)
        back = BACK_A_FIELD if index else ""
        if index == len(fields) - 1:
            return CHECKS + back + LEAVE_FIELD
        return NEXT_FIELD + back + LEAVE_FIELD

    def refuse(self, words: str) -> None:
        """Say, in a notice, why a key did nothing: no key typed while answering is dropped without a word."""
        now = time.monotonic()
        if words == self._refused and now - self._refused_at < REFUSAL_SECONDS:
            return
        self._refused = words
        self._refused_at = now
        self.app.notify(words, title="key not taken", timeout=REFUSAL_SECONDS)

    def focus_first(self, empty: bool = False) -> None:
        """Focus the first field (or the first unanswered one) at once, so the next key lands in it."""
        fields = self.fields()
        if empty:
            fields = [f for f in fields if not self.answered(f)] or fields
        if fields and not self.submitted:
            if isinstance(fields[0], AnswerInput) and fields[0].value:
                fields[0].mend()  # back to a field with text in it: carry on typing, do not replace it
            else:
                self.screen.set_focus(fields[0])

    def step(self, field: Widget, direction: int, *, submit_at_end: bool = False) -> None:
        fields = self.fields()
        index = fields.index(field) + direction if field in fields else 0
        if 0 <= index < len(fields):
            self.screen.set_focus(fields[index])
        elif submit_at_end and index >= len(fields):
            self.submit()

    def submit(self) -> None:
        """Stop taking keys at once and ask the screen to check the form."""
        if self.submitted:
            return
        self.submitted = True
        self.screen.set_focus(None)
        self.post_message(self.Submitted())

    def paste(self, field: Input, text: str) -> None:
        """A paste: its first line goes into this field, further lines into the fields after it; lines beyond the
        last field join it, a space between them (a paragraph pasted into a concept answer keeps all its lines)."""
        lines = text.splitlines() or [""]
        inputs: list[Input] = [f for f in self.fields() if isinstance(f, AnswerInput)]
        start = inputs.index(field)
        room = len(inputs) - start
        if len(lines) > room:
            lines = lines[: room - 1] + [" ".join(line.strip() for line in lines[room - 1 :] if line.strip())]
        for target, line in zip(inputs[start:], lines):
            if target is field:
                target.insert_text_at_cursor(line)
            else:
                target.value = line
        last = inputs[min(len(inputs), start + len(lines)) - 1]
        if last is not field:
            self.screen.set_focus(last)

    def freeze(self) -> None:
        self.submitted = True
        for widget in self.query("Input, OptionList"):
            widget.disabled = True

    def check(self, seconds: float) -> FormVerdict:
        raise NotImplementedError

    def unreadable(self) -> str | None:
        """Words on a field whose text cannot be read at all, or None. With words, the form takes keys again
        and that field has the focus, to be mended: nothing is checked yet."""
        problem = self.first_unreadable()
        if problem is not None:
            self.submitted = False
        return problem

    def first_unreadable(self) -> str | None:
        """The kinds that read numbers say which field they cannot read (and focus it)."""
        return None

    def field_specs(self) -> list[tuple[str, str, str]]:
        """Typed fields (label markup, placeholder, id), top to bottom; none where a form composes other widgets."""
        return []

    def compose(self) -> ComposeResult:
        for label, placeholder, field_id in self.field_specs():
            yield SafeLabel(label, classes="step-label")
            yield AnswerInput(placeholder=placeholder, id=field_id, compact=True)

    def same_fields(self, other: "AnswerForm") -> bool:
        """Whether `other` composes the same fields, so that this form can show its card instead (`take_card`)."""
        ids = [spec[2] for spec in self.field_specs()]
        return type(other) is type(self) and bool(ids) and [spec[2] for spec in other.field_specs()] == ids

    def take_card(self, other: "AnswerForm") -> None:
        """Show `other`'s card (and what it drew) in these widgets, as `other` would show it: every field empty."""
        self.card = other.card
        self.submitted = False
        labels = self.query(".step-label").results(SafeLabel)
        for (label, placeholder, field_id), shown in zip(self.field_specs(), labels):
            shown.update(label)
            box = self.query_one(f"#{field_id}", Input)
            box.value = ""
            box.placeholder = placeholder
            box.disabled = False
            box.remove_class("wrong")


YOU_WROTE = "[b]You wrote:[/b]"


class ConceptForm(AnswerForm):
    """An explanation: typed (kept in the log beside the grade) or said out loud; enter shows the answer.

    The field is one line; an answer longer than it is shown whole, wrapped, under it as it is typed.
    """

    DEFAULT_CSS = "ConceptForm { height: auto; } ConceptForm #typed-whole { color: $text-muted; height: auto; }"

    def field_specs(self) -> list[tuple[str, str, str]]:
        return [("Your answer (type it, or say it out loud and press enter):", "optional: a sentence or two", "typed")]

    def compose(self) -> ComposeResult:
        yield from super().compose()
        whole = SafeStatic("", id="typed-whole")
        whole.display = False
        yield whole

    def on_input_changed(self, event: Input.Changed) -> None:
        whole = self.query_one("#typed-whole", SafeStatic)
        long = len(event.value) >= max(10, event.input.content_size.width - 1)
        whole.update(markup_text(event.value) if long else "")
        whole.display = long

    def hint(self, focused: Widget | None) -> str:
        if focused is not None and focused in self.fields():
            return "answer in the field or out loud · [b]enter[/b] show the answer" + LEAVE_FIELD
        return "reading the page: [b]↑↓[/b] scroll · [b]tab[/b] or [b]enter[/b] back to your answer"

    def take_card(self, other: AnswerForm) -> None:
        super().take_card(other)
        whole = self.query_one("#typed-whole", SafeStatic)
        whole.update("")
        whole.display = False
        self.query_one("#typed", Input).display = True
        self.display = True

    def freeze(self) -> None:
        """The answer once, whole, under the question: the one-line field (which cuts a long answer) gives way to
        its wrapped text; with nothing typed (said out loud) the form steps aside for the answer.

        The field is hidden either way, so it is not disabled as other forms' fields are: enabled again for the
        next card, it would be restyled once more beside the focus moving into it (a pass over its styles for
        nothing seen, on the way to the next card)."""
        self.submitted = True
        box = self.query_one("#typed", Input)
        typed = box.value.strip()
        if not typed:
            self.display = False
            return
        self.query_one(".step-label", SafeLabel).update(YOU_WROTE)
        box.display = False
        whole = self.query_one("#typed-whole", SafeStatic)
        whole.update(markup_text(typed))
        whole.display = True

    def check(self, seconds: float) -> FormVerdict:
        typed = self.query_one("#typed", Input).value.strip()
        return FormVerdict(None, "", {"typed": typed} if typed else {})  # the form shows what was written


class ShapeTraceForm(AnswerForm):
    def field_specs(self) -> list[tuple[str, str, str]]:
        return [
            (f"{i}. {markup_text(str(step['label']))}", "shape, e.g. (B, S, D)", f"step{i}")
            for i, step in enumerate(mappings(self.card.fields["steps"]), 1)
        ]

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import check_shape_steps, echoed, suggest_grade

        given = [i.value for i in self.inputs()]
        results = check_shape_steps(self.card, given)
        lines = []
        for i, r in enumerate(results, 1):
            mark = check_mark(r.ok)
            extra = "" if r.ok else f"  expected [b]{markup_text(r.expected)}[/b]"
            lines.append(f"{mark} {i}. {markup_text(echoed(r.given) or '(blank)')}{extra}")
            self.query_one(f"#step{i}", Input).set_class(not r.ok, "wrong")
        right = sum(r.ok for r in results)
        grade = suggest_grade(right / len(results), seconds)
        return FormVerdict(
            grade, f"{right}/{len(results)} steps right\n" + "\n".join(lines), {"steps": given, "right": right}
        )


PLACEHOLDERS = {
    "bytes": "bytes, units welcome: 2.5 GiB, 2.68 GB, 2.7e9, 320 KiB",
    "seconds": "a time: 12 ms, 3.5 us, 0.2 s",
    "flops": "FLOPs: 1.2e15, 3.4 PFLOP",
    "count": "a count: 8030261248, 7.5B, 64",
    "fraction": "a fraction or percent: 0.25, 25%",
    "flop_per_byte": "FLOP per byte: 295",
    "bytes_per_second": "a rate: 3.35 TB/s, 900 GB/s",
}


def field_label(label: str, unit: str) -> str:
    """A numeric field's label with its unit in brackets once: a label that already ends with it is kept as it is."""
    named = f"({unit})"
    return label if label.rstrip().endswith(named) else f"{label} {named}"


class LedgerForm(AnswerForm):
    def __init__(self, card: Card, rng: random.Random) -> None:
        super().__init__(card)
        from drill.cards.templating import draw_params, render

        self.draw = draw_params(card, rng)
        self.rendered = render(card, self.draw)

    def prompt_markdown(self) -> str:
        return self.rendered.prompt

    def field_specs(self) -> list[tuple[str, str, str]]:
        return [
            (
                markup_text(field_label(expected.label, expected.unit)),
                PLACEHOLDERS.get(expected.unit, "a number"),
                f"ans{i}",
            )
            for i, expected in enumerate(self.rendered.answers, 1)
        ]

    def take_card(self, other: AnswerForm) -> None:
        assert isinstance(other, LedgerForm)
        # before the labels are made from them
        self.draw = other.draw
        self.rendered = other.rendered
        super().take_card(other)

    def answer_markdown(self) -> str:
        from drill.quantities import format_quantity

        rows = ["| term | formula | value |", "| --- | --- | --- |"]
        for t in self.rendered.ledger:
            rows.append(f"| {t.term} | {t.formula} | {format_quantity(t.value, t.unit)} |")
        for a in self.rendered.answers:
            rows.append(f"| **{a.label}** |  | **{format_quantity(a.value, a.unit)}** |")
        return "\n".join(rows) + "\n\n" + self.rendered.answer

    def first_unreadable(self) -> str | None:
        """A typo such as `2.5 GBB` is sent back to be mended, not marked wrong; a blank field counts as wrong."""
        from drill.cards.number_check import check_number

        for i, expected in enumerate(self.rendered.answers, 1):
            box = self.query_one(f"#ans{i}", AnswerInput)
            if box.value.strip():
                verdict = check_number(box.value, expected.value, expected.unit, expected.tolerance)
                if verdict.parsed_value is None:
                    box.mend()
                    return f"{expected.label}: {verdict.message}. Mend it, or clear it to count it wrong."
        return None

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import echoed, suggest_grade
        from drill.cards.number_check import check_number
        from drill.quantities import format_quantity

        lines: list[str] = []
        given: list[str] = []
        right = 0
        for i, expected in enumerate(self.rendered.answers, 1):
            text = self.query_one(f"#ans{i}", Input).value
            verdict = check_number(text, expected.value, expected.unit, expected.tolerance)
            given.append(text)
            right += verdict.ok
            mark = check_mark(verdict.ok)
            note = f"  {markup_text(verdict.message)}" if verdict.message else ""
            line = f"{mark} {markup_text(expected.label)}: {markup_text(echoed(text) or '(blank)')}"
            if verdict.ok:  # the verdict's message already names the value ("right: 32.1 GB (29.9 GiB)")
                lines.append(f"{line}{note}")
            else:
                lines.append(f"{line} · expected {markup_text(format_quantity(expected.value, expected.unit))}{note}")
        n = len(self.rendered.answers)
        grade = suggest_grade(right / n, seconds)
        record = {"draw": self.draw, "given": given, "right": right}
        return FormVerdict(grade, f"{right}/{n} right\n" + "\n".join(lines), record)


CHOICE_LABEL = "Your reading of the evidence (↑↓, enter to choose):"
NONE_CHOSEN_LABEL = "Your reading of the evidence: [b yellow]none chosen yet[/b yellow] (↑↓, enter to choose):"
CHOOSE_FIRST = "choose a reading first: ↑↓ to the one the evidence points to, then enter"


class DiagnosisForm(AnswerForm):
    """Evidence first; the learner tabs to the choices (shown in a fresh order each review).

    The form is checked only once a reading is chosen: enter on the last field
    with none chosen says so and goes back to the choices, so no review is
    recorded for a reading the learner never made.
    """

    FOCUS_AT_START = False

    def __init__(self, card: Card, rng: random.Random) -> None:
        super().__init__(card)
        choices = texts(card.fields["choices"])
        rng.shuffle(choices)
        self.choices = choices
        self.chosen: int | None = None
        self.told_to_choose = False  # "choose a reading first" was said: choosing one takes it back

    def compose(self) -> ComposeResult:
        yield SafeLabel(CHOICE_LABEL, classes="step-label", id="choice-label")
        yield ChoiceList(*[self.lettered(i) for i in range(len(self.choices))], id="choices")
        yield SafeLabel("Your next experiment (one line; compared with the rubric):", classes="step-label")
        yield AnswerInput(placeholder="change X, hold Y, measure Z", id="experiment", compact=True)

    def kept(self) -> KeptAnswer:
        return replace(super().kept(), chosen=self.chosen)

    def put_back(self, kept: KeptAnswer) -> None:
        super().put_back(kept)
        chosen = kept.chosen
        if chosen is not None and 0 <= chosen < len(self.choices):
            self.query_one(ChoiceList).highlighted = chosen
            self.choose(chosen)

    def hint(self, focused: Widget | None) -> str:
        if isinstance(focused, ChoiceList):
            return "[b]↑↓[/b] to a reading · [b]enter[/b] chooses it · [b]tab[/b] next field" + LEAVE_FIELD
        return super().hint(focused)

    def answered(self, field: Widget) -> bool:
        if isinstance(field, ChoiceList):
            return self.chosen is not None
        return super().answered(field)

    def first_unreadable(self) -> str | None:
        """No reading chosen: back to the choices (scrolled into view) with the reason beside them."""
        if self.chosen is not None:
            return None
        self.told_to_choose = True
        label = self.query_one("#choice-label", SafeLabel)
        label.update(NONE_CHOSEN_LABEL)
        self.screen.set_focus(self.query_one(ChoiceList))  # scrolled into view, as any focus
        self.call_after_refresh(label.scroll_visible, animate=False)  # and the words above it
        return CHOOSE_FIRST

    def choose(self, index: int) -> None:
        if self.told_to_choose:
            self.told_to_choose = False
            self.post_message(self.Mended())
        self.chosen = index
        label = self.lettered(index)
        self.query_one("#choice-label", SafeLabel).update(f"Your reading of the evidence: [b]{markup_text(label)}[/b]")

    def lettered(self, index: int) -> str:
        """A reading as it is listed: its letter (a, b, c ...) and its words."""
        return f"{chr(ord('a') + index)}. {self.choices[index]}"

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import check_choice, suggest_grade

        choice = self.choices[self.chosen] if self.chosen is not None else ""
        ok = bool(choice) and check_choice(self.card, choice)
        experiment = self.query_one("#experiment", Input).value
        grade = suggest_grade(1.0 if ok else 0.0, seconds)
        mark = check_mark(ok)
        summary = f"{mark} you chose {markup_text(choice or '(nothing)')}"
        if not ok:
            summary += f"; the evidence points to [b]{markup_text(self.card.fields['correct'])}[/b]"
        if experiment.strip():
            summary += "\nNow compare your next experiment with the rubric below."
        else:  # half the question unanswered: the reading alone earns at most a 4
            grade = min(grade, 4)
            summary += "\nNo next experiment written (half the question): 4 at most; the rubric below has one."
        return FormVerdict(
            grade, summary, {"choice": choice, "correct": ok, "experiment": experiment, "order": self.choices}
        )


def form_for(card: Card, seed: int) -> AnswerForm | None:
    """The answer form for a checked card; `seed` fixes what this review draws."""
    rng = random.Random(seed)
    if card.kind == "concept":
        return ConceptForm(card)
    if card.kind == "shape_trace":
        return ShapeTraceForm(card)
    if card.kind == "memory_ledger":
        return LedgerForm(card, rng)
    if card.kind == "diagnosis":
        return DiagnosisForm(card, rng)
    return None
