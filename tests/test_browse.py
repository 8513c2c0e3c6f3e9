"""Searching cards with words, phrases and filters; state labels; one card's review history."""

import datetime as dt
import subprocess
import sys

import pytest

from drill.browse import CardIndex, card_history, matches, parse_query, search, state_labels
from drill.cards.model import Card
from drill.sm2 import SM2State
from drill.store.records import CardState
from drill.store.store import Store

TODAY = dt.date(2026, 5, 10)
TOMORROW = TODAY + dt.timedelta(days=1)
SEEN = TODAY - dt.timedelta(days=30)


def card(cid, kind, topic, prompt, answer, tags=(), deck="Test deck"):
    return Card(id=cid, kind=kind, topic=topic, prompt=prompt, answer=answer, tags=tags, deck=deck)


CARDS = {
    c.id: c
    for c in [
        card(
            "ring-allreduce",
            "concept",
            "collectives",
            "How does an all-reduce\nwork on a ring?",
            "Reduce-scatter, then all-gather: all reduce traffic is 2(n-1)/n of the data.",
            tags=("nccl", "bandwidth"),
            deck="Collectives",
        ),
        card("kv-paging", "concept", "serving", "Why page the KV cache?", "Fragmentation: all of it, reduce waste."),
        card(
            "dram-bound",
            "diagnosis",
            "profiling",
            "What bounds this kernel?",
            "DRAM near peak; ratio:2 of SM.",
            tags=("nccl-tests",),
        ),
        card(
            "attn-shapes",
            "shape_trace",
            "transformer-shapes",
            "Trace attention.",
            "Scores are S by S.",
            tags=("attention",),
        ),
        card("kv-ledger", "memory_ledger", "serving", "KV cache of OPT-13B?", "800 KB a token.", tags=("kv-cache",)),
        card("warp-size", "concept", "gpu-arch", "How wide is a warp?", "32 threads.", tags=("nccl",)),
    ]
}


def seen(cid, *, reps=3, due=TODAY, **flags):
    return CardState(cid, sm2=SM2State(reps, 2.5, 10, due), introduced_on=SEEN, **flags)


STATES = {
    "ring-allreduce": seen("ring-allreduce"),  # due today
    # kv-paging has no state: new
    "dram-bound": seen("dram-bound", due=TODAY - dt.timedelta(days=1), suspended=True),
    "attn-shapes": seen("attn-shapes", buried_until=TOMORROW),
    "kv-ledger": seen("kv-ledger", due=TODAY + dt.timedelta(days=7), leech=True, lapses=9),
    "warp-size": seen("warp-size", reps=1, due=TOMORROW),
}


@pytest.fixture
def index():
    return CardIndex(CARDS, STATES, TODAY)


@pytest.mark.parametrize(
    "state, labels",
    [
        (None, ("new",)),
        (CardState("x"), ("new",)),
        (CardState("x", suspended=True), ("new", "suspended")),
        (seen("x"), ("due",)),
        (seen("x", due=TODAY - dt.timedelta(days=3)), ("due",)),
        (seen("x", due=TOMORROW), ("review",)),
        (seen("x", reps=1, due=TOMORROW), ("learning",)),
        (seen("x", reps=0, due=TOMORROW), ("learning",)),
        (seen("x", suspended=True), ("review", "suspended")),
        (seen("x", buried_until=TOMORROW), ("review", "buried")),
        (seen("x", buried_until=TODAY), ("due",)),  # buried until today is over
        (seen("x", leech=True), ("due", "leech")),
    ],
    ids=[
        "no state",
        "never introduced",
        "new and suspended",
        "due today",
        "overdue",
        "scheduled later",
        "first steps",
        "after a lapse",
        "suspended while due",
        "buried until tomorrow",
        "burial ended",
        "leech",
    ],
)
def test_state_labels(state, labels):
    assert state_labels(state, TODAY) == labels


@pytest.mark.parametrize(
    "query, found",
    [
        ("topic:serving", ["kv-ledger", "kv-paging"]),
        ("TOPIC:Serving", ["kv-ledger", "kv-paging"]),
        ("topic:serv", ["kv-ledger", "kv-paging"]),  # still typing: every topic it begins
        ("topic:transformer", ["attn-shapes"]),
        ("tag:nccl", ["ring-allreduce", "warp-size"]),  # a whole name leaves out the longer ones
        ("tag:ncc", ["ring-allreduce", "dram-bound", "warp-size"]),
        ("is:sus", ["dram-bound"]),
        ("topic:ing", []),  # the start of a name, not any part
        ("kind:diagnosis", ["dram-bound"]),
        ("kind:memory-ledger", ["kv-ledger"]),
        ("kind:memory_ledger", ["kv-ledger"]),
        ("kind:ledger", ["kv-ledger"]),  # the name the list shows
        ("kind:shapes", ["attn-shapes"]),
        ("tag:kv-cache", ["kv-ledger"]),
        ("is:new", ["kv-paging"]),
        ("is:due", ["ring-allreduce"]),
        ("is:suspended", ["dram-bound"]),
        ("is:leech", ["kv-ledger"]),
        ("is:buried", ["attn-shapes"]),
        ("is:learning", ["warp-size"]),
        ("is:review", ["attn-shapes", "dram-bound", "kv-ledger"]),
        ("is:nonsense", []),
        ("id:kv", ["kv-ledger", "kv-paging"]),
        ("id:LEDGER", ["kv-ledger"]),
        ("id:ring id:all", ["ring-allreduce"]),
    ],
)
def test_each_filter(index, query, found):
    assert search(index, query) == found


@pytest.mark.parametrize(
    "query, found",
    [
        ("dram", ["dram-bound"]),
        ("DRAM", ["dram-bound"]),
        ("warp", ["warp-size"]),
        ("bandwidth", ["ring-allreduce"]),  # a tag is text too
        ("collectives", ["ring-allreduce"]),  # and the topic and the deck
        ("kv cache", ["kv-ledger", "kv-paging"]),
        ("kv cache topic:serving", ["kv-ledger", "kv-paging"]),
        ("kv cache topic:profiling", []),
        ("kv tag:kv-cache", ["kv-ledger"]),
        ("is:due tag:nccl", ["ring-allreduce"]),
        ("tag:nccl tag:bandwidth", ["ring-allreduce"]),
        ("warp zzz", []),
        ("ratio:2", ["dram-bound"]),  # not a filter: plain text
        ('note:"ratio"', []),
        (
            "topic:",
            ["ring-allreduce", "attn-shapes", "dram-bound", "kv-ledger", "kv-paging", "warp-size"],
        ),  # still typing
    ],
)
def test_words_are_anded_with_each_other_and_with_filters(index, query, found):
    assert search(index, query) == found


@pytest.mark.parametrize(
    "query, found",
    [
        ("all reduce", ["ring-allreduce", "kv-paging"]),  # both words, anywhere
        ('"all reduce"', ["ring-allreduce"]),  # as a phrase
        ('"ALL   Reduce"', ["ring-allreduce"]),
        ('"all-reduce work"', ["ring-allreduce"]),  # across a line break of the prompt
        ('"ring? reduce-scatter"', []),  # never from the prompt into the answer
        ('"all reduce', ["ring-allreduce"]),  # a phrase still being typed
        ('"all reduce" topic:collectives', ["ring-allreduce"]),
        ('"all reduce" topic:serving', []),
        ('topic:"serving" fragmentation', ["kv-paging"]),
        ('""', ["ring-allreduce", "attn-shapes", "dram-bound", "kv-ledger", "kv-paging", "warp-size"]),
    ],
)
def test_phrases(index, query, found):
    assert search(index, query) == found


def test_an_empty_query_lists_every_card_due_first_then_by_id(index):
    assert search(index, "") == ["ring-allreduce", "attn-shapes", "dram-bound", "kv-ledger", "kv-paging", "warp-size"]
    assert search(index, "   ") == search(index, "")


def test_limit(index):
    assert search(index, "", limit=2) == ["ring-allreduce", "attn-shapes"]
    assert search(index, "kv", limit=1) == ["kv-ledger"]
    assert len(matches(index, "")) == len(index) == 6


def test_parse_query():
    filters, texts = parse_query('Topic:serving "KV  cache" id: foo:bar is:due x')
    assert filters == [("topic", "serving"), ("is", "due")]
    assert texts == ["kv cache", "foo:bar", "x"]


def test_an_unsuspended_card_moves_to_the_due_cards(index):
    state = seen("dram-bound", due=TODAY - dt.timedelta(days=1), suspended=False)
    index.update_state(state)
    assert search(index, "is:suspended") == []
    assert search(index, "is:due") == ["dram-bound", "ring-allreduce"]
    assert search(index, "")[:2] == ["dram-bound", "ring-allreduce"]
    assert index.labels["dram-bound"] == ("due",)


def test_a_separator_inside_a_card_keeps_its_fields_apart():
    odd = {"odd": card("odd", "concept", "t", "one\0two", "three\1four")}
    index = CardIndex(odd, {}, TODAY)
    assert search(index, "two") == ["odd"] and search(index, "four") == ["odd"]
    assert search(index, '"two three"') == []


def test_card_history_reads_the_log_oldest_first(tmp_path):
    store = Store(tmp_path)
    for day, grade, mode, card_id in (
        (TODAY - dt.timedelta(days=6), 2, "review", "c"),
        (TODAY - dt.timedelta(days=1), 4, "cram", "c"),
        (TODAY, 5, "review", "other"),
    ):
        at = dt.datetime.combine(day, dt.time(9, 30))
        store.record_review(
            CardState(card_id), CardState(card_id), grade=grade, at=at, day=day, duration_ms=1500, mode=mode
        )
    store.close()
    assert card_history(tmp_path, "c") == [
        {"reviewed_at": "2026-05-04T09:30:00", "day": "2026-05-04", "grade": 2, "mode": "review", "duration_ms": 1500},
        {"reviewed_at": "2026-05-09T09:30:00", "day": "2026-05-09", "grade": 4, "mode": "cram", "duration_ms": 1500},
    ]
    assert card_history(tmp_path, "never-seen") == []


def test_card_history_without_a_database(tmp_path):
    assert card_history(tmp_path / "nothing-here", "c") == []
    assert not (tmp_path / "nothing-here").exists()


def test_the_search_is_domain_code_without_textual():
    code = "import sys, drill.browse; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("kind:bogus", ["no kind 'bogus' (kind: takes concept, diagnosis, ledger, shapes)"]),
        ("kind:diag", []),  # the start of a kind
        ("topic:nowhere warp", ["no topic 'nowhere'"]),
        ("is:nonsense", ["no is 'nonsense'"]),
        ("tag:anything kind:diagnosis", []),  # tags are free; a known kind says nothing
        ("topc:gemm", ["no filter topc:, did you mean topic:? (filters: id:, is:, kind:, tag:, topic:)"]),
        ("Kinds:diag warp", ["no filter kinds:, did you mean kind:?"]),
        ("https://example.org zzz:1", []),  # a colon in a word not close to any filter's name: plain text
    ],
)
def test_a_filter_no_value_starts_with_is_named_with_the_values_it_takes(index, query, words):
    from drill.browse import unknown_filters

    found = unknown_filters(index, query)
    assert len(found) == len(words)
    for got, want in zip(found, words):
        assert got.startswith(want)
