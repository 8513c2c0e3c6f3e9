"""Shared driver for the app proofs: the real `drill` in a pseudo-terminal, read as a person sees it.

Each app runs as its own process on a fresh pseudo-terminal of a chosen size
(set on the terminal itself, as a terminal window does). Everything it paints
goes through a small terminal emulator kept here, so a proof reads the screen as
rows of text: the top line, the grade bar, the key line, notices. Nothing beyond
the standard library is needed (no tmux, no terminal emulator package), so the
proofs run wherever Python has pseudo-terminals (Linux, other POSIX systems).

The emulator covers what a full-screen terminal app sends: cursor moves, erases,
insertions and deletions, the alternate screen, scroll regions, autowrap, wide
characters, and the queries and mode switches it may send (answered by nothing,
as a plain terminal would). Colours and styles are read past: the proofs look
at text.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Keys as a terminal sends them.
ENTER = b"\r"
TAB = b"\t"
DOWN = b"\x1b[B"
UP = b"\x1b[A"
CTRL_Q = b"\x11"
CTRL_S = b"\x13"
CTRL_T = b"\x14"
CTRL_Z = b"\x1a"

KINDS = ("concept", "shape trace", "memory ledger", "diagnosis", "kernel")
# done D · left L[ · N grade(s) saved][ · 12 days to the interview][  again: …] │ kind · deck
TOP = re.compile(
    r"done (?P<done>\d+) · left (?P<left>\d+)(?: · (?P<saved>\d+) grades? saved)?(?: · [^│]*?)?"
    r"(?:\s+again: [^│]*?)?\s*│ (?P<where>.*?)\s*$"
)
# How the hint under a fresh card begins, by kind (the rest may be hidden under a notice): it follows the focus,
# which starts in the first field, or on the page for a diagnosis (its evidence comes first).
TYPED_ANSWER_STARTS = ("enter or tab next field", "enter checks your answers")
HINT_START: dict[str, tuple[str, ...]] = {
    "concept": ("answer in the field",),
    "shape trace": TYPED_ANSWER_STARTS,
    "memory ledger": TYPED_ANSWER_STARTS,
    "diagnosis": ("reading the page",),
    "kernel": ("space ",),
}
REVEALED = re.compile(r"(suggested \d \(enter\) · )?0 blackout")
# A notice that reports trouble, and screen text that only trouble puts there (card text
# may well say "error", so the wider words are looked for in notices only).
# whole words: a card id such as fp8-block-gemm in a notice ("buried … until tomorrow") is no lock
NOTICE_TROUBLE = re.compile(r"\block(?:ed|s)?\b|error|database|Traceback|cannot|failed", re.I)
SCREEN_TROUBLE = re.compile(
    r"database is locked|is in use by another program|cannot open the database|drill\.sqlite3|"
    r"StoreError|OperationalError"
)
# A traceback of the app itself (Python's or Rich's layout) names a file of drill or Textual; a diagnosis
# card's evidence may show the traceback of the learner's program (".../transformers/..."), which is no trouble.
APP_FRAME = re.compile(r"/(?:drill|textual)/[\w./-]*\.py")


def _starts(text: str, word: str) -> list[int]:
    """Where `word` begins in `text`, every place."""
    return [m.start() for m in re.finditer(re.escape(word), text)]


def char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


class Terminal:
    """A minimal VT100/xterm screen: feed it the app's output, read the rows as text."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # an escape sequence cut between two reads
        self.autowrap = True
        self.main = self._blank_screen()
        self.alt = self._blank_screen()
        self.grid = self.main
        self.x = self.y = 0
        self.saved_cursor = (0, 0)
        self.top, self.bottom = 0, rows - 1
        self.wrap_next = False
        self.in_alt = False

    def _blank_screen(self) -> list[list[str]]:
        return [[" "] * self.cols for _ in range(self.rows)]

    # -- reading -------------------------------------------------------------
    def lines(self) -> list[str]:
        return ["".join(c for c in row if c is not None) for row in self.grid]

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines())

    # -- feeding -------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        text = self._pending + self._decoder.decode(data)
        self._pending = ""
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch == "\x1b":
                end = self._escape(text, i)
                if end is None:  # incomplete: keep for the next read
                    self._pending = text[i:]
                    return
                i = end
                continue
            if ch == "\r":
                self.x, self.wrap_next = 0, False
            elif ch in "\n\x0b\x0c":
                self._linefeed()
            elif ch == "\b":
                self.x, self.wrap_next = max(0, self.x - 1), False
            elif ch == "\t":
                self.x = min(self.cols - 1, (self.x // 8 + 1) * 8)
            elif ch < " " or ch == "\x7f":
                pass  # bell and other controls
            else:
                self._put(ch)
            i += 1

    def _put(self, ch: str) -> None:
        width = char_width(ch)
        if width == 0:
            return
        if self.wrap_next and self.autowrap:
            self.x = 0
            self._linefeed()
        self.wrap_next = False
        if width == 2 and self.x == self.cols - 1:
            if not self.autowrap:
                return
            self.x = 0
            self._linefeed()
        row = self.grid[self.y]
        row[self.x] = ch
        if width == 2:
            row[self.x + 1] = None  # type: ignore[call-overload]
        if self.x + width >= self.cols:
            self.x = self.cols - 1
            self.wrap_next = True
        else:
            self.x += width

    def _linefeed(self) -> None:
        if self.y == self.bottom:
            self._scroll_up(1)
        elif self.y < self.rows - 1:
            self.y += 1

    def _scroll_up(self, n: int) -> None:
        for _ in range(n):
            del self.grid[self.top]
            self.grid.insert(self.bottom, [" "] * self.cols)

    def _scroll_down(self, n: int) -> None:
        for _ in range(n):
            del self.grid[self.bottom]
            self.grid.insert(self.top, [" "] * self.cols)

    def _escape(self, text: str, i: int) -> int | None:
        """Apply the escape sequence at text[i]; return the index after it, or None if cut short."""
        if i + 1 >= len(text):
            return None
        kind = text[i + 1]
        if kind == "[":
            j = i + 2
            while j < len(text) and not ("@" <= text[j] <= "~"):
                j += 1
            if j >= len(text):
                return None
            self._csi(text[i + 2 : j], text[j])
            return j + 1
        if kind in "]PX^_":  # OSC, DCS, SOS, PM, APC: up to BEL or ST
            j = i + 2
            while j < len(text):
                if text[j] == "\x07":
                    return j + 1
                if text[j] == "\x1b":
                    if j + 1 >= len(text):
                        return None
                    if text[j + 1] == "\\":
                        return j + 2
                j += 1
            return None
        if kind in "()*+#%":  # charset choice and friends: one more character
            return i + 3 if i + 2 < len(text) else None
        if kind == "7":
            self.saved_cursor = (self.x, self.y)
        elif kind == "8":
            self.x, self.y = self.saved_cursor
        elif kind == "M":
            if self.y == self.top:
                self._scroll_down(1)
            else:
                self.y = max(0, self.y - 1)
        elif kind == "D":
            self._linefeed()
        elif kind == "E":
            self.x = 0
            self._linefeed()
        elif kind == "c":
            self.__init__(self.cols, self.rows)  # type: ignore[misc]
        return i + 2

    def _csi(self, params: str, final: str) -> None:
        private = params[:1] if params[:1] in "?<=>" else ""
        body = params[len(private) :].rstrip(" !\"#$%&'()*+,-./")
        intermediate = params[len(private) + len(body) :]
        if intermediate or (private and final not in "hl"):
            return  # queries ($p), keyboard modes (>u), and the like: nothing to paint
        nums = []
        for part in body.split(";") if body else []:
            part = part.split(":")[0]
            nums.append(int(part) if part.isdigit() else 0)

        def arg(k: int, default: int = 1) -> int:
            v = nums[k] if k < len(nums) else 0
            return v if v else default

        self.wrap_next = False if final not in "m" else self.wrap_next
        if final in "Hf":
            self.y = min(self.rows - 1, arg(0) - 1)
            self.x = min(self.cols - 1, arg(1) - 1)
        elif final == "A":
            self.y = max(0, self.y - arg(0))
        elif final in "Be":
            self.y = min(self.rows - 1, self.y + arg(0))
        elif final in "Ca":
            self.x = min(self.cols - 1, self.x + arg(0))
        elif final == "D":
            self.x = max(0, self.x - arg(0))
        elif final == "E":
            self.x, self.y = 0, min(self.rows - 1, self.y + arg(0))
        elif final == "F":
            self.x, self.y = 0, max(0, self.y - arg(0))
        elif final in "G`":
            self.x = min(self.cols - 1, arg(0) - 1)
        elif final == "d":
            self.y = min(self.rows - 1, arg(0) - 1)
        elif final == "J":
            mode = nums[0] if nums else 0
            if mode == 0:
                self._erase_line(self.x, self.cols)
                for r in range(self.y + 1, self.rows):
                    self.grid[r] = [" "] * self.cols
            elif mode == 1:
                self._erase_line(0, self.x + 1)
                for r in range(0, self.y):
                    self.grid[r] = [" "] * self.cols
            else:
                for r in range(self.rows):
                    self.grid[r] = [" "] * self.cols
        elif final == "K":
            mode = nums[0] if nums else 0
            if mode == 0:
                self._erase_line(self.x, self.cols)
            elif mode == 1:
                self._erase_line(0, self.x + 1)
            else:
                self._erase_line(0, self.cols)
        elif final == "X":
            self._erase_line(self.x, min(self.cols, self.x + arg(0)))
        elif final == "P":
            row = self.grid[self.y]
            n = min(arg(0), self.cols - self.x)
            del row[self.x : self.x + n]
            row.extend([" "] * n)
        elif final == "@":
            row = self.grid[self.y]
            n = min(arg(0), self.cols - self.x)
            row[self.x : self.x] = [" "] * n
            del row[self.cols :]
        elif final == "L":
            if self.top <= self.y <= self.bottom:
                for _ in range(arg(0)):
                    del self.grid[self.bottom]
                    self.grid.insert(self.y, [" "] * self.cols)
        elif final == "M":
            if self.top <= self.y <= self.bottom:
                for _ in range(arg(0)):
                    del self.grid[self.y]
                    self.grid.insert(self.bottom, [" "] * self.cols)
        elif final == "S":
            self._scroll_up(arg(0))
        elif final == "T":
            self._scroll_down(arg(0))
        elif final == "r":
            top, bottom = arg(0) - 1, arg(1, self.rows) - 1
            if 0 <= top < bottom < self.rows:
                self.top, self.bottom = top, bottom
            self.x = self.y = 0
        elif final == "s":
            self.saved_cursor = (self.x, self.y)
        elif final == "u":
            self.x, self.y = self.saved_cursor
        elif final == "m":
            pass  # colours and styles: the proofs read text only
        elif final in "hl" and private == "?":
            on = final == "h"
            for mode in nums:
                if mode == 7:
                    self.autowrap = on
                elif mode in (47, 1047, 1049):
                    self._alternate(on, mode)

    def _erase_line(self, start: int, stop: int) -> None:
        row = self.grid[self.y]
        for c in range(max(0, start), min(self.cols, stop)):
            row[c] = " "

    def _alternate(self, on: bool, mode: int) -> None:
        if on == self.in_alt:
            return
        if on:
            if mode == 1049:
                self.saved_cursor = (self.x, self.y)
            self.alt = self._blank_screen()
            self.grid = self.alt
        else:
            self.grid = self.main
            if mode == 1049:
                self.x, self.y = self.saved_cursor
        self.in_alt = on


_ANSI = re.compile(
    r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|\x1b[=>78cDEM]"
)


def strip_escapes(text: str) -> str:
    return _ANSI.sub("", text)


def app_env(extra: dict[str, str] | None = None, drop: Sequence[str] = ()) -> dict[str, str]:
    """The environment of an app under test: this checkout importable, a plain xterm, no size override."""
    env = {k: v for k, v in os.environ.items() if k not in ("DRILL_HOME", "COLUMNS", "LINES", *drop)}
    env["PYTHONPATH"] = str(REPO)
    env["TERM"] = "xterm-256color"
    env.setdefault("HOME", str(Path.home()))
    env.pop("TEXTUAL", None)
    env.pop("NO_COLOR", None)
    if extra:
        env.update(extra)
    return env


def drill_command(data_dir: Path, *flags: str) -> list[str]:
    """The app as a learner starts it: the installed `drill` beside this Python, else `python -m drill`."""
    script = Path(sys.executable).with_name("drill")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "drill"]
    return [*head, "--data-dir", str(data_dir), *flags]


@dataclass
class Top:
    """The app's top line: `done D · left L · N saved │ kind · Deck`."""

    done: int
    left: int
    saved: int
    where: str
    kind: str | None  # None where the line does not show it
    line: str
    kind_from_hint: bool = False  # the kind was read from the hint under the card instead


class AppGone(RuntimeError):
    """The app process ended (killed, crashed or quit) while the proof waited on it."""


class App:
    """One real app process on its own pseudo-terminal, with a reader thread keeping its screen."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cols: int = 100,
        rows: int = 40,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cols, self.rows = cols, rows
        self.term = Terminal(cols, rows)
        self.raw = bytearray()  # everything the app wrote
        self.saw_traceback_word = False  # "Traceback" anywhere in it: an app's traceback, or a card showing one
        self._tail = b""
        self.lock = threading.Lock()
        self.last_output = time.monotonic()
        self.started = time.monotonic()
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            self.argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env if env is not None else app_env(),
            cwd=str(REPO),
            start_new_session=True,
            preexec_fn=_take_terminal,
            close_fds=True,
        )
        os.close(slave)
        self.fd = master
        self.pid = self.proc.pid  # the drill process itself (no shell in between)
        self._eof = threading.Event()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- output ----------------------------------------------------------------
    def _read_loop(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                break
            if not data:
                break
            with self.lock:
                self.raw.extend(data)
                self.term.feed(data)
                self.last_output = time.monotonic()
                seen = strip_escapes((self._tail + data).decode("utf-8", "replace"))
                self.saw_traceback_word = self.saw_traceback_word or "Traceback" in seen
                self._tail = data[-256:]
        self._eof.set()

    def lines(self) -> list[str]:
        with self.lock:
            return self.term.lines()

    def text(self) -> str:
        with self.lock:
            return self.term.text()

    def output_text(self) -> str:
        """All the app wrote so far as plain text (escape sequences removed)."""
        with self.lock:
            return strip_escapes(bytes(self.raw).decode("utf-8", "replace"))

    def top(self) -> Top | None:
        """The top line read back; None while no card line is painted."""
        with self.lock:
            first = self.term.lines()[0] if self.term.rows else ""
        m = TOP.search(first)
        if not m:
            return None
        where = m.group("where")
        head = where.split("  ")[0]  # flags such as "leech" follow after two spaces
        kind = next((k for k in KINDS if head.startswith(k + " · ") or head == k), None)
        return Top(
            done=int(m.group("done")),
            left=int(m.group("left")),
            saved=int(m.group("saved") or 0),
            where=where,
            kind=kind,
            line=first.strip(),
        )

    def saved(self) -> int:
        """The "N saved" of the top line (0 while it is not shown)."""
        top = self.top()
        return top.saved if top else 0

    def left(self) -> int | None:
        top = self.top()
        return top.left if top else None

    def kind_from_hint(self) -> str | None:
        """The card's kind read from the hint under it (and, for typed answers, the fields' placeholders)."""
        bar = self.grade_bar()
        for kind in ("concept", "diagnosis", "kernel"):
            if bar.startswith(HINT_START[kind]):
                return kind
        if bar.startswith(TYPED_ANSWER_STARTS):
            if empty_fields(self, "shape trace"):
                return "shape trace"
            if empty_fields(self, "memory ledger"):
                return "memory ledger"
        return None

    def grade_bar(self) -> str:
        """The row above the key line (the grade meanings once an answer is shown)."""
        lines = self.lines()
        return lines[-2].strip() if len(lines) >= 2 else ""

    def key_line(self) -> str:
        lines = self.lines()
        return lines[-1].strip() if lines else ""

    def revealed(self) -> bool:
        """Whether the grade meanings are shown (their start: a notice may cover the rest of the line)."""
        return bool(REVEALED.match(self.grade_bar()))

    def all_done(self) -> bool:
        return "All done for today" in self.text()

    def toasts(self) -> list[str]:
        """The notices painted now (each a box with a ▌ edge at the right of the screen), as text."""
        found: list[str] = []
        current: list[str] = []
        for line in self.lines():
            at = line.find("▌")
            if at < 0:
                if current:
                    found.append(" ".join(current))
                    current = []
                continue
            part = line[at + 1 :].strip()
            if part:
                current.append(part)
        if current:
            found.append(" ".join(current))
        return [t for t in found if t]

    @property
    def saw_traceback(self) -> bool:
        """Whether the app printed a traceback of its own (one that names a file of drill or Textual)."""
        if not self.saw_traceback_word:
            return False
        with self.lock:
            text = strip_escapes(bytes(self.raw).decode("utf-8", "replace"))
        return any(APP_FRAME.search(text, start) for start in _starts(text, "Traceback (most recent call last)"))

    def trouble(self) -> list[str]:
        """What reads like an error: a notice about locks or errors, a database message, a traceback."""
        found = [f"notice: {t}" for t in self.toasts() if NOTICE_TROUBLE.search(t)]
        found += [f"screen: {line.strip()}" for line in self.lines() if SCREEN_TROUBLE.search(line)]
        if self.saw_traceback:
            found.append("Traceback in the app's output")
        return found

    def quiet_for(self) -> float:
        with self.lock:
            return time.monotonic() - self.last_output

    # -- input -----------------------------------------------------------------
    def send(self, keys: bytes | str) -> None:
        if isinstance(keys, str):
            keys = keys.encode()
        if not self.alive():
            raise AppGone(f"app {self.pid} has ended (status {self.proc.returncode})")
        try:
            os.write(self.fd, keys)
        except OSError as exc:
            raise AppGone(f"app {self.pid}: {exc}") from exc

    # -- waiting ---------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_for(self, test: Callable[[], object], timeout: float = 10.0, poll: float = 0.01) -> object:
        """Wait until `test()` is truthy and return it; raise AppGone if the app ends, TimeoutError at the limit."""
        end = time.monotonic() + timeout
        while True:
            value = test()
            if value:
                return value
            if not self.alive():
                time.sleep(0.05)  # let the reader take the last of the output
                value = test()
                if value:
                    return value
                raise AppGone(f"app {self.pid} ended (status {self.proc.returncode}) while waiting")
            if time.monotonic() > end:
                raise TimeoutError("the screen never showed what was awaited")
            time.sleep(poll)

    def settle(self, quiet: float = 0.12, timeout: float = 3.0) -> None:
        """Wait until the app has painted nothing for `quiet` seconds (or `timeout` passes)."""
        end = time.monotonic() + timeout
        while self.quiet_for() < quiet and time.monotonic() < end:
            if not self.alive():
                return
            time.sleep(0.01)

    def wait_card(self, timeout: float = 30.0, quiet: float = 0.1) -> Top | None:
        """Wait for a fresh card, fully painted (returned: its top line), or the end-of-day screen (None).

        The top line changes first; the card's prompt, fields and hint follow a
        moment later (longer the first time a kind is shown), so this waits for
        the hint that belongs to the card's kind and then a short quiet spell.
        """

        def ready() -> object:
            if self.all_done():
                return "done"
            top = self.top()
            if top is None or self.revealed():
                return None
            if top.kind is None:  # the kind is not on the top line (cut short, or under a notice)
                top.kind = self.kind_from_hint()
                top.kind_from_hint = True
                if top.kind is None and self.quiet_for() < 2.0:
                    return None
            start = HINT_START.get(str(top.kind))
            if start is not None and not self.grade_bar().startswith(start):
                return None
            if self.quiet_for() < quiet:
                return None
            return top

        result = self.wait_for(ready, timeout)
        return result if isinstance(result, Top) else None

    # -- ending ----------------------------------------------------------------
    def kill9(self) -> None:
        """SIGKILL the drill process itself."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait_exit(self, timeout: float = 15.0) -> int | None:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._eof.wait(2.0)
        return rc

    def close(self) -> None:
        if self.alive():
            self.kill9()
            self.proc.wait()
        self._eof.wait(2.0)
        try:
            os.close(self.fd)
        except OSError:
            pass


def _take_terminal() -> None:
    """In the child: make the pseudo-terminal its controlling terminal, as a terminal window does."""
    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    except OSError:
        pass


# -- answering cards as a person would ---------------------------------------------
SENTENCES = (
    "Keep a running max and sum per row and rescale the partial output when the max grows.",
    "It is memory bound: the kernel reads each byte once and does little math per byte.",
    "All-reduce is a reduce-scatter followed by an all-gather, so each rank sends 2(n-1)/n of the data.",
    "The optimizer states dominate: Adam keeps two fp32 moments plus a master copy of the weights.",
    "Fuse the elementwise ops so the tensor makes one trip through HBM instead of three.",
)
SHAPES = ("(B, S, D)", "(B, H, S, D/H)", "(B*S, D)", "(B, S, V)", "(B, H, S, S)")
QUANTITIES = ("2.5 GiB", "320 KiB", "12 ms", "1.2e15", "7.5B", "25%", "900 GB/s", "3.4 PFLOP", "64")
EXPERIMENTS = (
    "double the batch size, hold the sequence length, measure tokens per second",
    "profile with nsys, hold the model fixed, compare the NCCL time per step",
    "turn off the fused kernel, keep everything else, measure the HBM bandwidth",
)
SHAPE_HINT = "shape, e.g. (B, S, D)"
# How the placeholder of an empty memory-ledger field begins, by unit (bytes, seconds, ...).
LEDGER_HINTS = (
    "bytes, units welcome: ",
    "a time: ",
    "FLOPs: ",
    "a count: ",
    "a fraction or percent: ",
    "FLOP per byte: ",
    "a rate: ",
)


def chosen(app: "App") -> bool:
    """Whether a diagnosis card says which choice was taken."""
    return any("Your reading of the evidence: " in line for line in app.lines())


def empty_fields(app: App, kind: str) -> int:
    """How many empty answer fields of this card are painted: lines that are a field's placeholder.

    Only whole lines count: card text may well contain words such as "FLOPs: ".
    """
    lines = [line.strip() for line in app.lines()]
    if kind == "shape trace":
        return sum(line.startswith(SHAPE_HINT) for line in lines)
    if kind == "memory ledger":
        return sum(line.startswith(LEDGER_HINTS) for line in lines)
    return 1


class Answerer:
    """Answers the card on screen the way a learner would, key by key.

    `before_key` is called before each key with a label ("type", "enter",
    "grade"...): a proof can stop there (kill the app mid-answer) by raising.
    """

    def __init__(self, app: App, rng, per_key: tuple[float, float] = (0.005, 0.03), timeout: float = 15.0) -> None:
        self.app = app
        self.rng = rng
        self.per_key = per_key
        self.timeout = timeout
        self.tab_missed = 0  # diagnosis cards where tab did not move into the choice list
        self.experiment_lost = 0  # experiment lines typed into a diagnosis card that went nowhere

    def type(self, text: str) -> None:
        for ch in text:
            self.key(ch, "type")

    def key(self, keys: bytes | str, what: str) -> None:
        self.before_key(what)
        self.app.send(keys)
        time.sleep(self.rng.uniform(*self.per_key))

    def before_key(self, what: str) -> None:
        """Hook for proofs; does nothing here."""

    def answer(self, kind: str | None) -> bool:
        """Fill in and check the card; True once the grade meanings are shown, False if it was set aside."""
        app = self.app
        if kind == "kernel" or kind is None:
            return False
        if kind == "concept":
            self.type(self.rng.choice(SENTENCES))
            self.key(ENTER, "enter")
        elif kind == "diagnosis":
            # tab to the choices, move, enter chooses and moves on to the experiment
            downs = self.rng.randint(0, 3)
            self.key(TAB, "tab")
            for _ in range(downs):
                self.key(DOWN, "down")
            self.key(ENTER, "enter")
            try:
                app.wait_for(lambda: chosen(app), 3.0)
            except TimeoutError:
                # tab did not reach the choices (enter then only moved into them): choose again
                self.tab_missed += 1
                for _ in range(downs):
                    self.key(DOWN, "down")
                self.key(ENTER, "enter")
                app.wait_for(lambda: chosen(app), self.timeout)
            experiment = self.rng.choice(EXPERIMENTS)
            for attempt in range(3):
                app.settle(0.1, 2.0)
                if app.revealed():
                    return True
                self.type(experiment)
                self.key(ENTER, "enter")
                try:
                    app.wait_for(app.revealed, 4.0 if attempt < 2 else self.timeout)
                    return True
                except TimeoutError:
                    # the line went nowhere (the experiment field had lost focus; that
                    # enter moved back into it): type it again
                    self.experiment_lost += 1
        else:
            # One answer per field, enter after each; enter on the last checks the form.
            # The fields are counted by their placeholders; one hidden below the fold is
            # found when no answer shows after the last counted one. A digit typed once the
            # answer is shown would grade the card, so the next answer is typed only after
            # a long wait has shown that the answer is not coming.
            pool = SHAPES if kind == "shape trace" else QUANTITIES
            fields = max(1, empty_fields(app, kind))
            for i in range(12):
                if i:
                    app.settle(0.1, 1.0)
                    if app.revealed():  # fewer fields than counted: never type a digit now
                        return True
                self.type(self.rng.choice(pool))
                self.key(ENTER, "enter")
                if i + 1 >= fields:
                    try:
                        app.wait_for(app.revealed, self.timeout)
                        return True
                    except TimeoutError:
                        app.settle(0.3, 3.0)
                        if app.revealed():
                            return True
        app.wait_for(app.revealed, self.timeout)
        return True

    def set_aside(self) -> None:
        """Bury the card (a kernel card opens an editor on space; a learner skips it here)."""
        self.key(CTRL_T, "bury")
