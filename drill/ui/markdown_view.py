"""A light Markdown view: prose drawn by Rich's Markdown, code blocks kept as printed and scrolled sideways.

Most prompts are a single paragraph with no Markdown syntax at all. Such text is
drawn here exactly as Rich's Markdown draws it, without loading the Markdown
parser and Pygments, so the first card can be painted before they load; they
load with the first text that needs them (or earlier, from `load_markdown`).

A code block (a diagnosis's profiler output, a kernel's source) is never wrapped:
a wrapped ncu section puts `Block Size` on one line and its `128` on the next. Each
block is drawn at its own width in a strip that scrolls sideways when the pane is
narrower (a scrollbar under it says so; shift+wheel, the scrollbar, or ← → while the
page has the focus move it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Container
from textual.widget import Widget

from drill.ui.screen_text import SafeStatic, screen_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

CODE_THEME = "monokai"
SIDEWAYS_STEP = 8  # cells a code block moves for one ← or →

# Anything that could make Markdown of a text more than one plain paragraph: the characters
# of inline syntax, escapes and entities; control characters; a blank or indented line, or
# spaces at a line's end (a hard break); a line that could open a list, quote or heading.
_NOT_PLAIN = re.compile(
    r"[\\`*_\[\]<>&|~#!\x00-\x09\x0b-\x1f\x7f]|^\s|\s$|^(?:[-+=>]|\d+[.)])",
    re.MULTILINE,
)
# A line that could open a fenced or an indented code block: only such a text is parsed for code blocks.
_MAY_HOLD_CODE = re.compile(r"^(?: {0,3}(?:```|~~~)| {4}|\t)", re.MULTILINE)


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

    return Markdown(source, code_theme=CODE_THEME, hyperlinks=False)


def load_markdown() -> None:
    """Load the Markdown parser and Pygments now (e.g. in a worker after the first paint), not at the next answer."""
    import rich.markdown  # noqa: F401


@dataclass(frozen=True)
class Block:
    """A run of Markdown prose (`lexer` None), or one top-level code block's text and its lexer's name."""

    text: str
    lexer: str | None = None


def blocks(source: str) -> list[Block]:
    """`source` cut at its top-level code blocks (fenced or indented), in order; blank prose is left out.

    A code block inside a list or a quote stays in its prose, drawn as Rich draws it.
    """
    if not _MAY_HOLD_CODE.search(source):
        return [Block(source)] if source.strip() else []
    from markdown_it import MarkdownIt

    lines = source.splitlines(keepends=True)
    out: list[Block] = []
    start = 0
    for token in MarkdownIt().enable("strikethrough").enable("table").parse(source):
        if token.level != 0 or token.type not in ("fence", "code_block") or token.map is None:
            continue
        first, end = token.map
        prose = "".join(lines[start:first])
        if prose.strip():
            out.append(Block(prose))
        lexer = (token.info or "").partition(" ")[0] or "text"  # as Rich's Markdown names it
        out.append(Block(token.content.rstrip(), lexer))
        start = end
    rest = "".join(lines[start:])
    if rest.strip():
        out.append(Block(rest))
    return out


def code_renderable(block: Block) -> RenderableType:
    """A code block as Rich's Markdown draws one (same theme, a cell of padding around), but never wrapped."""
    from rich.syntax import Syntax

    return Syntax(block.text, block.lexer or "text", theme=CODE_THEME, word_wrap=False, padding=1)


class Prose(SafeStatic):
    """Markdown prose, wrapped to the view's width."""

    DEFAULT_CSS = "Prose { height: auto; }"

    def __init__(self, block: Block) -> None:
        super().__init__(markdown(block.text) if block.text else "")

    def show(self, block: Block) -> None:
        self.update(markdown(block.text) if block.text else "")


class CodeLines(SafeStatic):
    """A code block at the width of its longest line (at least the strip's): nothing wraps."""

    DEFAULT_CSS = "CodeLines { width: auto; min-width: 100%; height: auto; }"


class CodeStrip(Container):
    """One code block in a strip as wide as the view, scrolling sideways when the block is wider."""

    DEFAULT_CSS = """
    CodeStrip {
        height: auto;
        overflow-x: auto;
        overflow-y: hidden;
        scrollbar-size-horizontal: 1;
    }
    """

    def __init__(self, block: Block) -> None:
        super().__init__(CodeLines(code_renderable(block)))

    def show(self, block: Block) -> None:
        self.query_one(CodeLines).update(code_renderable(block))
        self.scroll_to(x=0, animate=False, immediate=True)


class MarkdownView(Widget):
    """Shows Markdown text; keeps the source so tests and callers can read it back.

    The source passes the screen's filter before Markdown parses it (drill.ui.screen_text), and `source` is what
    was shown: the filtered text.

    Its children follow the source's blocks: a `Prose` for each run of prose and a `CodeStrip`
    for each top-level code block, a blank line between them as Rich's Markdown leaves one.
    """

    # The blank line before each block but the first is a class given as the blocks are made, not a `*:first-child`
    # rule: a rule on every widget's place among its siblings has Textual style every widget again as each is
    # mounted, the most of what the first card waited for beside a bare Textual app.
    DEFAULT_CSS = """
    MarkdownView { height: auto; layout: vertical; }
    MarkdownView > .-after { margin-top: 1; }
    """

    def __init__(self, source: str = "", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.source = screen_text(source)

    def compose(self) -> ComposeResult:
        yield from _widgets(_parts(self.source))

    def show(self, source: str) -> None:
        self.source = screen_text(source)
        if not self.is_mounted:
            return  # compose() draws it
        parts = _parts(self.source)
        shown = list(self.children)
        same_shape = len(shown) == len(parts) and all(
            isinstance(widget, CodeStrip) == (part.lexer is not None) for widget, part in zip(shown, parts)
        )
        if not same_shape:  # another arrangement of blocks: new children (the next card of a kind keeps them)
            self.remove_children()
            self.mount_all(_widgets(parts))
            return
        for widget, part in zip(shown, parts):
            if isinstance(widget, CodeStrip):
                widget.show(part)
            elif isinstance(widget, Prose):
                widget.show(part)


def _parts(source: str) -> list[Block]:
    """The blocks a view shows: at least one, so an empty view is one empty `Prose`."""
    return blocks(source) or [Block("")]


def _widgets(parts: list[Block]) -> list[Widget]:
    """A widget for each block, each after the first set a blank line below the one before (`-after`)."""
    widgets: list[Widget] = [Prose(part) if part.lexer is None else CodeStrip(part) for part in parts]
    for widget in widgets[1:]:
        widget.add_class("-after", update=False)
    return widgets


def scroll_code_sideways(page: Widget, direction: int) -> bool:
    """Move every code block on `page` that is wider than its strip one step left (-1) or right (1).

    False when none moved (all were at that end, or none is wider than its strip).
    """
    moved = False
    for strip in page.query(CodeStrip):
        before = strip.scroll_x
        strip.scroll_to(x=before + direction * SIDEWAYS_STEP, animate=False, immediate=True)  # kept within the block
        moved = moved or strip.scroll_x != before
    return moved
