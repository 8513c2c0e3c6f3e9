"""Proof: drill works in small and large terminals, without colour, and under a non-UTF-8 locale.

Each case starts the real app in a pseudo-terminal of the given size and
environment, on a fresh data directory, and checks what a learner would see:

  - the first card is painted (the top line reads "done 0 · left ...");
  - the hint line and the key line at the bottom are there in full (not cut
    short, and not cut mid-word), before and after the answer is shown;
  - one card can be answered and graded (the top line then says "1 saved");
    at 80x24 one card of each kind that has answer fields is graded, so the
    grade bar is seen with its suggested grade as well;
  - ctrl+q quits, the process exits 0, and no "Traceback" appears anywhere.

For the locale cases the proof also reports what the Python under that
environment actually used: Python 3.7+ turns on its UTF-8 mode under the C and
POSIX locales (PEP 540), so the app still writes UTF-8 there.

    .venv/bin/python proof/terminals.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from _screen import CTRL_Q, ENTER, Answerer, App, AppGone, app_env, drill_command

FLAGS = ("--new-per-day", "400", "--new-order", "random")
# The hint under a fresh card, by kind, and the grade meanings once the answer is shown.
# It follows the focus: the first field's (enter goes on, or checks when it is the only one), or the page's for a
# diagnosis, whose evidence comes first.
TYPED = ("enter or tab next field · esc scroll the page", "enter checks your answers · esc scroll the page")
HINTS: dict[str, tuple[str, ...]] = {
    "concept": ("answer in the field or out loud · enter show the answer · esc scroll the page",),
    "shape trace": TYPED,
    "memory ledger": TYPED,
    "diagnosis": ("reading the page: ↑↓ scroll · ←→ wide output · tab or enter to answer",),
}
GRADES = "0 blackout  1 wrong  2 almost  3 hard  4 good  5 perfect"
KEYS = ("^z Undo", "^s Suspend", "^t Bury", "^q Quit", "^p palette")
SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def colour_codes(raw: str) -> tuple[int, set[tuple[int, ...]]]:
    """How many style sequences the app sent that set a colour, and how many distinct colours they name."""
    count, colours = 0, set[tuple[int, ...]]()
    for params in SGR.findall(raw):
        nums = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", params)]
        k, hit = 0, False
        while k < len(nums):
            n = nums[k]
            if n in (38, 48) and k + 1 < len(nums):
                step = 3 if nums[k + 1] == 5 else 5
                colours.add(tuple(nums[k + 1 : k + step]))
                k += step
                hit = True
                continue
            if 30 <= n <= 37 or 40 <= n <= 47 or 90 <= n <= 97 or 100 <= n <= 107:
                colours.add((n % 10, int(n >= 90)))
                hit = True
            k += 1
        count += hit
    return count, colours


def grey(colour: tuple[int, ...]) -> bool:
    """Whether a colour named in a style sequence is black, white or a grey."""
    if len(colour) == 2 and colour[0] == 5:
        return colour[1] >= 232 or colour[1] in (0, 7, 8, 15, 16, 231)
    if len(colour) == 4 and colour[0] == 2:
        return colour[1] == colour[2] == colour[3]
    return colour[0] in (0, 7) if len(colour) == 2 else False


@dataclass
class Case:
    name: str
    cols: int
    rows: int
    env: dict[str, str] = field(default_factory=dict)
    every_kind: bool = False  # grade one card of each answered kind, not just the first card


CASES = (
    Case("80x24", 80, 24, every_kind=True),
    Case("200x60", 200, 60),
    Case("NO_COLOR=1", 80, 24, {"NO_COLOR": "1"}),
    Case("LC_ALL=C LANG=C", 80, 24, {"LC_ALL": "C", "LANG": "C"}),
    Case("LC_ALL=POSIX", 80, 24, {"LC_ALL": "POSIX"}),
)
QUICK = ("80x24", "NO_COLOR=1", "LC_ALL=C LANG=C")


def python_encoding(env: dict[str, str]) -> str:
    """What Python uses under `env`: preferred encoding, stdout encoding, UTF-8 mode, LC_CTYPE locale."""
    code = (
        "import locale, sys; "
        "print(locale.getpreferredencoding(), sys.stdout.encoding, sys.flags.utf8_mode, locale.setlocale(locale.LC_CTYPE))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    ).stdout.split()
    if len(out) < 4:
        return "unknown"
    pref, stdout, utf8_mode, ctype = out[:4]
    return f"locale {ctype}, preferred {pref}, stdout {stdout}, utf8_mode {utf8_mode}"


def whole(shown: str, expected: str) -> str:
    """'' when the line shows `expected` in full; else what is wrong with it."""
    if shown == expected:
        return ""
    if expected.startswith(shown):
        cut = "mid-word" if shown and expected[len(shown)] not in " ·" else "at a word"
        return f"cut {cut}: shows {shown!r} of {expected!r}"
    return f"shows {shown!r}, expected {expected!r}"


def clear_notices(app: App) -> None:
    """Wait for notices to time out, so that none covers the bottom lines being read."""
    try:
        app.wait_for(lambda: not app.toasts(), 12)
    except TimeoutError:
        pass


@dataclass
class Outcome:
    case: str
    size: str
    problems: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # seen and reported, not part of PASS/FAIL
    first_paint: str = "-"
    top: str = "-"
    kind: str = "-"  # the first card's kind
    hints: dict[str, str] = field(default_factory=dict)  # by kind: the hint under a fresh card
    bars: dict[str, str] = field(default_factory=dict)  # by kind: the grade bar once the answer shows
    keys: str = "-"
    graded: str = "no"
    exit: str = "-"
    traceback: str = "-"
    colour_codes: int = 0
    colours: int = 0
    greys_only: str = "-"
    undecodable: int = 0
    encoding: str = "-"


def run_case(case: Case, rng: random.Random) -> Outcome:
    env = app_env(case.env)
    tmp = Path(tempfile.mkdtemp(prefix="drill-term-"))
    app = App(drill_command(tmp / "data", *FLAGS), cols=case.cols, rows=case.rows, env=env)
    out = Outcome(case.name, f"{case.cols}x{case.rows}")
    problems = out.problems
    started = time.monotonic()
    answerer = Answerer(app, rng)
    try:
        top = app.wait_card(timeout=60)
        out.first_paint = f"{time.monotonic() - started:.1f} s"
        if top is None or not top.line.startswith("done 0 · left"):
            problems.append(f"first card not painted; top line: {app.lines()[0].strip()!r}")
            raise RuntimeError
        out.top = top.line
        saved = 0
        for _ in range(40):
            if top is None:
                break
            kind = str(top.kind)
            if kind == "kernel":  # its space key opens an editor: bury it
                left = top.left
                answerer.set_aside()
                app.wait_for(lambda: app.left() != left, 10)
                top = app.wait_card(timeout=30)
                continue
            if case.every_kind and kind == "concept" and kind in out.bars:
                app.send(ENTER)  # seen already: show the answer and grade it at once
                app.wait_for(app.revealed, 15)
                app.send("5")
                saved += 1
                app.wait_for(lambda: app.saved() == saved, 15)
                top = app.wait_card(timeout=30)
                continue
            clear_notices(app)
            shown = app.top()
            if shown is not None and shown.kind is None:  # no notice covers it: the line is cut
                out.findings.append(
                    f"top line cut at {case.cols} columns, the card kind ({kind}) is not shown: {shown.line!r}"
                )
            if out.kind == "-":
                out.kind = kind
            hint = app.grade_bar()
            out.hints.setdefault(kind, hint)
            wrongs = [whole(hint, expected) for expected in HINTS.get(kind, (hint,))]
            wrong = "" if "" in wrongs else wrongs[0]
            if wrong:
                problems.append(f"{kind} hint line {wrong}")
            # the footer takes its keys just after the first paint: give it that moment before reading
            try:
                app.wait_for(lambda: all(k in app.key_line() for k in KEYS), 5)
            except TimeoutError:  # reported below with what it shows
                pass
            keys = app.key_line()
            if out.keys == "-":
                out.keys = keys
            missing = [k for k in KEYS if k not in keys]
            if missing:
                problems.append(f"key line lacks {missing}: shows {keys!r}")
            if not answerer.answer(kind):
                problems.append(f"a {kind} card could not be answered")
                raise RuntimeError
            app.settle(0.1)
            clear_notices(app)
            bar = app.grade_bar()
            out.bars.setdefault(kind, bar)
            suggested = re.match(r"suggested \d \(enter\) · ", bar)
            wrong = whole(bar[suggested.end() :] if suggested else bar, GRADES)
            if wrong:
                problems.append(f"{kind} grade bar {wrong}")
            app.send("4")
            saved += 1
            app.wait_for(lambda: app.saved() == saved, 15)
            if not case.every_kind or len(out.bars) == len(HINTS):
                break
            top = app.wait_card(timeout=30)
        out.graded = f"{saved} ({', '.join(out.bars)})" if case.every_kind else f"yes ({saved} saved)"
        if case.every_kind and len(out.bars) < len(HINTS):
            problems.append(f"only these kinds came up: {list(out.bars)}")
        app.settle(0.2)
        app.send(CTRL_Q)
        rc = app.wait_exit(20)
        out.exit = str(rc) if rc is not None else "still running"
        if rc != 0:
            problems.append(f"exit status {rc}")
    except RuntimeError:
        pass
    except (AppGone, TimeoutError) as exc:
        screen = "\n      ".join(line.rstrip() for line in app.lines() if line.strip())
        problems.append(f"{type(exc).__name__}: {exc}; screen:\n      {screen}")
    finally:
        app.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if answerer.tab_missed:
        out.findings.append(f"tab did not move into the choice list on {answerer.tab_missed} diagnosis card(s)")
    if answerer.experiment_lost:
        out.findings.append(f"a typed experiment line went nowhere {answerer.experiment_lost} time(s)")
    output = app.output_text()
    raw = bytes(app.raw).decode("utf-8", "replace")
    out.traceback = "yes" if "Traceback" in output else "no"
    if "Traceback" in output:
        problems.append("Traceback in the output")
    out.colour_codes, colours = colour_codes(raw)
    out.colours = len(colours)
    out.greys_only = "yes" if all(grey(c) for c in colours) else "no"
    if "NO_COLOR" in case.env and out.greys_only != "yes":
        problems.append("NO_COLOR is set, yet the app paints in colour")
    out.undecodable = raw.count("\ufffd")
    out.encoding = python_encoding(env)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="three of the cases, for CI")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = [replace(c, every_kind=False) for c in CASES if c.name in QUICK] if args.quick else list(CASES)
    started = time.monotonic()
    rows = [run_case(case, rng) for case in cases]
    elapsed = time.monotonic() - started

    columns: list[tuple[str, int, Callable[[Outcome], object]]] = [
        ("case", 16, lambda r: r.case),
        ("size", 7, lambda r: r.size),
        ("1st card", 8, lambda r: r.first_paint),
        ("kind", 8, lambda r: r.kind),
        ("graded", 52, lambda r: r.graded),
        ("exit", 5, lambda r: r.exit),
        ("traceback", 9, lambda r: r.traceback),
        ("colour", 7, lambda r: r.colour_codes),
        ("greys", 6, lambda r: r.greys_only),
        ("result", 6, lambda r: "ok" if not r.problems else "FAIL"),
    ]
    head = " ".join(f"{name:<{width}}" for name, width, _ in columns)
    print(head)
    print("-" * len(head))
    for r in rows:
        print(" ".join(f"{str(value(r)):<{width}}" for _, width, value in columns).rstrip())
    print()
    for r in rows:
        print(f"{r.case}:")
        print(f"  python under this environment: {r.encoding}")
        print(f"  undecodable bytes in the app's output: {r.undecodable}")
        print(f"  colour: {r.colour_codes} style sequences set a colour, {r.colours} distinct colours,")
        print(f"          all of them greys: {r.greys_only}")
        print(f"  top line:               {r.top}")
        for kind, hint in r.hints.items():
            print(f"  {kind + ' hint:':<24} {hint}")
            print(f"  {kind + ' grade bar:':<24} {r.bars.get(kind, '-')}")
        print(f"  key line:               {r.keys}")
        for p in r.problems:
            print(f"  problem: {p}")
        for f in dict.fromkeys(r.findings):
            print(f"  finding (reported, not part of PASS/FAIL): {f}")
    print(f"time {elapsed:.0f} s")
    ok = all(not r.problems for r in rows)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
