"""How long `drill` takes to paint its first card: beside a bare Textual app, and on a big deck.

    python bench/start_speed.py [--runs 7] [--only start,big-deck] [--cards 20000]

- start: a fresh `drill` in a pseudo-terminal until its first card is painted (warm deck cache, and empty),
  next to a bare Textual app that paints a paragraph and a footer, interleaved in the same run; the goal is
  the warm start within 1.3x of the bare app;
- big deck: a generated deck file of about 4 MB (20,000 cards of the kinds a learner writes most, concept,
  shape trace and memory ledger) added with --decks; the first start builds the deck cache (goal <= 10 s), a
  start after it reads the cache (goal <= 1.5 s).

Each figure is printed with its goal and PASS/FAIL; exits 1 when a goal is missed. bench/core_loop.py calls
`report_start` and `report_big_deck`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pty
import select
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

START_GOAL = 1.3  # the warm start's time over the bare app's
BIG_DECK_FIRST_GOAL_S = 10.0  # the first start on the big deck: the deck cache is built
BIG_DECK_AGAIN_GOAL_S = 1.5  # a start after it, from the cache
BIG_DECK_CARDS = 20_000
BIG_DECK_BYTES = 4 * 1024 * 1024  # a deck file may be at most this (drill.cards.loader.MAX_DECK_BYTES)

BARE_MARKER = b"Bare-paragraph-painted"
BARE_APP = f"""
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Static("{BARE_MARKER.decode()}: one paragraph of text, as a card's prompt would be.")
        yield Footer()

Bare().run()
"""


def start_env(data_dir: Path) -> dict[str, str]:
    """A measured start's environment: a terminal of 80x24, and modules byte-compiled once and then reused.

    A daily user's drill runs from byte-compiled modules (pip compiles a wheel's on install), as the bare
    app's Textual does here; with PYTHONDONTWRITEBYTECODE set in the calling shell, drill's own modules would
    be compiled again at every start. Both apps' modules are cached under the run's temporary folder instead.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **env,
        "DRILL_HOME": str(data_dir),
        "PYTHONPYCACHEPREFIX": str(data_dir.parent / "pycache"),
        "COLUMNS": "80",
        "LINES": "24",
        "TERM": "xterm-256color",
    }


def seconds_to_paint(data_dir: Path, marker: bytes, command: list[str], limit: float = 60.0) -> float:
    """Seconds from starting `python COMMAND` in a pseudo-terminal until `marker` is written to it."""
    env = start_env(data_dir)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(sys.executable, [sys.executable, *command], env)
    start = time.perf_counter()
    seen = b""
    try:
        while time.perf_counter() - start < limit:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
                if marker in seen:
                    return time.perf_counter() - start
        raise RuntimeError(
            f"{marker.decode(errors='replace')!r} never appeared; the terminal showed:\n{seen[-2000:]!r}"
        )
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def first_card_marker(deck_roots: list[Path] | None = None) -> bytes:
    """A word of the first card a fresh learner is shown, to wait for on the terminal."""
    from drill.cards.loader import load_decks
    from drill.study.session import build_queue, study_day

    decks = load_decks(deck_roots)
    first = build_queue(decks.cards.values(), {}, study_day(dt.datetime.now()))[0]
    return decks.cards[first].prompt.split()[0].encode()


@dataclass(frozen=True)
class StartFigures:
    """Medians of interleaved starts, in seconds: the bare app, drill with an empty deck cache, with a warm one."""

    bare: float
    empty: float
    warm: float
    runs: int

    @property
    def ratio(self) -> float:
        return self.warm / self.bare


def measure_start(runs: int) -> StartFigures:
    """Cold starts of drill and of the bare app, interleaved so that machine load falls on every kind alike."""
    from drill.cards.deck_cache import CACHE_FILE

    marker = first_card_marker()
    seen: dict[str, list[float]] = {"bare": [], "empty": [], "warm": []}
    drill = ["-m", "drill"]
    bare = ["-c", BARE_APP]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "home"
        data.mkdir()
        seconds_to_paint(data, marker, drill)  # the OS file cache warmed, drill's modules compiled, once
        seconds_to_paint(data, BARE_MARKER, bare)
        for _ in range(runs):
            seen["bare"].append(seconds_to_paint(data, BARE_MARKER, bare))
            (data / CACHE_FILE).unlink(missing_ok=True)
            seen["empty"].append(seconds_to_paint(data, marker, drill))
            seen["warm"].append(seconds_to_paint(data, marker, drill))
    return StartFigures(
        bare=statistics.median(seen["bare"]),
        empty=statistics.median(seen["empty"]),
        warm=statistics.median(seen["warm"]),
        runs=runs,
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def report_start(runs: int) -> bool:
    """Print the start's figures with the goal; True when it is met."""
    figures = measure_start(runs)
    ok = figures.ratio <= START_GOAL
    print(
        f"cold start to first card: warm cache {figures.warm:.3f} s, empty cache {figures.empty:.3f} s; "
        f"bare Textual app {figures.bare:.3f} s; warm/bare {figures.ratio:.2f}x (goal <= {START_GOAL}x) "
        f"{verdict(ok)} [medians of {runs}, interleaved]"
    )
    return ok


# -- a big deck ---------------------------------------------------------------------------------------
BIG_TOPICS = ("gpu-arch", "serving", "moe", "gemm", "ddp", "zero-fsdp", "profiling", "numerics")

CONCEPT = """\
  - id: big-{n:05d}
    kind: concept
    topic: {topic}
    prompt: "Card {n}: why is decode at batch {batch} slow?"
    answer: "It rereads every weight per step."
    sources: ["generated"]
"""

SHAPE_TRACE = """\
  - id: big-{n:05d}
    kind: shape_trace
    topic: {topic}
    given: "X: (B, S, D); H = {heads} heads"
    prompt: "Card {n}: trace a {heads}-head query projection."
    steps:
      - label: "Q = X·Wq"
        shape: "(B, S, D)"
      - label: "Q split into heads"
        shape: "(B, H, S, D/H)"
    answer: "A view splits D into H x D/H."
    sources: ["generated"]
"""

MEMORY_LEDGER = """\
  - id: big-{n:05d}
    kind: memory_ledger
    topic: {topic}
    params:
      m: {{choices: [1024, 2048, 4096]}}
      k: {{choices: [1024, 4096]}}
    prompt: "Card {n}: FLOPs of a GEMM of ({{{{ m }}}} x {{{{ k }}}}) by ({{{{ k }}}} x {k_out})?"
    answers:
      - label: "FLOPs"
        expr: "gemm_flops(m, {k_out}, k)"
        unit: count
    answer: "2MNK."
    sources: ["generated"]
"""


def big_deck_text(n_cards: int = BIG_DECK_CARDS) -> str:
    """A deck of `n_cards` cards, mostly concepts, one in twenty a shape trace and one in twenty a memory ledger."""
    parts = ["deck: Big generated deck\ncards:\n"]
    for n in range(n_cards):
        topic = BIG_TOPICS[n % len(BIG_TOPICS)]
        template = SHAPE_TRACE if n % 20 == 3 else MEMORY_LEDGER if n % 20 == 13 else CONCEPT
        parts.append(
            template.format(n=n, topic=topic, tag=n % 97, batch=8 + n % 120, heads=8 + n % 25, k_out=1024 * (1 + n % 8))
        )
    return "".join(parts)


def write_big_deck(path: Path, n_cards: int = BIG_DECK_CARDS) -> int:
    """Write the big deck to `path` (its folder made); returns its size in bytes (at most a deck's limit)."""
    text = big_deck_text(n_cards)
    size = len(text.encode("utf-8"))
    if size > BIG_DECK_BYTES:
        raise ValueError(f"the big deck came to {size:,} bytes, over a deck's limit of {BIG_DECK_BYTES:,}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return size


@dataclass(frozen=True)
class BigDeckFigures:
    """Starts on the big deck, in seconds: the first (the deck cache built) and the median of those after."""

    cards: int
    deck_bytes: int
    first: float
    again: float
    runs: int


def measure_big_deck(runs: int, n_cards: int = BIG_DECK_CARDS) -> BigDeckFigures:
    """A first start on a fresh big deck (no cache yet), then `runs` starts from its cache."""
    with tempfile.TemporaryDirectory() as tmp:
        deck = Path(tmp) / "decks" / "big.yaml"
        size = write_big_deck(deck, n_cards)
        data = Path(tmp) / "home"
        data.mkdir()
        marker = first_card_marker(None)  # the bundled decks' new cards come first: their order puts the lab first
        command = ["-m", "drill", "--decks", str(deck)]
        warm_up = Path(tmp) / "warm-up"
        warm_up.mkdir()
        seconds_to_paint(warm_up, first_card_marker(), ["-m", "drill"])  # drill's modules compiled, not timed
        first = seconds_to_paint(data, marker, command, limit=120.0)
        again = [seconds_to_paint(data, marker, command) for _ in range(runs)]
    return BigDeckFigures(n_cards, size, first, statistics.median(again), runs)


def report_big_deck(runs: int, n_cards: int = BIG_DECK_CARDS) -> bool:
    """Print the big deck's figures with their goals; True when both are met."""
    figures = measure_big_deck(runs, n_cards)
    first_ok = figures.first <= BIG_DECK_FIRST_GOAL_S
    again_ok = figures.again <= BIG_DECK_AGAIN_GOAL_S
    print(
        f"big deck ({figures.cards:,} cards, {figures.deck_bytes / 1024 / 1024:.1f} MB) to first card: "
        f"first start {figures.first:.2f} s (goal <= {BIG_DECK_FIRST_GOAL_S:.0f} s) {verdict(first_ok)}, "
        f"from the deck cache {figures.again:.2f} s (goal <= {BIG_DECK_AGAIN_GOAL_S} s) {verdict(again_ok)} "
        f"[median of {runs}]"
    )
    return first_ok and again_ok


PARTS = ("start", "big-deck")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cards", type=int, default=BIG_DECK_CARDS, help="cards in the big deck")
    parser.add_argument("--only", default=",".join(PARTS), help=f"some of {', '.join(PARTS)}")
    args = parser.parse_args()
    chosen = [part.strip() for part in args.only.split(",") if part.strip()]
    ok = True
    if "start" in chosen:
        ok &= report_start(args.runs)
    if "big-deck" in chosen:
        ok &= report_big_deck(args.runs, args.cards)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
