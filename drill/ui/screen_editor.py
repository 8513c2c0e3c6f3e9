"""The kernel editor's base: a TextArea that draws its lines through the screen's filter (drill.ui.screen_text)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import TextArea

from drill.ui.screen_text import screen_text


class SafeTextArea(TextArea):
    """A TextArea that draws each line through the filter; the text itself (a kernel's source) is left as it is."""

    def get_line(self, line_index: int) -> Text:
        """The line as TextArea draws it, filtered before Rich's Text drops BEL and CR from it: each character
        of the text keeps a cell, so the cursor's column and the drawn line agree."""
        return Text(screen_text(self.document.get_line(line_index)), end="", no_wrap=True)
