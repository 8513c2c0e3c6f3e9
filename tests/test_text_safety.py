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
