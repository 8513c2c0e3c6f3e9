"""Card text is shown as text: control characters never reach a terminal, a `drill check` line or an export."""

import csv
import io
import re

import pytest

from drill.cards.loader import load_decks
from drill.cli import main
from drill.textsafe import shown, shown_deep, unsafe_in

# What a terminal acts on: OSC 52 writes the clipboard, OSC 2 the window title, CSI 2J clears the screen,
# 0x9b is an 8-bit CSI, U+202E turns text around, DEL, CR and BS rub out what was shown.
HOSTILE_DECK = r"""
deck: "Hostile \e]2;owned\a"
cards:
  - id: hostile
    kind: concept
    topic: gpu-arch
    tags: ["plain"]
    prompt: "hello \e]52;c;cm0gLXJmIH4=\a world \e[2J \x9b31m \u202e \x7f \r \b"
    answer: "=cmd|' /C calc'!A0 \e]2;title\a"
    rubric: ["+1+cmd|x", "\e[31mred"]
    sources: ["@SUM(1+1)"]
"""
# Anything a terminal could take as the start of a command: C0 but newline and tab, DEL, C1, bidi overrides.
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    ("text", "seen"),
    [
        ("\x1b]52;c;eA==\x07", "\u241b]52;c;eA==\u2407"),
        ("a\x1b[2Jb", "a\u241b[2Jb"),
        ("\x9b31m", "\ufffd31m"),
        ("\u202eevil", "\ufffdevil"),
        ("rub\x08\x7f\r", "rub\u2408\u2421\u240d"),
        ("lines\nand\ttabs stay", "lines\nand\ttabs stay"),
        ("ünïcödé ✓ and 😀", "ünïcödé ✓ and 😀"),
        ("bytes \udcff that were not UTF-8", "bytes \ufffd that were not UTF-8"),
    ],
)
def test_control_characters_are_shown_as_symbols(text, seen):
    assert shown(text) == seen
    assert TERMINAL_CONTROL.search(shown(text)) is None
    assert len(shown(text)) == len(text)  # one symbol a character: the styles laid over a text stay in place


def test_the_first_unsafe_character_is_named():
    assert unsafe_in("ok\x1b]2;x") == "ESC U+001B"
    assert unsafe_in("ok\x9d") == "OSC U+009D"
    assert unsafe_in("fine\n\ttext") is None
    cleaned, found = shown_deep({"steps": [{"label": "a\x07"}], 3: 4})
    assert cleaned == {"steps": [{"label": "a\u2407"}], 3: 4} and found == "BEL U+0007"


@pytest.fixture
def hostile(write_deck):
    return write_deck(HOSTILE_DECK, "hostile.yaml")


def test_a_loaded_card_holds_no_control_character(hostile):
    decks = load_decks([hostile])
    card = decks.cards["hostile"]
    assert not decks.problems
    for text in (card.prompt, card.answer, *card.rubric, card.deck):
        assert TERMINAL_CONTROL.search(text) is None, repr(text)
    assert "hello \u241b]52;c;" in card.prompt  # shown, not dropped: the author sees what the deck holds


def test_check_warns_with_file_line_and_card(hostile, capsys):
    assert main(["check", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert f"{hostile}:7: hostile: warning: `prompt` holds ESC U+001B" in out
    assert main(["check", "--strict", str(hostile)]) == 1


def test_exported_csv_holds_no_control_character(hostile, tmp_path, capsys):
    assert main(["export", "csv", "-", "--decks", str(hostile)]) == 0
    out, err = capsys.readouterr()
    assert TERMINAL_CONTROL.search(out) is None and TERMINAL_CONTROL.search(err) is None
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(out))}
    assert rows["hostile"]["prompt"].startswith("hello \u241b]52;c;")


def test_command_output_shows_control_characters_of_paths_as_symbols(tmp_path, capsys):
    odd = tmp_path / "deck\x1b]2;owned\x07.yaml"
    assert main(["check", str(odd)]) == 1
    out, err = capsys.readouterr()
    assert "deck\u241b]2;owned\u2407.yaml: no such file or folder" in out
    assert TERMINAL_CONTROL.search(out + err) is None


# -- the screen's filter: drill.ui.screen_text ---------------------------------------------------------------------
# (tests/ui/test_screen_escapes.py runs the app with escapes planted in every store and reads what it writes)
HOSTILE_TEXT = "go \x1b]52;c;eA==\x07 \x1b[2J \x9b31m \u202eback\tand\nnext"
HOSTILE_SHOWN = "go \u241b]52;c;eA==\u2407 \u241b[2J \ufffd31m \ufffdback\tand\nnext"


def test_data_in_markup_adds_no_markup_and_keeps_every_character():
    from textual.content import Content

    from drill.ui.screen_text import markup_text

    for data in ("a[0] and [b]x", "x [ y", "[link=https://x]click[/link]", "a\\[b]", HOSTILE_TEXT):
        content = Content.from_markup(f"[b]{markup_text(data)}[/b] after")
        assert content.plain == shown(data) + " after"
        assert [(span.start, span.end) for span in content.spans] == [(0, len(shown(data)))]
    # a backslash at the end would escape the markup after it: a zero-width space keeps them apart
    content = Content.from_markup("[b]" + markup_text("ends in \\") + "[/b] after")
    assert content.plain == "ends in \\\u200b after" and content.spans[0].end == len("ends in \\\u200b")


def test_a_rich_text_keeps_its_styles_where_they_were():
    from rich.text import Text

    from drill.ui.screen_text import screen_content

    text = Text("ok ")
    text.append("\x1b]0;title\x1b\\", style="red")
    text.append(" end", style="bold")
    shown_text = screen_content(text)
    assert isinstance(shown_text, Text)
    assert shown_text.plain == "ok \u241b]0;title\u241b\\ end"
    assert [(s.start, s.end, str(s.style)) for s in shown_text.spans] == [(3, 14, "red"), (14, 18, "bold")]
    assert text.plain == "ok \x1b]0;title\x1b\\ end"  # the caller's Text is left as it was


def test_any_other_renderable_is_drawn_through_the_filter_and_measured_as_before():
    from rich.console import Console
    from rich.syntax import Syntax
    from rich.table import Table

    from drill.ui.screen_text import ShownRenderable, screen_content

    table = Table("column")
    table.add_row(HOSTILE_TEXT)
    code = Syntax("x = '\x1b]52;c;eA==\x07'" + " " * 150, "python", word_wrap=False)
    console = Console(width=60, file=io.StringIO(), force_terminal=True)
    for renderable in (table, code):
        wrapped = screen_content(renderable)
        assert isinstance(wrapped, ShownRenderable)
        drawn = "".join(segment.text for segment in console.render(wrapped))
        assert "\x1b" not in drawn and "\x9b" not in drawn and "\u202e" not in drawn and "\u241b]52;c;" in drawn
    # unclamped, as Textual measures a code block that scrolls sideways
    assert ShownRenderable(code).__rich_measure__(console, console.options).maximum > 60


async def test_each_safe_widget_shows_its_text_filtered():
    from textual.app import App, ComposeResult
    from textual.widgets.data_table import ColumnKey

    from drill.ui.markdown_view import MarkdownView
    from drill.ui.screen_editor import SafeTextArea
    from drill.ui.screen_table import SafeDataTable
    from drill.ui.screen_text import SafeInput, SafeLabel, SafeOptionList, SafeSelectionList, SafeStatic

    class Shows(App[None]):
        def compose(self) -> ComposeResult:
            yield SafeStatic(HOSTILE_TEXT, id="static")
            yield SafeLabel("[b]x[/b]", id="label")
            yield SafeDataTable(id="table")
            yield SafeOptionList("[b]" + HOSTILE_TEXT, id="options")
            yield SafeSelectionList[int](("[i]" + HOSTILE_TEXT, 1), id="points")
            yield SafeInput(id="input")
            yield SafeTextArea("line \x1b]0;t\x07 end\nsecond", id="area")
            yield MarkdownView("**bold** \x1b]52;c;eA==\x07\n\n```\ncode \x1b[2J\n```", id="md")

    app = Shows()
    async with app.run_test(size=(120, 60)) as pilot:
        static = app.query_one("#static", SafeStatic)
        assert str(static.render()) == HOSTILE_SHOWN
        static.update("[b]again[/b] \x1b]0;t\x07")
        assert str(static.render()) == "again \u241b]0;t\u2407"  # markup kept, the data's controls shown
        label = app.query_one("#label", SafeLabel)
        label.update("\x9b1m")
        assert str(label.render()) == "\ufffd1m"
        table = app.query_one("#table", SafeDataTable)
        table.add_column("\x1b[2Jcol", key="c")
        table.add_row("[b]cell\x07", key="r")
        assert table.get_cell("r", "c").plain == "[b]cell\u2407"  # a string cell is text, never markup
        table.update_cell("r", "c", "\x1b]0;t\x07")
        assert table.get_cell("r", "c").plain == "\u241b]0;t\u2407"
        assert table.columns[ColumnKey("c")].label.plain == "\u241b[2Jcol"
        options = app.query_one("#options", SafeOptionList)
        assert str(options.get_option_at_index(0).prompt) == "[b]" + HOSTILE_SHOWN.split("\n")[0] + "\nnext"
        points = app.query_one("#points", SafeSelectionList)
        points.add_options([("\x1b]2;t\x07 more", 2)])
        assert str(points.get_option_at_index(1).prompt) == "\u241b]2;t\u2407 more"
        assert str(points.get_option_at_index(0).prompt).startswith("[i]go \u241b]52;")
        box = app.query_one("#input", SafeInput)
        box.value = "typed \x1b[2J"
        box.insert_text_at_cursor(" pasted \x9b")
        assert box.value == "typed \u241b[2J pasted \ufffd"
        area = app.query_one("#area", SafeTextArea)
        assert area.text == "line \x1b]0;t\x07 end\nsecond"  # the source is kept as written
        assert area.get_line(0).plain == "line \u241b]0;t\u2407 end" and len(area.get_line(0)) == len(area.document[0])
        view = app.query_one("#md", MarkdownView)
        assert view.source == "**bold** \u241b]52;c;eA==\u2407\n\n```\ncode \u241b[2J\n```"
        await pilot.pause()
        painted = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "bold \u241b]52;c;eA==\u2407" in painted  # Markdown still renders: the asterisks are gone
        assert "code \u241b[2J" in painted
        assert not any(c in painted for c in "\x1b\x07\x9b\u202e")


async def test_a_notice_is_filtered_and_never_read_as_markup(tmp_path):
    from drill.start import AppOptions
    from drill.ui.app import make_app

    app = make_app(AppOptions(tmp_path / "data", []))
    async with app.run_test(size=(100, 30)) as pilot:
        app.notify("[b]card\x1b]0;t\x07[/b] [9", title="\x9btitle")
        await pilot.pause()
        notice = list(app._notifications)[-1]
        assert notice.message == "[b]card\u241b]0;t\u2407[/b] [9" and notice.title == "\ufffdtitle"
        assert notice.markup is False
