"""Ticking a mock answer's rubric points: the checklist, and a tick given anyway with the learner's reason.

A point is ticked only for an answer that says enough for it (drill.mock.answers.check_tick); the override key
ticks a point the check refused, once the learner says why their answer covers it. The mock screen decides when
the points are asked (after the answer is submitted) and when they are final (practice mode, once the expected
answer is shown); this module keeps the ticks and their reasons.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.strip import Strip
from textual.widgets import Input, SelectionList

from drill.mock.answers import check_tick, rubric_points
from drill.mock.grading import Tick, TickBasis
from drill.ui.answer_fields import InOrderInput
from drill.ui.screen_text import SafeLabel, SafeSelectionList
from drill.ui.screen_text import markup_text as escape  # Textual markup: every bracket escaped

if TYPE_CHECKING:
    from drill.cards.model import Card

OVERRIDE_KEY = "o"
TICK_HINT = (
    f"[b]space[/b] ticks a point you covered · [b]{OVERRIDE_KEY}[/b] anyway, with a reason · [b]enter[/b] {{then}}"
)
TICKS_FINAL = "the expected answer is shown: the ticks are final"


class Checklist(SafeSelectionList[int]):
    """The rubric points to tick: space ticks, enter goes on. `guard`, when set, decides whether a point may
    change (it is asked before each tick or untick)."""

    BINDINGS = [
        Binding("enter", "screen.next", "Next question", show=False),
        Binding(OVERRIDE_KEY, "screen.override", "Tick anyway, with a reason", id="mock.override", show=False),
    ]
    guard: Callable[[int], bool] | None = None

    def action_select(self) -> None:
        """Space ticks the point highlighted when it was pressed (Textual's list ticks the one highlighted when
        its message is handled: in a burst, space down space ticked the last point twice and the first not)."""
        if self.highlighted is None:
            return
        option = self.get_option_at_index(self.highlighted)
        if self.guard is not None and not self.guard(option.value):
            return
        self.toggle(option)

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


class RubricTicks(VerticalGroup):
    """The rubric points of the answer just submitted, ticked by the learner, and the box for the reason of a
    point ticked anyway. Hidden until `ask`; the ticks are final after `make_final`."""

    DEFAULT_CSS = """
    RubricTicks #mrubric { height: auto; max-height: 12; display: none; }
    RubricTicks #mrubric.shown { display: block; }
    RubricTicks #mreason-label, RubricTicks #mreason { display: none; }
    RubricTicks #mreason-label.shown, RubricTicks #mreason.shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.card: Card | None = None  # the card whose points are ticked; None while no answer awaits its ticks
        self.record: dict[str, object] | None = None  # the submitted answer, as its form gave it
        self.final = False  # the expected answer is shown: no tick changes
        self.overrides: dict[int, str] = {}  # rubric points ticked anyway: the learner's reasons
        self.overriding: int | None = None  # the point whose reason is being typed

    def compose(self) -> ComposeResult:
        yield Checklist(id="mrubric")
        yield SafeLabel("", id="mreason-label")
        yield InOrderInput(id="mreason", compact=True, placeholder="why your answer covers it, in a few words")

    def on_mount(self) -> None:
        self.query_one(Checklist).guard = self.may_tick

    def clear(self) -> None:
        """A new question: no points, nothing ticked, no reason asked."""
        self.card = None
        self.record = None
        self.final = False
        self.overrides = {}
        rubric = self.query_one(Checklist)
        rubric.clear_options()
        rubric.remove_class("shown")
        rubric.disabled = False
        self.hide_reason()

    def ask(self, card: Card, record: dict[str, object]) -> Checklist:
        """Show `card`'s points to tick against the answer `record`, the first highlighted and focused."""
        self.card = card
        self.record = record
        rubric = self.query_one(Checklist)
        rubric.add_options([(point, i) for i, point in enumerate(rubric_points(card))])
        rubric.add_class("shown")
        rubric.highlighted = 0
        rubric.focus()
        return rubric

    def make_final(self) -> None:
        """The expected answer is on screen: the ticks no longer change."""
        self.final = True
        self.query_one(Checklist).disabled = True

    def may_tick(self, point: int) -> bool:
        """Whether rubric point `point` may change now: an untick always while ticking; a tick only for an
        answer that says enough for it (the override key ticks it anyway, with a reason)."""
        if self.final or self.card is None or self.record is None:
            if self.final:
                self.notify(TICKS_FINAL, timeout=4)
            return False
        rubric = self.query_one(Checklist)
        if point in rubric.selected:
            self.overrides.pop(point, None)
            return True
        check = check_tick(self.card, point, self.record)
        if check.passed:
            return True
        anyway = f". {OVERRIDE_KEY} ticks it anyway, with a reason (kept in the report)" if check.long_enough else ""
        self.notify(f"not ticked: {check.refusal()}{anyway}", severity="warning", timeout=6)
        return False

    def override(self) -> None:
        """Tick the highlighted point though the answer's check refused it: ask for the reason first."""
        rubric = self.query_one(Checklist)
        if self.final or self.card is None or rubric.highlighted is None:
            if self.final:
                self.notify(TICKS_FINAL, timeout=4)
            return
        point = rubric.get_option_at_index(rubric.highlighted).value
        if point in rubric.selected or self.record is None:
            return
        check = check_tick(self.card, point, self.record)
        if not check.long_enough:  # no reason stands in for an answer that says too little
            self.notify(f"not ticked: {check.refusal()}", severity="warning", timeout=6)
            return
        self.overriding = point
        label = self.query_one("#mreason-label", SafeLabel)
        label.update(f"Why does your answer cover “{escape(rubric_points(self.card)[point])}”? ([b]enter[/b] ticks it)")
        reason = self.query_one("#mreason", Input)
        reason.value = ""
        label.add_class("shown")
        reason.add_class("shown")
        reason.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "mreason":
            return
        message.stop()
        reason = message.value.strip()
        point = self.overriding
        if point is None or self.final or self.card is None:
            self.hide_reason()
            return
        if not reason:
            self.notify("a reason is needed to tick a point your answer's check refused", severity="warning")
            return
        self.overrides[point] = reason
        rubric = self.query_one(Checklist)
        rubric.select(point)
        self.hide_reason()
        rubric.focus()

    def cancel_override(self) -> None:
        """Escape while the reason is asked: no tick, back to the points."""
        if self.overriding is None:
            return
        self.hide_reason()
        self.query_one(Checklist).focus()

    def hide_reason(self) -> None:
        self.overriding = None
        self.query_one("#mreason-label", SafeLabel).remove_class("shown")
        self.query_one("#mreason", Input).remove_class("shown")

    def on_selection_list_selected_changed(self, message: SelectionList.SelectedChanged[int]) -> None:
        message.stop()

    def ticks(self) -> list[Tick]:
        """The points ticked, each with why it counts."""
        selected = self.query_one(Checklist).selected
        return [
            Tick(i, TickBasis.OVERRIDDEN, self.overrides[i]) if i in self.overrides else Tick(i, TickBasis.CHECKED)
            for i in sorted(selected)
        ]
