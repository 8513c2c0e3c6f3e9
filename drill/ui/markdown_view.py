"""A light Markdown view: one Static rendering Rich's Markdown (code fences highlighted by Pygments).

Most prompts are a single paragraph with no Markdown syntax at all. Such text is
drawn here exactly as Rich's Markdown draws it, without loading the Markdown
parser and Pygments, so the first card can be painted before they load; they
load with the first text that needs them (or earlier, from `load_markdown`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.widgets import Static

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

# Anything that could make Markdown of a text more than one plain paragraph: the characters
# of inline syntax, escapes and entities; control characters; a blank or indented line, or
# spaces at a line's end (a hard break); a line that could open a list, quote or heading.
_NOT_PLAIN = re.compile(
    r"[\\`*_\[\]<>&|~#!\x00-\x09\x0b-\x1f\x7f]|^\s|\s$|^(?:[-+=>]|\d+[.)])",
    re.MULTILINE,
)


def is_plain_paragraph(text: str) -> bool:
    """Whether Markdown would make `text` one paragraph of its own words, lines joined by spaces."""
    return bool(text) and _NOT_PLAIN.search(text) is None


class PlainParagraph:
    """A plain paragraph, drawn as Rich's Markdown draws one: its lines joined by soft breaks, left-justified."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        style = console.get_style("none", default="none") + console.get_style("markdown.paragraph", default="none")
        text = Text(justify="left")
        for i, line in enumerate(self.lines):
            if i:
                text.append(" ", style)  # a soft break
            text.append(line, style)
        yield from console.render(text, options.update(height=None))


def markdown(source: str) -> RenderableType:
    """Rich's Markdown of `source`, as the app shows it."""
    body = source.rstrip("\n")
    if is_plain_paragraph(body):
        return PlainParagraph(body)
    from rich.markdown import Markdown

    return Markdown(source, code_theme="monokai", hyperlinks=False)


def load_markdown() -> None:
    """Load the Markdown parser and Pygments now (e.g. in a worker after the first paint), not at the next answer."""
    import rich.markdown  # noqa: F401


class MarkdownView(Static):
    """Shows Markdown text; keeps the source so tests and callers can read it back."""

    DEFAULT_CSS = "MarkdownView { height: auto; }"

    def __init__(self, source: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.source = ""
        if source:
            self.show(source)

    def show(self, source: str) -> None:
        self.source = source
        self.update(markdown(source) if source else "")
