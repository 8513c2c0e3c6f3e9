"""The answer forms of a mock interview where they differ from a review's: a diagnosis read in the learner's
own words first (the listed readings are a hint that costs), and a numeric card with room for the working."""

from __future__ import annotations

import random
from dataclasses import replace

from textual.app import ComposeResult
from textual.widgets import Input

from drill.cards.field_values import texts
from drill.cards.model import Card
from drill.mock.grading import CHOICES_COST, read_choice
from drill.mock.hard import hard_question
from drill.ui.answer_fields import AnswerInput, ChoiceList
from drill.ui.answering import AnswerForm, FormVerdict, KeptAnswer, LedgerForm, form_for
from drill.ui.screen_text import SafeLabel
from drill.ui.screen_text import markup_text as escape  # Textual markup: every bracket escaped

SHOW_CHOICES_KEY = "ctrl+o"
CHOICES_COST_WORDS = f"the listed readings are a hint that costs {CHOICES_COST:.0%} of this question"
READING_LABEL = "Your reading: what bounds it, and the evidence that says so (your own words):"
CHOOSE_LABEL = "The listed readings (↑↓, enter to choose):"
WORKING_LABEL = "Your working (optional; each right figure on the way earns credit):"


class MockDiagnosisForm(AnswerForm):
    """Evidence first; the learner writes the reading, then the next experiment. The listed readings stay
    hidden until the learner asks for them (`show_choices`), at a cost."""

    FOCUS_AT_START = False

    def __init__(self, card: Card, order: list[str]) -> None:
        super().__init__(card)
        self.choices = order
        self.chosen: int | None = None
        self.choices_shown = False

    def compose(self) -> ComposeResult:
        yield SafeLabel(READING_LABEL, classes="step-label")
        yield AnswerInput(placeholder="e.g. launch-bound: the GPU idles between kernels", id="reading", compact=True)
        yield SafeLabel(CHOOSE_LABEL, classes="step-label", id="choice-label")
        yield ChoiceList(*[self.lettered(i) for i in range(len(self.choices))], id="choices")
        yield SafeLabel("Your next experiment (change X, hold Y, measure Z):", classes="step-label")
        yield AnswerInput(placeholder="change X, hold Y, measure Z", id="experiment", compact=True)

    def on_mount(self) -> None:
        for widget in (self.query_one("#choice-label", SafeLabel), self.query_one(ChoiceList)):
            widget.display = False
        self.query_one(ChoiceList).disabled = True  # not a field until shown

    def lettered(self, index: int) -> str:
        return f"{chr(ord('a') + index)}. {self.choices[index]}"

    def show_choices(self) -> bool:
        """List the readings (a hint, costed); False when they are shown already or the answer is in."""
        if self.choices_shown or self.submitted:
            return False
        self.choices_shown = True
        choices = self.query_one(ChoiceList)
        choices.disabled = False
        choices.display = True
        self.query_one("#choice-label", SafeLabel).display = True
        self.screen.set_focus(choices)
        return True

    def choose(self, index: int) -> None:
        if not self.choices_shown:
            return
        self.chosen = index
        self.query_one("#choice-label", SafeLabel).update(f"Your choice: [b]{escape(self.lettered(index))}[/b]")
        self.post_message(self.Mended())

    def reading(self) -> str:
        return self.query_one("#reading", Input).value.strip()

    def experiment(self) -> str:
        return self.query_one("#experiment", Input).value.strip()

    def said(self) -> str:
        """All the learner wrote (reading and experiment): what rubric points are checked against."""
        return f"{self.reading()} {self.experiment()}".strip()

    def matched(self) -> int | None:
        """The listed reading the answer stands for: the one chosen, or the one the typed reading names."""
        if self.choices_shown:
            return self.chosen
        return read_choice(self.reading(), self.choices).index

    def first_unreadable(self) -> str | None:
        if self.choices_shown:
            if self.chosen is not None:
                return None
            self.screen.set_focus(self.query_one(ChoiceList))
            return "choose one of the listed readings: ↑↓, then enter"
        match = read_choice(self.reading(), self.choices)
        if match.index is not None:
            return None
        self.query_one("#reading", AnswerInput).mend()
        return f"{match.why}. Say it in other words, or {SHOW_CHOICES_KEY} lists them ({CHOICES_COST_WORDS})."

    def kept(self) -> KeptAnswer:
        return replace(super().kept(), chosen=self.chosen, choices_shown=self.choices_shown)

    def put_back(self, kept: KeptAnswer) -> None:
        """A skipped diagnosis come round again: what was typed, and the listed readings if they were shown
        (their cost stands) with the one chosen."""
        super().put_back(kept)
        if not kept.choices_shown:
            return
        self.show_choices()
        chosen = kept.chosen
        if chosen is not None and 0 <= chosen < len(self.choices):
            self.query_one(ChoiceList).highlighted = chosen
            self.choose(chosen)

    def check(self, seconds: float) -> FormVerdict:
        index = self.matched()
        named = self.choices[index] if index is not None else ""
        right = named == self.card.fields["correct"]
        summary = f"you read it as {escape(named or '(nothing)')}"
        record = {
            "reading": self.reading(),
            "choice": named if self.choices_shown else "",
            "named": named,
            "correct": right,
            "choices_shown": self.choices_shown,
            "experiment": self.experiment(),
            "order": self.choices,
        }
        return FormVerdict(None, summary, record)


class MockLedgerForm(LedgerForm):
    """A numeric card with a line for the working above its answers. In hard mode (`hard`) the figures of its
    GPUs and models are withheld from the prompt and its answers are checked within the looser hard-mode
    tolerance (drill.mock.hard)."""

    def __init__(self, card: Card, rng: random.Random, *, hard: bool = False) -> None:
        super().__init__(card, rng)
        self.hard = hard
        if hard:
            self.rendered = hard_question(card, self.draw).rendered

    def field_specs(self) -> list[tuple[str, str, str]]:
        working = (WORKING_LABEL, "e.g. per token 160 KiB; x 4096 tokens = 640 MiB", "working")
        return [working, *super().field_specs()]

    def working(self) -> str:
        return self.query_one("#working", Input).value.strip()

    def check(self, seconds: float) -> FormVerdict:
        verdict = super().check(seconds)
        verdict.record["working"] = self.working()
        if self.hard:
            verdict.record["hard"] = True
        return verdict


def mock_form_for(card: Card, seed: int, *, hard: bool = False) -> AnswerForm | None:
    """The form a mock asks `card` with; `seed` fixes what it draws (the same as a review's form would);
    `hard`: a numeric card asked in hard mode."""
    if card.kind == "diagnosis":
        order = texts(card.fields["choices"])
        random.Random(seed).shuffle(order)
        return MockDiagnosisForm(card, order)
    if card.kind == "memory_ledger":
        return MockLedgerForm(card, random.Random(seed), hard=hard)
    return form_for(card, seed)
