"""A finished mock's report on screen, as Markdown; `ctrl+w` writes the HTML version beside the database."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer

from drill.ui.markdown_view import MarkdownView
from drill.ui.screen_keys import PageScreen, scroll_bindings
from drill.ui.screen_text import SafeStatic

if TYPE_CHECKING:
    from drill.mock.report_record import MockReport


class MockReportScreen(PageScreen[None]):
    """A finished mock's report as Markdown; `ctrl+w` writes the HTML version beside the database."""

    SCROLL_ID = "rbody"

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="mock_report.close"),
        Binding("ctrl+w", "write_html", "Write HTML", id="mock_report.html"),
        *scroll_bindings("mock_report", page_down="pagedown,space"),
    ]
    DEFAULT_CSS = """
    MockReportScreen #rbody { height: 1fr; padding: 0 1; }
    MockReportScreen #rbar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, report: MockReport, data_dir: Path) -> None:
        super().__init__()
        self.report = report
        self.data_dir = Path(data_dir)

    def compose(self) -> ComposeResult:
        from drill.mock.render import render_markdown

        with VerticalScroll(id="rbody"):
            yield MarkdownView(render_markdown(self.report), id="rtext")
        yield SafeStatic("[b]ctrl+w[/b] write the HTML report · [b]q[/b] close", id="rbar")
        yield Footer(compact=True)

    def action_write_html(self) -> None:
        from drill.mock.render import render_html

        folder = self.data_dir / "reports"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"mock-{self.report.id}.html"
            path.write_text(render_html(self.report), encoding="utf-8")
        except OSError as exc:
            self.notify(f"could not write the report: {exc}", severity="error", timeout=10)
            return
        self.notify(f"wrote {path}", timeout=10)

    def action_close(self) -> None:
        self.dismiss(None)
