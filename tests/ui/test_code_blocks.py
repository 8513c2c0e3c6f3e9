"""Code blocks in the Markdown view (a diagnosis's ncu evidence, a kernel prompt's signature) are shown as
printed: never wrapped, scrolled sideways when wider than the pane."""

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from drill.ui.answer_fields import Page
from drill.ui.markdown_view import SIDEWAYS_STEP, Block, CodeLines, CodeStrip, MarkdownView, Prose, blocks
from drill.ui.markdown_view import scroll_code_sideways as sideways
from tests.conftest import refresh

NCU = """\
  Section: Launch Statistics
  ---------------------------------------------------------- ----------- ------------
  Block Size                                                                    128
  Grid Size                                                                      32
  ---------------------------------------------------------- ----------- ------------"""
WIDEST = max(len(line) for line in NCU.splitlines())
EVIDENCE = f"```text\n{NCU}\n```\n\nWhat limits it?\n"


class Host(App[None]):
    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="page"):
            yield MarkdownView(self.source, id="view")


def test_a_text_is_cut_at_its_top_level_code_blocks():
    assert blocks(EVIDENCE) == [Block(NCU, "text"), Block("\nWhat limits it?\n")]
    assert blocks("Say it.\n\n    indented code\n\nDone.") == [
        Block("Say it.\n\n"),
        Block("indented code", "text"),
        Block("\nDone."),
    ]
    assert blocks("- a list\n\n  ```\n  x = 1\n  ```\n") == [Block("- a list\n\n  ```\n  x = 1\n  ```\n")]  # kept
    assert blocks("Plain words only.") == [Block("Plain words only.")]
    assert blocks("") == []


async def test_evidence_wider_than_the_pane_is_not_wrapped_and_scrolls_sideways():
    app = Host(EVIDENCE)
    async with app.run_test(size=(60, 20)) as pilot:
        await refresh(pilot)
        strip = app.query_one(CodeStrip)
        lines = app.query_one(CodeLines)
        assert lines.size.width == WIDEST + 2  # a cell of padding either side, as Rich's Markdown pads
        assert lines.size.height == len(NCU.splitlines()) + 2  # one row a line: `Block Size` keeps its 128
        assert strip.max_scroll_x == WIDEST + 2 - strip.scrollable_content_region.width > 0
        page = app.query_one("#page")
        assert not sideways(page, -1)  # already at the left end
        assert sideways(page, 1) and strip.scroll_x == SIDEWAYS_STEP
        while sideways(page, 1):
            pass
        assert strip.scroll_x == strip.max_scroll_x  # the values column's right end is reachable
        assert app.query_one(Prose).region.y > strip.region.bottom  # the question after it, a blank line between


async def test_a_block_that_fits_fills_the_pane_and_does_not_scroll():
    app = Host("```\nshort\n```\n")
    async with app.run_test(size=(60, 20)) as pilot:
        await refresh(pilot)
        strip = app.query_one(CodeStrip)
        assert strip.max_scroll_x == 0 and app.query_one(CodeLines).size.width == strip.size.width
        assert not sideways(app.query_one("#page"), 1)


async def test_the_next_text_of_the_same_shape_reuses_the_widgets_and_starts_at_the_left():
    app = Host(EVIDENCE)
    async with app.run_test(size=(60, 20)) as pilot:
        await refresh(pilot)
        view = app.query_one(MarkdownView)
        before = list(view.children)
        sideways(app.query_one("#page"), 1)
        view.show(EVIDENCE.replace("128", "256"))
        await refresh(pilot)
        assert list(view.children) == before and app.query_one(CodeStrip).scroll_x == 0
        view.show("Just a question?")
        await refresh(pilot)
        assert [type(w) for w in view.children] == [Prose] and view.source == "Just a question?"
        view.show("")
        await refresh(pilot)
        assert [type(w) for w in view.children] == [Prose]


class PageHost(App[None]):
    def compose(self) -> ComposeResult:
        with Page(id="page"):
            yield MarkdownView(EVIDENCE, id="view")


async def test_the_arrow_keys_move_a_wide_block_sideways_before_the_page():
    app = PageHost()
    async with app.run_test(size=(60, 20)) as pilot:
        await refresh(pilot)
        page = app.query_one(Page)
        page.focus()
        strip = app.query_one(CodeStrip)
        await pilot.press("right")
        await refresh(pilot)
        assert strip.scroll_x == SIDEWAYS_STEP
        await pilot.press("left")
        await refresh(pilot)
        assert strip.scroll_x == 0
