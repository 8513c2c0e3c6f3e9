"""Benchmarks for the review loop: cold start to the first painted card, and grade -> next card.

    python bench/core_loop.py [--runs 7] [--cards 10000] [--reviews 1000000]

Prints the median cold start (a fresh `drill` process in a pseudo-terminal, timed
until the first card's text appears on screen) and the p50/p95 of grade -> next
card on a database of the given size.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def cold_start_once(data_dir: Path, marker: bytes) -> float:
    env = {**os.environ, "DRILL_HOME": str(data_dir), "COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(sys.executable, [sys.executable, "-m", "drill"], env)
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


def bench_cold_start(runs: int) -> list[float]:
    from drill.cards.loader import load_decks
    from drill.session import build_queue, study_day

    decks = load_decks()
    with tempfile.TemporaryDirectory() as tmp:
        first = build_queue(decks.cards.values(), {}, study_day(dt.datetime.now()))[0]
        marker = decks.cards[first].prompt.split()[0].encode()
        cold_start_once(Path(tmp), marker)  # warm the OS file cache once, like a daily user
        return [cold_start_once(Path(tmp), marker) for _ in range(runs)]


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
    conn.execute("UPDATE card_state SET reviews = (SELECT COUNT(*) FROM review_log r WHERE r.card_id = card_state.card_id)")
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


def bench_grade(n_cards: int, n_reviews: int, grades: int) -> list[float]:
    """Drive a real `drill` in a pseudo-terminal: reveal, then time the grade key until the next card shows."""
    from drill.cards.loader import load_decks
    from drill.session import build_queue, study_day
    from drill.store.fast import read_states

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        fill_database(data, n_cards, n_reviews)
        deck = data / "deck.yaml"
        lines = ["cards:"]
        for i in range(n_cards):
            lines.append(
                f"  - {{id: b{i:05d}, kind: concept, topic: gpu-arch, prompt: 'Question-{i}-asked', "
                f"answer: 'Answer-{i}-given', sources: [s]}}"
            )
        deck.write_text("\n".join(lines))
        cards = load_decks([deck]).cards
        queue = build_queue(cards.values(), read_states(data), study_day(dt.datetime.now()))
        env = {**os.environ, "DRILL_HOME": str(data), "COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}
        pid, fd = pty.fork()
        if pid == 0:
            os.execvpe(sys.executable, [sys.executable, "-m", "drill", "--decks", str(deck)], env)
        buf = bytearray()

        def wait_for(marker: bytes, limit: float = 20.0) -> None:
            start = time.perf_counter()
            while marker not in buf:
                if time.perf_counter() - start > limit:
                    raise RuntimeError(f"{marker!r} never appeared")
                ready, _, _ = select.select([fd], [], [], 0.01)
                if ready:
                    buf.extend(os.read(fd, 65536))

        times = []
        try:
            wait_for(f"Question-{queue[0][1:].lstrip('0') or '0'}-asked".encode())
            time.sleep(1.5)  # let the store open in the background, as it does while a person reads
            for k in range(grades):
                buf.clear()
                os.write(fd, b" ")
                wait_for(f"Answer-{int(queue[k][1:])}-given".encode())
                time.sleep(0.05)
                buf.clear()
                start = time.perf_counter()
                os.write(fd, b"5")
                wait_for(f"Question-{int(queue[k + 1][1:])}-asked".encode())
                times.append(time.perf_counter() - start)
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--grades", type=int, default=60)
    args = parser.parse_args()
    starts = bench_cold_start(args.runs)
    print(
        f"cold start to first card: median {statistics.median(starts):.3f} s "
        f"(min {min(starts):.3f}, max {max(starts):.3f}, {len(starts)} runs; goal <= 0.6 s)"
    )
    times = bench_grade(args.cards, args.reviews, args.grades)
    times.sort()
    p50 = times[len(times) // 2] * 1000
    p95 = times[int(len(times) * 0.95) - 1] * 1000
    print(
        f"grade -> next card ({args.cards} cards, {args.reviews} log rows): p50 {p50:.1f} ms, "
        f"p95 {p95:.1f} ms over {len(times)} grades (goal p95 <= 20 ms)"
    )


if __name__ == "__main__":
    main()
