"""Keys several screens share: scrolling a page without focus, tab through an answer form, the grade keys, and the
footer."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen, ScreenResultType
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from drill.study.sm2 import SHORT_MEANINGS
from drill.ui.form_base import AnswerFormBase

# The digits that grade, once the answer is shown (the review and kernel screens)
GRADE_KEYS = "  ".join(f"[b]{g}[/b] {m}" for g, m in SHORT_MEANINGS.items())


def suggested_grade_hint(suggested: int | None) -> str:
    """The words before GRADE_KEYS when a check suggests a grade: enter accepts it."""
    if suggested is None:
        return ""
    return f"suggested [b]{suggested}[/b] (enter) · "


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


class PageScreen(Screen[ScreenResultType]):
    """A screen with a scrolling page (SCROLL_ID) and, maybe, an answer form (`form`): the keys of
    `scroll_bindings` scroll the page, those of `form_bindings` move through the form."""

    SCROLL_ID = "body"
    form: AnswerFormBase | None = None

    def action_scroll(self, lines: int) -> None:
        self.query_one(f"#{self.SCROLL_ID}", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_next_field(self, direction: int) -> None:
        """Tab: from outside the form into its first empty field; inside it, to the next or previous field."""
        form = self.form
        focused = self.focused
        if form is None or form.submitted:
            if direction > 0:
                self.focus_next()
            else:
                self.focus_previous()
        elif focused is not None and focused in form.fields():
            form.step(focused, direction)
        else:
            form.focus_first(empty=True)


class KeysFooter(Footer):
    """Textual's footer, with its keys right after the first paint, rebuilt only when the keys it shows change.

    As the stock footer does, it is painted empty with the screen and gets its
    keys just after, so that styling and drawing them does not delay the first
    card. The stock footer then rebuilds its keys whenever the screen's
    bindings may have changed, which is on every move of the focus: each card
    shown, each answer revealed. A rebuild costs more than showing the next
    card, so here the keys are compared first, once the screen is painted (the
    screen's keys, worked out to compare them, cost about a tenth of the next
    card's paint), and a check already on its way is not asked for again.
    """

    def __init__(self, *, compact: bool = False) -> None:
        super().__init__(compact=compact)
        self._shown: object = None  # the keys of the last compose
        self._rebuilding = False

    def on_mount(self) -> None:
        self._rebuilding = True
        self.call_after_refresh(self._rebuild)  # the keys, once the screen is painted

    def shown_keys(self) -> object:
        """What compose would draw now: each shown key with its label and state, and the palette key."""
        app = self.app
        palette = app.COMMAND_PALETTE_BINDING if self.show_command_palette and app.ENABLE_COMMAND_PALETTE else None
        return tuple(
            (key, b.key, app.get_key_display(b), b.description, b.action, b.group, enabled, tooltip)
            for key, (_, b, enabled, tooltip) in self.screen.active_bindings.items()
            if b.show or key == palette
        )

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._shown = self.shown_keys()
        for widget in super().compose():
            if self.compact and isinstance(widget, FooterKey):
                widget.add_class("-compact", update=False)  # as its binding to `compact` would, before it is styled
            yield widget

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._rebuilding:  # a check is on its way: it will see these bindings too
            return
        self._rebuilding = True
        self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        """Draw the keys, unless those drawn are still the ones to show."""
        self._rebuilding = False
        if self._shown is not None and self.shown_keys() == self._shown:
            return
        self.set_reactive(Footer._bindings_ready, True)
        await self.recompose()
