"""The question a kernel card asks when a draft is saved: continue it, or start from the starter?"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class DraftQuestion(ModalScreen[bool]):
    """Continue the saved draft, or start again from the starter?"""

    BINDINGS = [
        Binding("c", "answer(True)", "Continue draft", id="kernel.draft.continue"),
        Binding("s", "answer(False)", "Start from the starter", id="kernel.draft.starter"),
    ]
    DEFAULT_CSS = """
    DraftQuestion { align: center middle; }
    DraftQuestion > Vertical { width: 60; height: auto; padding: 1 2; border: round $primary; background: $surface; }
    DraftQuestion Horizontal { height: auto; margin-top: 1; }
    DraftQuestion Button { margin-right: 2; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("You have a saved draft of this kernel.")
            with Horizontal():
                yield Button("Continue draft (c)", id="continue", variant="primary")
                yield Button("Start from the starter (s)", id="starter")

    def action_answer(self, keep: bool) -> None:
        self.dismiss(keep)

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "continue")
