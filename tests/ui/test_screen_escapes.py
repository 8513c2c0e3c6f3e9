"""No store of text can put a terminal command on the screen: escapes planted in every store are drawn as symbols.

A control character in text the app draws reaches the terminal as a command: ESC ] 52 writes the clipboard,
ESC ] 0 sets the window title, ESC [ moves the cursor, an 8-bit CSI or OSC does the same in one byte, U+202E
turns what follows around. The filter runs where text becomes a widget's content (drill.ui.screen_text), so the
stores are planted behind the loader's back: card text hand-edited into the deck cache (decks.json), a deck
problem and the topic titles in that cache, a mode in the review log, an imported review file, a kernel draft, and
everything a judge sends (its device, compiler messages, case names, errors, notes).

The real `drill` runs in a pseudo-terminal (proof/_screen.py); the test waits until the planted text is on the
screen (as symbols) and then reads every byte the app wrote: none of the planted sequences is among them.
(A review's answer and an imported review's topic are planted too, though no screen shows them today: a screen
that comes to show them is covered.)

Beside it, drill.ui is read as source: every widget that shows text is one of screen_text's, so no screen can
make a widget that skips the filter.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import importlib.util
import inspect
import json
import os
import sqlite3
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import textual.widgets

from drill import paths
from drill.cards.deck_cache import CACHE_FILE, load_decks_cached
from drill.cli import main
from drill.store.reader import DB_NAME
from drill.study.records import CardState
from drill.study.sm2 import SM2State

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "drill" / "ui"
ESC = "\x1b"
BEL = "\x07"

# -- what is planted, and what must never come out ---------------------------------------------------------------
# Each planted text carries every kind of command: OSC 52 (clipboard), OSC 0 and 2 (title), CSI cursor moves,
# 8-bit CSI and OSC, and a bidirectional override. The app itself never writes any of these sequences.
COMMANDS = f"{ESC}]52;c;UFdORUQ={BEL} {ESC}]0;PWNTITLE{BEL} {ESC}]2;PWNTITLE{BEL} {ESC}[999;999H {ESC}[77A \x9b31m \x9d0;C1TITLE{BEL} \u202eLRO"
NEVER_WRITTEN = {
    "OSC 52 clipboard write": b"\x1b]52;",
    "OSC 0 window title": b"\x1b]0;",
    "OSC 2 window title": b"\x1b]2;",
    "CSI cursor to 999;999": b"\x1b[999;999H",
    "CSI cursor up 77": b"\x1b[77A",
    "8-bit CSI": "\x9b".encode(),
    "8-bit OSC": "\x9d".encode(),
    "bidi override": "\u202e".encode(),
}
# How the clipboard write looks once filtered: ESC and BEL as their control pictures, every other character kept.
CLIPBOARD_SHOWN = "\u241b]52;c;UFdORUQ=\u2407"


def hostile(marker: str) -> str:
    """A text that names where it was planted (`marker`, looked for on the screen) around the commands."""
    return f"{marker} {COMMANDS} {marker}END"


def assert_no_command_written(raw: bytes) -> None:
    written = {name: seq for name, seq in NEVER_WRITTEN.items() if seq in raw}
    assert not written, f"the app wrote {sorted(written)} to the terminal"


# -- the app in a pseudo-terminal ----------------------------------------------------------------------------------
def _screen_driver():
    """proof/_screen.py: the real app on a pseudo-terminal, its screen read through a small terminal emulator."""
    spec = importlib.util.spec_from_file_location("drill_proof_screen", ROOT / "proof" / "_screen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


screen = _screen_driver()
WAIT = 90.0  # seconds: the machine running the tests may be busy; every wait ends as soon as the screen is there
CTRL_F = b"\x06"
ESCAPE = b"\x1b"
F5 = b"\x1b[15~"
BACKSPACE = b"\x7f"
CTRL_G = b"\x07"


@pytest.fixture
def running() -> Iterator[list]:
    """The apps a test starts, each killed at the end if it is still running."""
    apps: list = []
    yield apps
    for app in apps:
        app.close()


def start(running: list, data: Path, *flags: str, env: dict[str, str] | None = None, rows: int = 40):
    app = screen.App(screen.drill_command(data, *flags), cols=100, rows=rows, env=screen.app_env(env))
    running.append(app)
    return app


def shows(app, text: str) -> None:
    """Wait until `text` is on the screen."""
    try:
        app.wait_for(lambda: text in app.text(), WAIT)
    except (TimeoutError, screen.AppGone) as exc:
        assert_no_command_written(bytes(app.raw))  # the likeliest reason: a command swallowed what followed it
        raise AssertionError(f"{text!r} never appeared on the screen ({exc}):\n{app.text()}") from None


def leaves(app, text: str) -> None:
    """Wait until `text` is gone from the screen (a key sent right after ESC would be read as alt+key)."""
    try:
        app.wait_for(lambda: text not in app.text(), WAIT)
    except (TimeoutError, screen.AppGone) as exc:
        raise AssertionError(f"{text!r} stayed on the screen ({exc}):\n{app.text()}") from None


def quit_app(app) -> None:
    app.send(screen.CTRL_Q)
    if app.wait_exit(30) is None:  # a warning asks for a second press
        app.send(screen.CTRL_Q)
        assert app.wait_exit(WAIT) is not None, app.text()


# -- the stores ----------------------------------------------------------------------------------------------------
DECK = """\
deck: Planted deck
cards:
  - id: cache-card
    kind: concept
    topic: gpu-arch
    prompt: "A plain prompt, replaced in the cache."
    answer: "A plain answer, replaced in the cache."
    rubric: ["a plain point"]
    sources: ["a plain source"]
  - id: yaml-card
    kind: concept
    topic: gpu-arch
    prompt: "YAMLPROMPT \\e]52;c;UFdORUQ=\\a \\e]0;PWNTITLE\\a \\e[999;999H \\x9b31m \\u202eLRO YAMLPROMPTEND"
    answer: "YAMLANSWER"
    sources: ["YAMLSOURCE"]
"""


def plant_deck(folder: Path) -> Path:
    decks = folder / "decks"
    decks.mkdir()
    (decks / "planted.yaml").write_text(DECK, encoding="utf-8")
    return decks


def import_reviews(folder: Path, data: Path) -> None:
    """Reviews of cache-card from a review file, its free text (topic, answer) planted."""
    before = CardState("cache-card")
    after = CardState("cache-card", sm2=SM2State(1, 2.5, 1))
    row = {
        "card_id": "cache-card",
        "reviewed_at": "2026-01-05T09:30:00",
        "day": "2026-01-05",
        "grade": "4",
        "mode": "review",
        "duration_ms": "1200",
        "topic": hostile("IMPORTTOPIC"),
        "state_before": json.dumps(before.as_json()),
        "state_after": json.dumps(after.as_json()),
        "answer": json.dumps({"typed": hostile("IMPORTANSWER")}),
    }
    path = folder / "reviews.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    assert main(["import", "reviews", str(path), "--data-dir", str(data)]) == 0


def plant_review_log(data: Path) -> None:
    """The review log edited in place: a mode no import would take, an answer with the commands in it."""
    with sqlite3.connect(data / DB_NAME) as conn:
        changed = conn.execute(
            "UPDATE review_log SET mode = ?, answer = ? WHERE card_id = 'cache-card'",
            (hostile("LOGMODE"), json.dumps({"typed": hostile("LOGANSWER")})),
        ).rowcount
    assert changed == 1


def plant_deck_cache(data: Path, decks: Path) -> None:
    """decks.json, written as the app writes it and then edited by hand: cache-card's text, a deck problem and
    the topic titles read back from it hold the commands. The key (its first line) is left as it was."""
    load_decks_cached([paths.cards_dir(), decks], data)
    cache = data / CACHE_FILE
    key, _, text = cache.read_text(encoding="utf-8").partition("\n")
    body = json.loads(text)
    (card,) = [c for c in body["cards"] if c["id"] == "cache-card"]
    card["prompt"] = hostile("CACHEPROMPT")
    card["answer"] = hostile("CACHEANSWER")
    card["rubric"] = [hostile("CACHEPOINT")]
    body["problems"].append([str(decks / "planted.yaml"), 3, "cache-card", hostile("CACHEPROBLEM")])
    assert isinstance(body["topics"], dict) and "gpu-arch" in body["topics"], "the cache holds the topic list"
    for topic in body["topics"].values():  # whichever topics the mock's setup lists first
        topic["title"] = hostile("CACHETOPIC")
    cache.write_text(key + "\n" + json.dumps(body, ensure_ascii=False), encoding="utf-8")
    # the edit is read back as it was written: the next start takes the cards from this file
    assert load_decks_cached([paths.cards_dir(), decks], data).cards["cache-card"].prompt == hostile("CACHEPROMPT")


def test_text_from_the_deck_cache_the_review_log_and_a_review_file_is_drawn_as_symbols(tmp_path, running):
    data = tmp_path / "data"
    decks = plant_deck(tmp_path)
    import_reviews(tmp_path, data)
    plant_review_log(data)
    plant_deck_cache(data, decks)
    # readiness (on the stats screen) needs a date ahead; conftest points DRILL_CONFIG at this test's own file
    interview = dt.date.today() + dt.timedelta(days=30)
    Path(os.environ["DRILL_CONFIG"]).write_text(f"interview_date = {interview.isoformat()}\n", encoding="utf-8")

    app = start(running, data, "--decks", str(decks), "--card", "cache-card")
    shows(app, "CACHEPROMPTEND")  # the card's prompt, read back from the cache
    shows(app, "CACHEPROBLEM")  # the notice naming what the decks could not load
    shows(app, CLIPBOARD_SHOWN)
    app.send(screen.ENTER)  # nothing typed: the answer is shown
    shows(app, "CACHEANSWEREND")
    shows(app, "CACHEPOINTEND")

    app.send(CTRL_F)  # the browser: the card's text and its history from the review log
    shows(app, "find cards")
    app.send("cache-card")
    shows(app, "LOGMODE")
    for _ in range(len("cache-card")):
        app.send(BACKSPACE)
    app.send("yaml-card")
    shows(app, "YAMLPROMPT")
    app.send(ESCAPE)
    leaves(app, "find cards")

    app.send(CTRL_G)  # the stats: readiness for the interview date names the topics by their titles
    shows(app, "CACHETOPIC")
    quit_app(app)

    assert_no_command_written(bytes(app.raw))
    assert not app.saw_traceback


# -- a judge that sends the commands in everything it reports --------------------------------------------------------
JUDGE = """\
import json, os, sys

HOSTILE = {hostile!r}


def say(event):
    sys.stdout.write(json.dumps(event) + "\\n")
    sys.stdout.flush()


say({{"event": "ready", "pid": os.getpid(), "device": "JUDGEDEVICE " + HOSTILE, "gpu": False, "versions": {{}}}})
for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "quit":
        break
    rid = request.get("id")
    if request.get("op") != "run":
        say({{"id": rid, "event": "finished"}})
        continue
    for event in (
        {{"event": "started", "card": "reduce", "device": "JUDGEDEVICE " + HOSTILE, "gpu": False}},
        {{
            "event": "compiled",
            "ok": True,
            "log": "COMPILELOG " + HOSTILE,
            "messages": [{{"line": 1, "column": 1, "severity": "warning", "message": "COMPILEMSG " + HOSTILE}}],
            "resources": [{{"name": "KERNELNAME " + HOSTILE, "registers": 16, "shared_bytes": 0, "stack_bytes": 0}}],
            "seconds": 0.01,
        }},
        {{"event": "case_started", "name": "CASENAME " + HOSTILE}},
        {{"event": "case", "name": "CASENAME " + HOSTILE, "ok": False, "message": "CASEMSG " + HOSTILE}},
        {{"event": "note", "text": "NOTETEXT " + HOSTILE}},
        {{"event": "error", "kind": "runtime", "fatal": False, "message": "ERRORMSG " + HOSTILE}},
        {{"event": "finished", "seconds": 0.01}},
    ):
        say({{"id": rid, **event}})
"""


def hostile_judge_on_path(folder: Path) -> dict[str, str]:
    """An `ssh` first on PATH that starts the judge above instead of reaching a host: `--gpu-host` then runs
    every kernel card there. Returns the app's environment for it."""
    judge = folder / "judge.py"
    judge.write_text(JUDGE.format(hostile=hostile("X")), encoding="utf-8")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    ssh = bin_dir / "ssh"
    ssh.write_text(f"#!/bin/sh\nexec {sys.executable} {judge}\n", encoding="utf-8")
    ssh.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_a_kernel_draft_and_everything_a_judge_sends_are_drawn_as_symbols(tmp_path, running):
    data = tmp_path / "data"
    drafts = data / "drafts"
    drafts.mkdir(parents=True)
    (drafts / "reduce.cu").write_text(f"// {hostile('DRAFTLINE')}\n__global__ void reduce() {{}}\n", encoding="utf-8")
    env = hostile_judge_on_path(tmp_path)

    app = start(running, data, "--card", "reduce", "--gpu-host", "judge-box", env=env, rows=70)
    app.wait_for(lambda: (top := app.top()) is not None and top.kind == "kernel", WAIT)
    app.send(" ")  # the kernel editor, with the draft in it
    shows(app, "DRAFTLINE")  # the line is wider than the editor: its start is on the screen
    shows(app, CLIPBOARD_SHOWN)
    app.send(F5)
    for marker in ("JUDGEDEVICE", "COMPILEMSG", "KERNELNAME", "CASENAME", "CASEMSG", "ERRORMSG", "NOTETEXT"):
        shows(app, marker)
    quit_app(app)

    assert_no_command_written(bytes(app.raw))
    assert not app.saw_traceback


# -- every widget that shows text filters it: drill.ui read as source ------------------------------------------------
# Where the filtered widgets are made from Textual's own.
FILTERED_WIDGETS = ("screen_text.py", "screen_table.py", "screen_editor.py")
# Textual widgets that show no text from data: they may be made as they are.
SHOW_NO_DATA = {"Footer", "Header", "LoadingIndicator", "Rule", "Placeholder"}


def widget_classes() -> set[str]:
    """Textual's widgets that draw text they are given (Static, Label, DataTable, OptionList, Input, ...)."""
    from textual.widget import Widget

    names = set()
    for name in textual.widgets.__all__:
        value = getattr(textual.widgets, name)
        if inspect.isclass(value) and issubclass(value, Widget) and name not in SHOW_NO_DATA:
            names.add(name)
    return names


def unfiltered_widgets(source: str, where: str) -> list[str]:
    """Where `source` lets text past the screen's filter:

    - it makes a Textual widget that shows text, or derives one, instead of using drill.ui.screen_text's;
    - it draws a widget itself (render, render_lines, get_line) outside screen_text's DrawnStatic;
    - it builds a notice not from notice_text, or reads text as markup or ANSI by hand;
    - it puts data into a palette command's words (read as markup) without markup_text;
    - it escapes data with Rich's or Textual's `escape`, which leaves a bracket that Textual's markup opens a
      tag at (`[9`, `[ `).
    """
    tree = ast.parse(source)
    shows_text = widget_classes()
    watched: set[str] = set()  # the names this module gives them (an import may rename one)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("textual.widgets"):
            watched |= {alias.asname or alias.name for alias in node.names if alias.name in shows_text}

    def named(node: ast.expr) -> str | None:
        if isinstance(node, ast.Subscript):  # SelectionList[int]
            node = node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # TextArea.code_editor(...)
            return node.value.id if node.value.id in watched else None
        return node.id if isinstance(node, ast.Name) and node.id in watched else None

    def calls(node: ast.AST | None, function: str) -> bool:
        return isinstance(node, ast.Call) and getattr(node.func, "id", "") == function

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("rich.markup", "textual.markup"):
            if any(alias.name == "escape" for alias in node.names):  # `[9` and `[ ` pass it unescaped
                found.append(f"{where}:{node.lineno}: escapes data with {node.module}.escape, not markup_text")
        if isinstance(node, ast.Call):
            name = named(node.func)
            if name is not None:
                found.append(f"{where}:{node.lineno}: makes a {name}")
            func = node.func
            if calls(node, "Notification") and not calls(node.args[0] if node.args else None, "notice_text"):
                found.append(f"{where}:{node.lineno}: a Notification not made from notice_text")
            if calls(node, "SystemCommand"):
                values = [part.value for part in ast.walk(node) if isinstance(part, ast.FormattedValue)]
                if not all(calls(value, "markup_text") for value in values):
                    found.append(f"{where}:{node.lineno}: a palette command's words hold data without markup_text")
            if isinstance(func, ast.Attribute) and func.attr in ("from_markup", "from_ansi"):
                found.append(f"{where}:{node.lineno}: reads text as {func.attr[5:]} by hand")
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = named(base)
                if name is not None:
                    found.append(f"{where}:{node.lineno}: {node.name} derives from {name}")
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in ("render", "render_lines", "get_line"):
                    found.append(f"{where}:{item.lineno}: {node.name}.{item.name} draws past the filter")
                elif isinstance(item, ast.FunctionDef) and item.name == "render_line":
                    calls_super = any(
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "render_line"
                        and isinstance(call.func.value, ast.Call)
                        and getattr(call.func.value.func, "id", "") == "super"
                        for call in ast.walk(item)
                    )
                    if not calls_super:  # a line drawn from the filtered one (a mark blanked) is fine
                        found.append(f"{where}:{item.lineno}: {node.name}.render_line draws past the filter")
    return found


def test_drill_ui_makes_no_widget_that_skips_the_filter():
    found = []
    for path in sorted(UI.glob("*.py")):
        if path.name not in FILTERED_WIDGETS:
            found += unfiltered_widgets(path.read_text(encoding="utf-8"), path.name)
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "from textual.widgets import Static\nStatic(card.prompt)",
        "from textual.widgets import Label as L\nL(text)",
        "from textual.widgets import SelectionList\nclass Points(SelectionList[int]): pass",
        "from textual.widgets import TextArea\nTextArea.code_editor(draft)",
        "from textual.widgets import Static\nclass Chart(Static):\n    def render(self): return self.text",
        "from textual.widgets import RichLog\nRichLog()",
        "from textual.notifications import Notification\nNotification(message)",
        "from textual.content import Content\nContent.from_markup(text)",
        "from rich.markup import escape\nf'[b]{escape(card.id)}[/b]'",
        "SystemCommand(f'Practise {topic}', 'help', run)",
    ],
)
def test_the_source_check_finds_a_widget_made_past_the_filter(source):
    assert unfiltered_widgets(textwrap.dedent(source), "x.py")


def test_the_source_check_takes_the_filtered_widgets():
    source = """\
    from textual.widgets import Footer, Input, Static
    from drill.ui.screen_text import SafeStatic, notice_text
    from textual.notifications import Notification
    class Top(SafeStatic): pass
    SafeStatic(card.prompt)
    Footer()
    isinstance(w, Input)
    query_one("#x", Static)
    Notification(notice_text(message))
    SystemCommand(f"Practise this topic ({markup_text(topic)})", "Today's cards", run)
    """
    assert unfiltered_widgets(textwrap.dedent(source), "x.py") == []
