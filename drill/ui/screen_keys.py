"""Keys several screens share: scrolling a page without focus, and tab through an answer form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.containers import VerticalScroll

if TYPE_CHECKING:
    from drill.ui.answering import AnswerForm


def scroll_bindings(prefix: str, *, page_down: str = "pagedown") -> list[Binding]:
    """↑ ↓ PgUp PgDn scroll the screen's page (`action_scroll`); ids `<prefix>.down` and so on."""
    return [
        Binding("down", "scroll(1)", "Scroll down", id=f"{prefix}.down", show=False),
        Binding("up", "scroll(-1)", "Scroll up", id=f"{prefix}.up", show=False),
        Binding(page_down, "scroll(10)", "Page down", id=f"{prefix}.pagedown", show=False),
        Binding("pageup", "scroll(-10)", "Page up", id=f"{prefix}.pageup", show=False),
    ]


def form_bindings(prefix: str) -> list[Binding]:
    """tab / shift+tab move through the answer form (`action_next_field`)."""
    return [
        Binding("tab", "next_field(1)", "Next field", id=f"{prefix}.next_field", show=False),
        Binding("shift+tab", "next_field(-1)", "Previous field", id=f"{prefix}.previous_field", show=False),
    ]


class PageKeys:
    """Mixed into a screen with a scrolling page (SCROLL_ID) and, maybe, an answer form (`form`)."""

    SCROLL_ID = "body"
    form: "AnswerForm | None"
    # provided by textual.Screen
    query_one: Any
    focused: Any
    focus_next: Any
    focus_previous: Any

    def action_scroll(self, lines: int) -> None:
        self.query_one(f"#{self.SCROLL_ID}", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_next_field(self, direction: int) -> None:
        """Tab: from outside the form into its first empty field; inside it, to the next or previous field."""
        form = getattr(self, "form", None)
        if form is None or form.submitted:
            self.focus_next() if direction > 0 else self.focus_previous()
        elif self.focused in form.fields():
            form.step(self.focused, direction)
        else:
            form.focus_first(empty=True)
