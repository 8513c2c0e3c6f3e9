"""Benchmark for the card search (the browser and `drill search`): varied queries over 10,000 synthetic cards.

    python bench/browse.py [--cards 10000]

Prints the p95 of one search (what each keystroke in the browser costs: the
search, and for a query that finds nothing the notes and the "did you mean")
against a goal of 50 ms, the same for queries as people say them (abbreviations,
compounds, misspellings), and the peak memory of the cards, the index and the
searches against 100 MB: what Python holds at its peak plus the pages of the
in-memory FTS5 table (SQLite's own memory, which Python's tracing does not see).
Exits 1 when any misses its goal.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drill.browse import CardIndex, matches, spelling_hints, unknown_filters
from drill.cards.model import Card
from drill.study.records import CardState
from drill.study.sm2 import SM2State

SEARCH_GOAL_MS = 50.0
MEMORY_GOAL_MB = 100.0
TODAY = dt.date(2026, 5, 10)
TOPICS = [f"topic-{n:02d}" for n in range(26)]
KINDS = ["concept", "diagnosis", "kernel", "memory_ledger", "shape_trace"]
TERMS = (
    "all reduce ring tree bandwidth latency nccl nvlink pcie kv cache paged attention tensor pipeline "
    "data parallel shard optimizer state gradient activation checkpoint recompute fp16 bf16 fp8 int4 "
    "quantization warp block grid shared memory coalesced bank conflict occupancy register spill roofline "
    "arithmetic intensity flops throughput prefill decode batch scheduler speculative draft verifier expert "
    "router capacity factor token sequence head layer hidden vocabulary softmax matmul gemm kernel launch "
    "flashattention allreduce tp fsdp moe"
).split()
FILLER = "the a of to in is for on with by as at from that this which when each per one two".split()
QUERIES = [
    "",
    "a",
    "al",
    "all",
    "all ",
    "all r",
    "all re",
    "all reduce",
    '"all reduce"',
    '"all reduce" bandwidth',
    "kv",
    "kv cache",
    '"kv cache" paged',
    "kv cache prefill decode",
    "the",
    "zzqx",
    "nvlink bandwidth ring",
    "topic:topic-07",
    "topic:topic-07 warp",
    "topic:topic-99",
    "kind:diagnosis",
    "kind:memory-ledger",
    "kind:kernel occupancy",
    "tag:tag-3",
    "tag:tag-3 tag:tag-5",
    "is:due",
    "is:new",
    "is:suspended",
    "is:leech",
    "is:buried",
    "is:due kv",
    "is:due topic:topic-01",
    "id:0042",
    "id:9",
    "id:1 is:review",
    "foo:bar",
    "http://example",
    '"shared memory bank conflict"',
    '"shared memory',
    "shared memory bank conflict",
    "quantization fp8 int4",
    "router expert capacity",
    "speculative draft verifier",
    "roofline arithmetic intensity",
    "gemm",
    "softmax matmul kernel",
    "topic:",
    'topic:"topic-03" scheduler',
    "grad",
    "gradient checkpoint recompute",
]
# As people say them: each finds its other forms (cards/data/search-words.yaml, words the cards join), or
# finds nothing and asks for a "did you mean".
SAID_QUERIES = [
    "flash attention",
    "flash-attention",
    "flashattention",
    '"flash attention"',
    "tp",
    "tensor parallel",
    "tensor parallel all reduce",
    "all-reduce",
    "allreduce",
    "mixture of experts",
    "moe router",
    "fsdp shard",
    "kv cache prefill",
    "atention",
    "atenton",
    "flash atention",
    "tensr paralel",
    "gradiant chekpoint",
    "qantization",
    "zzqx",
]


def synthetic_cards(n_cards: int, seed: int = 7) -> tuple[dict[str, Card], dict[str, CardState]]:
    """Cards with prompts and answers of about the bundled decks' length, and a mix of states."""
    rng = random.Random(seed)

    def sentence(words: int) -> str:
        return " ".join(rng.choice(TERMS) if rng.random() < 0.4 else rng.choice(FILLER) for _ in range(words))

    cards: dict[str, Card] = {}
    states: dict[str, CardState] = {}
    for i in range(n_cards):
        cid = f"{TOPICS[i % len(TOPICS)]}-card-{i:05d}"
        cards[cid] = Card(
            id=cid,
            kind=KINDS[i % len(KINDS)],
            topic=TOPICS[i % len(TOPICS)],
            prompt=sentence(45),
            answer="\n".join(sentence(25) for _ in range(4)),
            tags=tuple(f"tag-{rng.randrange(40)}" for _ in range(rng.randrange(4))),
            sources=("FACTS.md",),
            deck=f"Deck {i % 12}",
        )
        roll = rng.random()
        if roll < 0.3:
            continue  # never seen
        due = TODAY + dt.timedelta(days=rng.randint(-10, 40))
        states[cid] = CardState(
            cid,
            sm2=SM2State(rng.randint(0, 8), round(rng.uniform(1.3, 2.8), 2), rng.randint(1, 90)),
            due=due,
            lapses=rng.randint(0, 6),
            suspended=roll > 0.97,
            buried_until=TODAY + dt.timedelta(days=1) if 0.95 < roll <= 0.97 else None,
            leech=roll > 0.93,
            introduced_on=TODAY - dt.timedelta(days=60),
        )
    return cards, states


def keystroke(index: CardIndex, query: str) -> None:
    """What the browser does on a keystroke: the search, and when it finds nothing, what it says instead."""
    if not matches(index, query):
        unknown_filters(index, query)
        spelling_hints(index, query)


def time_searches(index: CardIndex, queries: list[str], runs: int = 3) -> tuple[list[float], float]:
    """Milliseconds for each query as the browser runs it on a keystroke (its best of `runs`), and the worst run.

    The best of a few runs is the search's own cost; on a shared machine a single
    run also carries whatever else the cores were doing at that moment.
    """
    keystroke(index, "warm up")
    best, worst = [], 0.0
    for query in queries:
        runs_ms = []
        for _ in range(runs):
            start = time.perf_counter()
            keystroke(index, query)
            runs_ms.append((time.perf_counter() - start) * 1000)
        best.append(min(runs_ms))
        worst = max(worst, *runs_ms)
    return best, worst


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)]


def bench_search(n_cards: int = 10_000) -> bool:
    """Print the search p95 and the peak memory against their goals; True when both pass."""
    cards, states = synthetic_cards(n_cards)
    start = time.perf_counter()
    index = CardIndex(cards, states, TODAY)
    build_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    keystroke(index, "atention")  # the first misspelling builds the vocabulary's lookup tables, once per decks
    first_miss_ms = (time.perf_counter() - start) * 1000
    search_ok = report("browser search", index, QUERIES, n_cards, f"index built in {build_ms:.0f} ms")
    said_ok = report(
        "search as people say it",
        index,
        SAID_QUERIES,
        n_cards,
        f"the first misspelling {first_miss_ms:.0f} ms (it builds the vocabulary's lookup tables)",
    )
    del index, cards, states
    tracemalloc.start()  # a second pass: tracing slows Python down, so it is kept out of the timings
    # other cards (another seed): the browser keeps the last decks' FTS5 table, and this pass must fill one
    cards, states = synthetic_cards(n_cards, seed=8)
    index = CardIndex(cards, states, TODAY)
    for query in QUERIES + SAID_QUERIES:
        keystroke(index, query)
    python_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    table_mb = index.table.size_bytes() / 2**20
    peak_mb = python_mb + table_mb
    memory_ok = peak_mb <= MEMORY_GOAL_MB
    print(
        f"browser memory: peak {peak_mb:.1f} MB for the cards, the index and the searches"
        f" ({python_mb:.1f} MB in Python, {table_mb:.1f} MB of FTS5 table)"
        f" (goal <= {MEMORY_GOAL_MB:.0f} MB) {'PASS' if memory_ok else 'FAIL'}"
    )
    return search_ok and said_ok and memory_ok


def report(name: str, index: CardIndex, queries: list[str], n_cards: int, note: str) -> bool:
    """Time the queries, print their p95 against the goal with PASS or FAIL; True when it passes."""
    times, worst_run = time_searches(index, queries)
    slowest = max(range(len(times)), key=times.__getitem__)
    ok = p95(times) <= SEARCH_GOAL_MS
    print(
        f"{name}: p95 {p95(times):.1f} ms (goal <= {SEARCH_GOAL_MS:.0f} ms) {'PASS' if ok else 'FAIL'}"
        f" · median {sorted(times)[len(times) // 2]:.1f} ms, slowest {times[slowest]:.1f} ms ({queries[slowest]!r});"
        f" {len(times)} queries over {n_cards} cards, each its best of 3 runs (worst single run {worst_run:.1f} ms);"
        f" {note}"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cards", type=int, default=10_000)
    args = parser.parse_args()
    sys.exit(0 if bench_search(args.cards) else 1)


if __name__ == "__main__":
    main()
