"""Benchmarks of what a learner waits for, each printed with its goal and PASS/FAIL.

    python bench/core_loop.py [--runs 7] [--cards 10000] [--reviews 1000000] [--quick] [--only start,grade]

- cold start to the first painted card (a fresh `drill` in a pseudo-terminal), with
  an empty deck cache and with a warm one, next to a bare Textual app that paints a
  paragraph and a footer, measured in the same run: the ratio is the figure to watch
  (both start from byte-compiled modules, as installed ones do: see start_env);
- grade -> next card, p50 and p95 (nearest rank), on a database of the given size;
- on that database (10,000 cards, 1,000,000 reviews by default): `drill stats --json`
  as a fresh process (time and peak memory; its first run, which builds the deck cache and
  replays the whole log for the calibration figures, is reported apart), the stats screen's paint after ctrl+g,
  a mock plan, and a browser search (bench/browse.py).
Exits 1 when any goal is missed. `--only` runs some of the parts: start, grade, progress
(stats, the stats screen and the mock plan) and browse.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import pty
import random
import select
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self):
        yield Static("Bare-paragraph-painted: one paragraph of text, as a card's prompt would be.")
        yield Footer()

Bare().run()
"""


def start_env(data_dir: Path) -> dict[str, str]:
    """A measured start's environment: a terminal of 80x24, and modules byte-compiled once and then reused.

    A daily user's drill runs from byte-compiled modules (pip compiles a wheel's on
    install), as the bare app's Textual does here; with PYTHONDONTWRITEBYTECODE set in
    the calling shell, drill's own modules would be compiled again at every start.
    Both apps' modules are cached under the run's temporary folder instead.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    pycache = str(data_dir.parent / "pycache")
    return {
        **env,
        "DRILL_HOME": str(data_dir),
        "PYTHONPYCACHEPREFIX": pycache,
        "COLUMNS": "80",
        "LINES": "24",
        "TERM": "xterm-256color",
    }


def cold_start_once(data_dir: Path, marker: bytes, command: list[str] | None = None) -> float:
    env = start_env(data_dir)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(sys.executable, [sys.executable, *(command or ["-m", "drill"])], env)
    start = time.perf_counter()
    seen = b""
    try:
        while time.perf_counter() - start < 20:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
                if marker in seen:
                    return time.perf_counter() - start
        raise RuntimeError("the first card never appeared")
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def bench_cold_start(runs: int) -> dict[str, list[float]]:
    """Cold starts, interleaved so that machine load falls on every kind alike."""
    from drill.cards.deck_cache import CACHE_FILE
    from drill.cards.loader import load_decks
    from drill.study.session import build_queue, study_day

    decks = load_decks()
    out: dict[str, list[float]] = {"bare": [], "empty": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "home"
        data.mkdir()
        first = build_queue(decks.cards.values(), {}, study_day(dt.datetime.now()))[0]
        marker = decks.cards[first].prompt.split()[0].encode()
        bare = ["-c", BARE_APP]
        cold_start_once(data, marker)  # warm the OS file cache (and compile drill's modules) once, like a daily user
        cold_start_once(data, b"Bare-paragraph-painted", bare)
        for _ in range(runs):
            out["bare"].append(cold_start_once(data, b"Bare-paragraph-painted", bare))
            (data / CACHE_FILE).unlink(missing_ok=True)
            out["empty"].append(cold_start_once(data, marker))
            out["warm"].append(cold_start_once(data, marker))
    return out


def p95(values: list[float]) -> float:
    """The 95th percentile by nearest rank: the value at rank ceil(0.95 n)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


BENCH_TOPICS = ("gpu-arch", "serving", "moe", "gemm", "ddp", "zero-fsdp", "profiling", "numerics")


def bench_topic(i: int) -> str:
    return BENCH_TOPICS[i % len(BENCH_TOPICS)]


def fill_database(data_dir: Path, n_cards: int, n_reviews: int) -> None:
    from drill.store.store import Store

    Store(data_dir).close()
    conn = sqlite3.connect(data_dir / "drill.sqlite3")
    rng = random.Random(7)
    today = dt.date.today()
    conn.executemany(
        "INSERT INTO card_state(card_id, content_hash, repetitions, ef, interval, due, introduced_on, last_review_day)"
        " VALUES(?, '', 3, 2.5, 10, ?, ?, ?)",
        [
            (f"b{i:05d}", (today - dt.timedelta(rng.randint(0, 30))).isoformat(), "2026-01-01", "2026-01-01")
            for i in range(n_cards)
        ],
    )
    state = json.dumps({"repetitions": 3, "ef": 2.5, "interval": 10, "due": "2026-01-01"})

    def review() -> tuple[str, str, str, int, str, str, str]:
        day = (today - dt.timedelta(days=rng.randrange(365))).isoformat()  # a year of history
        i = rng.randrange(n_cards)
        return f"b{i:05d}", f"{day}T10:00:00", day, rng.randint(0, 5), state, state, bench_topic(i)

    conn.executemany(
        "INSERT INTO review_log(card_id, reviewed_at, day, grade, duration_ms, mode, state_before, state_after, topic)"
        " VALUES(?, ?, ?, ?, 4000, 'review', ?, ?, ?)",
        (review() for _ in range(n_reviews)),
    )
    conn.execute(
        "UPDATE card_state SET reviews = (SELECT COUNT(*) FROM review_log r WHERE r.card_id = card_state.card_id)"
    )
    conn.execute(
        "INSERT INTO review_day (day, reviews, scheduled, passed) SELECT day, COUNT(*), SUM(mode != 'cram'),"
        " SUM(grade >= 3 AND mode != 'cram') FROM review_log GROUP BY day"
    )
    conn.execute(
        "INSERT INTO review_topic_day (day, topic, scheduled, passed) SELECT day, topic, SUM(mode != 'cram'),"
        " SUM(grade >= 3 AND mode != 'cram') FROM review_log GROUP BY day, topic"
    )
    conn.commit()
    conn.close()


class DrillInTerminal:
    """A real `drill --decks DECK` in a pseudo-terminal, with what it has painted since the last clear()."""

    def __init__(self, data: Path, deck: Path, columns: int = 80, lines: int = 24) -> None:
        env = {
            **os.environ,
            "DRILL_HOME": str(data),
            "COLUMNS": str(columns),
            "LINES": str(lines),
            "TERM": "xterm-256color",
        }
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe(sys.executable, [sys.executable, "-m", "drill", "--decks", str(deck)], env)
        self.buf = bytearray()

    def wait_for(self, marker: bytes, limit: float = 30.0) -> None:
        start = time.perf_counter()
        while marker not in self.buf:
            if time.perf_counter() - start > limit:
                raise RuntimeError(f"{marker!r} never appeared")
            ready, _, _ = select.select([self.fd], [], [], 0.01)
            if ready:
                self.buf.extend(os.read(self.fd, 65536))

    def send(self, keys: bytes) -> None:
        self.buf.clear()
        os.write(self.fd, keys)

    def close(self) -> None:
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def bench_grade(n_cards: int, n_reviews: int, grades: int) -> list[float]:
    """Drive a real `drill` in a pseudo-terminal: reveal, then time the grade key until the next card shows."""
    from drill.cards.loader import load_decks
    from drill.store.reader import read_states
    from drill.study.session import build_queue, study_day

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        fill_database(data, n_cards, n_reviews)
        deck = data / "deck.yaml"
        write_bench_deck(deck, n_cards)
        cards = load_decks([deck]).cards
        queue = build_queue(cards.values(), read_states(data), study_day(dt.datetime.now()))
        drill = DrillInTerminal(data, deck)
        times = []
        try:
            drill.wait_for(f"Question-{int(queue[0][1:])}-asked".encode())
            time.sleep(1.5)  # let the store open in the background, as it does while a person reads
            for k in range(grades):
                drill.send(b"\r")  # enter: the answer field is empty, so this shows the answer
                drill.wait_for(f"Answer-{int(queue[k][1:])}-given".encode())
                time.sleep(0.05)
                start = time.perf_counter()
                drill.send(b"5")
                drill.wait_for(f"Question-{int(queue[k + 1][1:])}-asked".encode())
                times.append(time.perf_counter() - start)
        finally:
            drill.close()
        return times


def write_bench_deck(path: Path, n_cards: int) -> None:
    lines = ["cards:"]
    for i in range(n_cards):
        lines.append(
            f"  - {{id: b{i:05d}, kind: concept, topic: {bench_topic(i)}, prompt: 'Question-{i}-asked', "
            f"answer: 'Answer-{i}-given', sources: [s]}}"
        )
    path.write_text("\n".join(lines))


def bench_progress(n_cards: int, n_reviews: int, runs: int) -> dict[str, Any]:
    """`drill stats --json` as a process, the stats screen after ctrl+g, and a mock plan, on a big history."""
    import resource
    import subprocess

    out: dict[str, Any] = {"stats_s": [], "stats_rss_mb": [], "screen_s": [], "plan_s": [], "weakness_s": []}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        fill_database(data, n_cards, n_reviews)
        deck = data / "deck.yaml"
        write_bench_deck(deck, n_cards)
        env = {**os.environ, "DRILL_HOME": str(data)}
        command = [sys.executable, "-m", "drill", "--decks", str(deck), "stats", "--json"]
        # The first run builds the deck cache and replays the whole log through FSRS for the calibration
        # figures (drill.store.replay_cache), as a learner's first `drill stats` after a million reviews
        # would; it is timed apart. The runs after it are a learner's daily look: the replay is cached.
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        out["first_stats_s"] = time.perf_counter() - start
        # GNU time reports the command's own peak (a forked child's ru_maxrss would count this process too)
        timer = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run([*timer, *command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            out["stats_s"].append(time.perf_counter() - start)
            if timer:
                out["stats_rss_mb"].append(int(done.stderr.decode().split()[-1]) / 1024)
        # a mock plan, in process: read the weakness figures, then choose
        from drill.cards.deck_cache import load_decks_cached
        from drill.mock.plan import make_plan
        from drill.workspace import read_weakness

        cards = load_decks_cached([deck], data).cards
        for seed in range(runs):
            start = time.perf_counter()
            weakness = {t.topic: t.weakness for t in read_weakness(cards, data, dt.date.today())}
            middle = time.perf_counter()
            make_plan(cards, weakness, minutes=45, seed=seed)
            out["weakness_s"].append(middle - start)
            out["plan_s"].append(time.perf_counter() - middle)
        out["plan_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out["screen_s"] = bench_stats_screen(data, deck, runs)
    return out


def bench_stats_screen(data: Path, deck: Path, runs: int) -> list[float]:
    """ctrl+g on the review screen until the stats screen's table header is painted."""
    drill = DrillInTerminal(data, deck, columns=100, lines=30)
    times = []
    try:
        drill.wait_for(b"done 0")
        time.sleep(1.5)  # the store opens in the background while a person reads
        for _ in range(runs):
            start = time.perf_counter()
            drill.send(b"\x07")  # ctrl+g
            drill.wait_for(b"weakness")
            times.append(time.perf_counter() - start)
            time.sleep(0.3)
            drill.send(b"\x1b")  # escape: back to the review
            drill.wait_for(b"done 0")
            time.sleep(0.3)
    finally:
        drill.close()
    return times


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--grades", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument(
        "--only",
        type=parts,
        default=PARTS,
        metavar="PART[,PART...]",
        help=f"run only these parts ({', '.join(PARTS)}; default: all)",
    )
    args = parser.parse_args()
    if args.quick:
        args.runs, args.cards, args.reviews, args.grades = 3, 500, 5_000, 10
    ok = True
    if "start" in args.only:
        ok &= report_cold_start(args.runs)
    if "grade" in args.only:
        ok &= report_grade(args.cards, args.reviews, args.grades)
    if "progress" in args.only:
        ok &= report_progress(args.cards, args.reviews, args.runs)
    if "browse" in args.only:
        sys.path.insert(0, str(ROOT / "bench"))
        from browse import bench_search  # noqa: E402

        ok &= bench_search(args.cards)
    return 0 if ok else 1


PARTS = ("start", "grade", "progress", "browse")


def parts(text: str) -> tuple[str, ...]:
    """--only: a comma-separated list of PARTS."""
    chosen = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in chosen if p not in PARTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(PARTS)} (got {text!r})")
    return chosen


def report_cold_start(runs: int) -> bool:
    starts = bench_cold_start(runs)
    bare, empty, warm = (statistics.median(starts[k]) for k in ("bare", "empty", "warm"))
    ratio = warm / bare
    print(
        f"cold start to first card: warm cache {warm:.3f} s, empty cache {empty:.3f} s; "
        f"bare Textual app {bare:.3f} s; warm/bare {ratio:.2f}x (goal <= 1.3x) {verdict(ratio <= 1.3)} "
        f"[medians of {runs}, interleaved]"
    )
    return ratio <= 1.3


def report_grade(cards: int, reviews: int, grades: int) -> bool:
    times = bench_grade(cards, reviews, grades)
    p50 = statistics.median(times) * 1000
    top = p95(times) * 1000
    print(
        f"grade -> next card ({cards} cards, {reviews} log rows): p50 {p50:.1f} ms, "
        f"p95 {top:.1f} ms over {len(times)} grades (goal p95 <= 20 ms) {verdict(top <= 20)}"
    )
    return top <= 20


def report_progress(cards: int, reviews: int, runs: int) -> bool:
    figures = bench_progress(cards, reviews, runs)
    stats_s = statistics.median(figures["stats_s"])
    rss = max(figures["stats_rss_mb"] or [0.0])
    print(
        f"drill stats --json ({cards} cards, {reviews} log rows): median {stats_s * 1000:.0f} ms "
        f"(goal <= 200 ms) {verdict(stats_s <= 0.2)}, peak {rss:.0f} MB (goal <= 100 MB) {verdict(rss <= 100)}"
    )
    print(
        f"  first drill stats --json on that history (deck cache built, whole log replayed): "
        f"{figures['first_stats_s']:.1f} s, not counted above"
    )
    screen = statistics.median(figures["screen_s"])
    print(f"stats screen after ctrl+g: median {screen * 1000:.0f} ms (goal <= 200 ms) {verdict(screen <= 0.2)}")
    plan = statistics.median(figures["plan_s"])
    weak = statistics.median(figures["weakness_s"])
    print(
        f"mock plan: median {plan * 1000:.0f} ms (goal <= 100 ms) {verdict(plan <= 0.1)}, after reading the "
        f"weakness figures in {weak * 1000:.0f} ms; bench process peak {figures['plan_peak_mb']:.0f} MB"
    )
    return stats_s <= 0.2 and rss <= 100 and screen <= 0.2 and plan <= 0.1


if __name__ == "__main__":
    raise SystemExit(main())
