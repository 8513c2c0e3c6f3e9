"""A light Markdown view: one Static rendering Rich's Markdown (code fences highlighted by Pygments)."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Static


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
        self.update(RichMarkdown(source, code_theme="monokai", hyperlinks=False) if source else "")
