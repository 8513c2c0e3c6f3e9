"""A form's fields: each handles its own keys in the order they arrive (see drill.ui.answering)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import events
from textual._context import active_message_pump  # textual is pinned (pyproject.toml)
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Input

from drill.ui.form_base import AnswerFormBase
from drill.ui.markdown_view import scroll_code_sideways
from drill.ui.screen_keys import PageScreen
from drill.ui.screen_text import SafeInput, SafeOptionList

NAVIGATION_KEYS = ("tab", "shift+tab", "escape")
# What a key that goes nowhere is told (drill.ui.answering.AnswerForm.refuse)
NOT_ON_THE_CHOICES = "the readings are chosen with ↑↓ and enter · tab goes to the next field"
NOTHING_HIGHLIGHTED = "no reading highlighted: ↑↓ to one, then enter chooses it"
NOT_ON_THE_PAGE = "you are reading the page: tab, enter or space goes into the answer"
# For this long after a hold (Page.hold), with no field focused, a scroll from elsewhere is undone: a field's
# focus asked the page, a moment before, to scroll it into view, and that scroll can land after the hold (the
# check took the focus away since). Later, it is the learner's.
HOLD_FIRM_S = 0.5


def field_key(field: Widget, event: events.Key) -> bool:
    """Whether the key is the field's to handle (text, its own bindings, moving between fields), not a command."""
    return event.is_printable or bool(field._bindings.key_to_bindings.get(event.key)) or event.key in NAVIGATION_KEYS


async def run_binding_now(widget: Widget, key: str) -> bool:
    """Run the widget's own binding for `key` at once, in the order its keys arrive (Textual would run it only
    once the key has bubbled up to the app, after any characters typed behind it); False when it has none."""
    for binding in widget._bindings.key_to_bindings.get(key, []):
        await widget.run_action(binding.action)
        return True
    return False


async def hand_key(target: "InOrderKeys", event: events.Key) -> None:
    """Apply a key to a field for a widget above it (the page, the app), as if the field had been sent it.

    A message records the widget whose handler was running when it was made, and Textual stops a message's
    bubbling at that widget's child. Made while the page ran, the form's Submitted would stop at the page and
    never reach the screen that checks the form; made with the field running, it goes all the way up.
    """
    token = active_message_pump.set(target)
    try:
        await target.take_key(event)
    finally:
        active_message_pump.reset(token)


# To mypy a field is the widget it is mixed into. At run time it stays a plain mixin: Textual takes a widget's
# CSS type names (Input, OptionList) by following its first base class, which is this one.
if TYPE_CHECKING:
    _FieldWidget = Widget
else:
    _FieldWidget = object


class InOrderKeys(_FieldWidget):
    """Mixin for a form's fields: a field handles its own keys as they arrive.

    Textual runs a widget's key bindings only after the key has bubbled up to
    the app, while printable characters are inserted at once; in a burst
    (ctrl+u, "1 GiB", enter) the binding would then run after the characters
    that followed it. Here every key the field knows is handled in the field's
    own queue, and a key that arrives after focus has moved on is passed to
    the field that has focus now (or dropped once the form is submitted).
    """

    @property
    def form(self) -> AnswerFormBase | None:
        """The answer form this field belongs to, or None."""
        return next((a for a in self.ancestors if isinstance(a, AnswerFormBase)), None)

    async def _on_key(self, event: events.Key) -> None:
        form = self.form
        target = live_field_of(form)
        if not field_key(target if target is not None else self, event):
            return  # a screen command (ctrl+s, ctrl+z ...): let it bubble
        event.stop()
        event.prevent_default()
        if target is not None:
            await hand_key(target, event)

    async def take_key(self, event: events.Key) -> None:
        """Apply a key to this field (it has focus, or had it when the key was typed)."""
        form = self.form
        if form is None:
            return
        if event.key in ("tab", "shift+tab"):
            form.step(self, -1 if event.key == "shift+tab" else 1)
        elif event.key == "escape":  # out of the form onto the page it is on (arrows scroll it)
            page = next((a for a in self.ancestors if isinstance(a, Page)), None)
            self.screen.set_focus(page)
        elif event.key == "enter":
            await self.field_done()
        elif event.is_printable:
            self.type_character(event.character or "")
        else:
            await run_binding_now(self, event.key)

    def type_character(self, character: str) -> None:
        """A printable key: fields that take text insert it; others ignore it."""

    async def field_done(self) -> None:
        raise NotImplementedError


class InOrderInput(SafeInput):
    """A text box outside an answer form (the mock's length, the browser's search): its own bindings (backspace,
    ctrl+u, the arrows, enter) run as its keys arrive. Textual runs them only once the key has bubbled up to the
    app, after the characters typed behind it: backspace then 5 in one burst lost the 5."""

    # Input's own keys; those it inherits (the arrows scroll any widget) still bubble, to the screen's list
    OWN_KEYS = frozenset(
        key.strip() for binding in Input.BINDINGS for key in str(getattr(binding, "key", "")).split(",")
    )

    async def _on_key(self, event: events.Key) -> None:
        if event.key in self.OWN_KEYS and not event.is_printable:
            event.stop()
            event.prevent_default()
            self._restart_blink()
            await run_binding_now(self, event.key)
            return
        await super()._on_key(event)


class AnswerInput(InOrderKeys, SafeInput):
    """A one-line answer field. Enter moves to the next field; on the last, it checks the form."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # a focus (tab, shift+tab, enter, a click) never selects the answer: selected, the next key would replace it
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)

    def mend(self) -> None:
        """Focus it with the cursor after the text, so that what is typed next is added to it: to fix a typo,
        or to go on after leaving the field."""
        self.screen.set_focus(self)

    def _on_focus(self, event: events.Focus) -> None:
        """Runs before Input's own focus handler (Textual calls each class's, most derived first). However focus
        arrives, the field keeps its text and the cursor goes after it, so what is typed next adds to the answer
        (text typed before this event was handled, enter then characters in one read, is kept too)."""
        self.cursor_position = len(self.value)

    def type_character(self, character: str) -> None:
        self._restart_blink()
        selection = self.selection
        if selection.is_empty:
            self.insert_text_at_cursor(character)
        else:
            self.replace(character, *selection)

    async def field_done(self) -> None:
        form = self.form
        if form is not None:
            form.step(self, 1, submit_at_end=True)

    async def action_submit(self) -> None:
        """Enter is handled in order by `take_key`; a stray enter that reaches the binding does nothing."""

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        form = self.form
        if form is None:
            return
        target = form.live_field()
        if isinstance(target, AnswerInput):
            form.paste(target, event.text)


class ChoiceList(InOrderKeys, SafeOptionList):
    """The diagnosis choices: arrows move, enter chooses and moves to the next field. Text typed here goes
    nowhere, and a notice says so: it is never taken as a choice."""

    def type_character(self, character: str) -> None:
        form = self.form
        if form is not None:
            form.refuse(NOT_ON_THE_CHOICES)

    async def field_done(self) -> None:
        form = self.form
        if form is None:
            return
        if self.highlighted is None:
            form.refuse(NOTHING_HIGHLIGHTED)
            return
        form.choose(self.highlighted)  # a form without readings takes nothing
        form.step(self, 1)

    def action_select(self) -> None:
        """A click on an option chooses it (enter is handled in order by `take_key`)."""
        form = self.form
        if form is not None and self.highlighted is not None and not form.submitted:
            form.choose(self.highlighted)


class Page(VerticalScroll):
    """A screen's scrolling body. A key it was handed after an earlier key of the same burst moved the focus
    into the screen's answer form (tab, down, enter, then text typed at once) goes to that field, as typed.

    It can hold a widget at its top (`hold`) while what was just shown is laid out: an answer revealed a moment
    ago has no height yet, so a scroll made at once stops short of the verdict above it."""

    _held: Widget | None = None  # the widget kept in view, or the page itself for its start
    _held_top = True  # the held widget at the top of the page; else just in view
    _held_at: float | None = None  # where the hold last scrolled to: a scroll from elsewhere lets go
    _firm_until = 0.0  # until then (time.monotonic) a scroll from elsewhere is undone, not taken as the learner's

    def hold(self, widget: Widget | None, *, top: bool = True) -> None:
        """Keep `widget` (None: the page's start) at the top (`top`) or in view as the page is laid out, until
        the learner scrolls."""
        self._held = widget if widget is not None else self
        self._held_top = top
        self._held_at = None
        self._firm_until = time.monotonic() + HOLD_FIRM_S
        if widget is None:
            self.scroll_to(y=0, animate=False, immediate=True)  # the start is where it is before any layout
        # After the scrolls asked for before it (a focused field is scrolled into view from the screen's queue, a
        # moment later), and once what was just shown has its place: the hold has the last word.
        self.screen.call_later(self.call_after_refresh, self._keep_held)

    def let_go(self) -> None:
        self._held = None

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def _firm(self) -> bool:
        """Whether a scroll from elsewhere is undone now: just after the hold, while no field has the focus (a
        focused field is scrolled into view for the learner typing into it)."""
        return time.monotonic() < self._firm_until and self.screen.focused in (None, self)

    def _scrolled(self) -> None:
        if self._held is not None and self._firm():
            self.call_after_refresh(self._keep_held)

    def watch_virtual_size(self) -> None:
        """What is on the page was laid out anew (an answer shown, a line added): once the layout is done,
        the held widget is put back in view. (Textual sends no Resize for a change of the content's height.)"""
        if self._held is not None:
            self.call_later(self._keep_held)

    def on_resize(self) -> None:
        if self._held is not None:  # the terminal changed
            self.call_later(self._keep_held)

    def _keep_held(self) -> None:
        held = self._held
        if held is None:
            return
        moved = self._held_at is not None and self.scroll_y != self._held_at
        if moved and not self._firm():
            self._held = None  # the learner scrolled: the page is theirs
            return
        if held is self:
            self.scroll_to(y=0, animate=False, immediate=True)
        else:
            self.scroll_to_widget(held, top=self._held_top, animate=False, immediate=True)
        self._held_at = self.scroll_y

    async def _on_key(self, event: events.Key) -> None:
        screen = self.screen
        if not isinstance(screen, PageScreen):
            return
        form = screen.form
        if screen.focused is self and form is not None and not form.submitted and form.fields():
            # into the form now, not once the key has bubbled to the screen: the keys after it are already here
            if event.key in ("tab", "shift+tab"):
                event.stop()
                event.prevent_default()
                screen.action_next_field(-1 if event.key == "shift+tab" else 1)
                return
            if event.key in ("enter", "space"):  # back into the form, never a check (as the screens do)
                event.stop()
                event.prevent_default()
                form.focus_first(empty=True)
                return
            if event.is_printable:  # not an answer, and no command: say so rather than drop it unseen
                event.stop()
                event.prevent_default()
                form.refuse(NOT_ON_THE_PAGE)
                return
        target = live_field_of(form)
        if target is None or screen.focused is self or not field_key(target, event):
            return  # the page's own key (it has focus): scroll, or let it bubble
        event.stop()
        event.prevent_default()
        await hand_key(target, event)

    def action_scroll_left(self) -> None:
        """← moves a wide evidence or code block sideways first, then the page."""
        if not scroll_code_sideways(self, -1):
            super().action_scroll_left()

    def action_scroll_right(self) -> None:
        """→ moves a wide evidence or code block sideways first, then the page."""
        if not scroll_code_sideways(self, 1):
            super().action_scroll_right()


def live_field_of(form: AnswerFormBase | None) -> InOrderKeys | None:
    """The field of `form` that takes keys now, when it is one of these fields."""
    field = form.live_field() if form is not None else None
    return field if isinstance(field, InOrderKeys) else None
