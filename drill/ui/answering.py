"""Answer forms for the checked kinds: shape traces, memory ledgers, diagnoses."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList

from drill.cards.model import Card

if TYPE_CHECKING:
    from drill.ui.app import DrillApp


class AnswerInput(Input):
    """An answer field: enter moves to the next field at once (so fast typing lands
    in the right box); enter on the last field submits the form."""

    async def action_submit(self) -> None:
        form = next((a for a in self.ancestors if isinstance(a, AnswerForm)), None)
        if form is not None and form.inputs() and form.inputs()[-1] is not self:
            self.screen.focus_next()
            return
        await super().action_submit()


@dataclass
class FormVerdict:
    suggested_grade: int
    summary: str
    record: dict[str, Any]


class AnswerForm(Vertical):
    """A form the learner fills in before the answer is shown."""

    DEFAULT_CSS = "AnswerForm { height: auto; }"
    FOCUS_AT_START = True

    def __init__(self, card: Card) -> None:
        super().__init__()
        self.card = card

    def prompt_markdown(self) -> str:
        return self.card.prompt

    def answer_markdown(self) -> str:
        return self.card.answer

    def inputs(self) -> list[Input]:
        return list(self.query(Input))

    def focus_first(self) -> None:
        focusable = [w for w in self.query("Input, OptionList") if w.focusable]
        if focusable:
            focusable[0].focus()

    def freeze(self) -> None:
        for widget in self.query("Input, OptionList"):
            widget.disabled = True

    def check(self, seconds: float) -> FormVerdict:
        raise NotImplementedError


class ShapeTraceForm(AnswerForm):
    def prompt_markdown(self) -> str:
        return f"{self.card.prompt}\n\n**Given:** `{self.card.fields['given']}`"

    def compose(self) -> ComposeResult:
        for i, step in enumerate(self.card.fields["steps"], 1):
            yield Label(f"{i}. {escape(str(step['label']))}", classes="step-label")
            yield AnswerInput(placeholder="shape, e.g. (B, S, D)", id=f"step{i}", compact=True)

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import check_shape_steps, suggest_grade

        given = [i.value for i in self.inputs()]
        results = check_shape_steps(self.card, given)
        lines = []
        for i, r in enumerate(results, 1):
            mark = "[green]✓[/green]" if r.ok else "[red]✗[/red]"
            extra = "" if r.ok else f"  expected [b]{escape(r.expected)}[/b]"
            lines.append(f"{mark} {i}. {escape(r.given or '(blank)')}{extra}")
            self.query_one(f"#step{i}", Input).set_class(not r.ok, "wrong")
        right = sum(r.ok for r in results)
        grade = suggest_grade(right / len(results), seconds)
        return FormVerdict(grade, f"{right}/{len(results)} steps right\n" + "\n".join(lines), {"steps": given, "right": right})


PLACEHOLDERS = {
    "bytes": "bytes, units welcome: 2.5 GiB, 2.68 GB, 2.7e9, 320 KiB",
    "seconds": "a time: 12 ms, 3.5 us, 0.2 s",
    "flops": "FLOPs: 1.2e15, 3.4 PFLOP",
    "count": "a count: 8030261248, 7.5B, 64",
    "fraction": "a fraction or percent: 0.25, 25%",
    "flop_per_byte": "FLOP per byte: 295",
    "bytes_per_second": "a rate: 3.35 TB/s, 900 GB/s",
}


class LedgerForm(AnswerForm):
    def __init__(self, card: Card, rng: random.Random) -> None:
        super().__init__(card)
        from drill.cards.templating import draw_params, render

        self.draw = draw_params(card, rng)
        self.rendered = render(card, self.draw)

    def prompt_markdown(self) -> str:
        return self.rendered.prompt

    def compose(self) -> ComposeResult:
        for i, expected in enumerate(self.rendered.answers, 1):
            yield Label(f"{escape(expected.label)} ({expected.unit})", classes="step-label")
            yield AnswerInput(placeholder=PLACEHOLDERS.get(expected.unit, "a number"), id=f"ans{i}", compact=True)

    def answer_markdown(self) -> str:
        from drill.cards.units import format_quantity

        rows = ["| term | formula | value |", "| --- | --- | --- |"]
        for t in self.rendered.ledger:
            rows.append(f"| {t.term} | {t.formula} | {format_quantity(t.value, t.unit)} |")
        for a in self.rendered.answers:
            rows.append(f"| **{a.label}** |  | **{format_quantity(a.value, a.unit)}** |")
        return "\n".join(rows) + "\n\n" + self.rendered.answer

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import suggest_grade
        from drill.cards.units import check_number, format_quantity

        lines, given, right = [], [], 0
        for i, expected in enumerate(self.rendered.answers, 1):
            text = self.query_one(f"#ans{i}", Input).value
            verdict = check_number(text, expected.value, expected.unit, expected.tolerance)
            given.append(text)
            right += verdict.ok
            mark = "[green]✓[/green]" if verdict.ok else "[red]✗[/red]"
            note = f"  {escape(verdict.message)}" if verdict.message else ""
            lines.append(
                f"{mark} {escape(expected.label)}: {escape(text or '(blank)')} · "
                f"expected {escape(format_quantity(expected.value, expected.unit))}{note}"
            )
        n = len(self.rendered.answers)
        grade = suggest_grade(right / n, seconds)
        record = {"draw": self.draw, "given": given, "right": right}
        return FormVerdict(grade, f"{right}/{n} right\n" + "\n".join(lines), record)


class DiagnosisForm(AnswerForm):
    FOCUS_AT_START = False  # the evidence comes first; the learner tabs to the choices
    def prompt_markdown(self) -> str:
        return f"```text\n{self.card.fields['evidence'].rstrip()}\n```\n\n{self.card.prompt}"

    def compose(self) -> ComposeResult:
        yield Label("What bounds it? (arrows, enter)", classes="step-label")
        yield OptionList(*[f"{chr(97 + i)}. {c}" for i, c in enumerate(self.card.fields["choices"])], id="choices")
        yield Label("Your next experiment (one line; compared with the rubric):", classes="step-label")
        yield AnswerInput(placeholder="change X, hold Y, measure Z", id="experiment", compact=True)

    chosen: int | None = None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.chosen = event.option_index
        self.query_one("#experiment", Input).focus()

    def check(self, seconds: float) -> FormVerdict:
        from drill.cards.checking import check_choice, suggest_grade

        choices = self.card.fields["choices"]
        choice = choices[self.chosen] if self.chosen is not None else ""
        ok = bool(choice) and check_choice(self.card, choice)
        experiment = self.query_one("#experiment", Input).value
        grade = suggest_grade(1.0 if ok else 0.0, seconds)
        mark = "[green]✓[/green]" if ok else "[red]✗[/red]"
        summary = f"{mark} you chose {escape(choice or '(nothing)')}"
        if not ok:
            summary += f"; the evidence points to [b]{escape(self.card.fields['correct'])}[/b]"
        summary += "\nNow compare your next experiment with the rubric below."
        return FormVerdict(grade, summary, {"choice": choice, "correct": ok, "experiment": experiment})


def form_for(card: Card, app: "DrillApp") -> AnswerForm | None:
    if card.kind == "shape_trace":
        return ShapeTraceForm(card)
    if card.kind == "memory_ledger":
        rng = random.Random(app.seed) if app.seed is not None else random.Random()
        return LedgerForm(card, rng)
    if card.kind == "diagnosis":
        return DiagnosisForm(card)
    return None
