"""What an answer form's fields and its screen ask of the form: the fields (drill.ui.answer_fields) and the
page screens (drill.ui.screen_keys) know a form by this base, and drill.ui.answering's AnswerForm is the form.
Kept apart so that the fields, the screens and the forms import one another in one direction only."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Input


class AnswerFormBase(Vertical):
    """The part of an answer form its fields and its screen call."""

    submitted = False  # checked (or frozen): its fields take no more keys

    def fields(self) -> list[Widget]:
        """The form's fields in order."""
        raise NotImplementedError

    def live_field(self) -> Widget | None:
        """The field that takes keys now, or None."""
        raise NotImplementedError

    def refuse(self, words: str) -> None:
        """Say that a key was not taken, and why."""
        raise NotImplementedError

    def focus_first(self, empty: bool = False) -> None:
        """Focus the first field (the first empty one with `empty`)."""
        raise NotImplementedError

    def step(self, field: Widget, direction: int, *, submit_at_end: bool = False) -> None:
        """Move from `field` to the next (1) or previous (-1) field; past the last, submit when asked to."""
        raise NotImplementedError

    def paste(self, field: Input, text: str) -> None:
        """A paste into `field`, spread over the fields after it."""
        raise NotImplementedError

    def choose(self, index: int) -> None:
        """Choose the reading at `index`: only a diagnosis has readings, so other forms take nothing."""
