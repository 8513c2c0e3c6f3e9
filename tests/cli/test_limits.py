"""Inputs too large or too deep to be meant are refused in one line that names them: a card field, a deck
file, a path argument, a settings file nested thousands deep; and the app without a terminal says so."""

import os
import subprocess
import sys
import time

import pytest

from drill.cards.deck_cache import load_decks_cached
from drill.cards.loader import MAX_DECK_BYTES, MAX_FIELD_CHARS, load_decks
from drill.cli import main
from tests.conftest import stretched

CARD = "  - id: {id}\n    kind: concept\n    topic: gpu-arch\n    prompt: p\n    answer: {answer}\n    sources: [s]\n"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DRILL_CONFIG", str(tmp_path / "config.toml"))


def one_line(text: str) -> bool:
    return text.count("\n") == 1 and "Traceback" not in text


# -- a card field, a deck file ------------------------------------------------------------------------------
def test_a_field_over_the_limit_is_a_problem_naming_file_line_card_and_field(tmp_path, capsys):
    deck = tmp_path / "deck.yaml"
    deck.write_text(
        "cards:\n" + CARD.format(id="big", answer="x" * (MAX_FIELD_CHARS + 1)) + CARD.format(id="ok", answer="a")
    )
    decks = load_decks([deck])
    assert list(decks.cards) == ["ok"]  # the rest of the deck still loads
    assert [str(p) for p in decks.problems] == [
        f"{deck}:6: big: `answer` holds {MAX_FIELD_CHARS + 1:,} characters;"
        f" a card field may hold at most {MAX_FIELD_CHARS:,} characters (64 KB)"
    ]
    assert main(["check", str(deck)]) == 1
    assert f"{deck}:6: big: `answer` holds" in capsys.readouterr().out


def test_text_nested_in_a_field_counts_too(tmp_path):
    deck = tmp_path / "deck.yaml"
    items = ", ".join(["y" * 1000] * 70)
    deck.write_text("cards:\n" + CARD.format(id="big", answer="a") + f"    tags: [{items}]\n")
    (problem,) = load_decks([deck]).problems
    assert "`tags` holds 70,000 characters" in problem.message


def test_a_deck_file_over_the_limit_is_never_parsed_by_check_or_the_loader(tmp_path, capsys):
    """A 50 MB prompt passed `drill check` in 1.2 s; the app then parsed it at a blank screen for minutes."""
    deck = tmp_path / "huge.yaml"
    deck.write_text("cards:\n" + CARD.format(id="huge", answer="z" * (MAX_DECK_BYTES + 1)))
    start = time.perf_counter()
    assert main(["check", str(deck)]) == 1
    out = capsys.readouterr().out
    assert out == f"{deck}: is 4.0 MB; a deck file may be at most 4 MB (split it into several files)\n"
    cached = load_decks_cached([deck], tmp_path)  # the app's and the commands' loader
    assert cached.cards == {} and [p.path for p in cached.problems] == [str(deck)]
    assert time.perf_counter() - start < 5


# -- path arguments -----------------------------------------------------------------------------------------
LONG = "/tmp/" + "a" * 100_000


@pytest.mark.parametrize(
    "argv",
    [
        ["check", LONG],
        ["--decks", LONG, "stats"],
        ["trust", LONG],
        ["export", "csv", LONG],
        ["import", "reviews", LONG],
        ["--data-dir", LONG, "stats"],
    ],
    ids=["check", "decks", "trust", "export", "import", "data-dir"],
)
def test_a_path_argument_too_long_for_any_system_is_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert one_line(err)
    assert err.startswith("drill: an argument is 100,005 bytes long, more than the 4,096 a path may have: '/tmp/aaa")


@pytest.mark.parametrize("argv", [["check", "{p}"], ["--decks", "{p}", "stats"], ["trust", "{p}"]])
def test_a_name_in_a_path_too_long_for_the_system_is_one_line(tmp_path, argv, capsys):
    path = str(tmp_path / ("b" * 300) / "deck.yaml")
    assert main([a.format(p=path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert one_line(err) and err.endswith(": a name in this path is too long for the system\n")


# -- the settings file --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 5000 + "1" + "}" * 5000], ids=["array", "table"])
@pytest.mark.parametrize("argv", [["stats"], ["config", "show"], []], ids=["stats", "show", "app"])
def test_a_settings_file_nested_thousands_deep_is_one_line(tmp_path, capsys, value, argv):
    config = tmp_path / "config.toml"
    config.write_text(f"x = {value}\n")
    assert main(["--data-dir", str(tmp_path / "data"), *argv] if argv else []) == 1
    err = capsys.readouterr().err
    assert one_line(err)
    assert err.startswith(f"drill: {config}: values are nested too deeply to read (a settings file needs two levels")


# -- no terminal --------------------------------------------------------------------------------------------
def test_the_app_without_a_terminal_says_so_and_exits_2(tmp_path):
    """`drill </dev/null` spun at 100 % CPU forever."""
    env = {**os.environ, "DRILL_HOME": str(tmp_path / "home"), "DRILL_CONFIG": str(tmp_path / "none.toml")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "drill.cli"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=stretched(30),
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("drill: the review app needs a terminal") and one_line(done.stderr)
    assert time.perf_counter() - start < stretched(10)  # about half a second on an idle machine, with Python's start
