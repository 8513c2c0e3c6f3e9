"""Searching cards with words, phrases and filters; state labels; one card's review history."""

import datetime as dt
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.browse import CardIndex, matches, parse_query, search, state_labels, unknown_filters
from drill.cards.model import Card
from drill.store.reader import card_history
from drill.store.search import AnyOf, Term, match_expression
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State

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
    return CardState(cid, sm2=SM2State(reps, 2.5, 10), due=due, introduced_on=SEEN, **flags)


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
        (seen("x", reps=0, due=TOMORROW, repeat_pending=True, last_review_day=TODAY), ("due",)),
        (seen("x", reps=0, due=TOMORROW, repeat_pending=True, last_review_day=SEEN), ("learning",)),
        (seen("x", due=TOMORROW, repeat_pending=True, last_review_day=TODAY, suspended=True), ("review", "suspended")),
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
        "graded below 4 today: back today",
        "graded below 4 on an earlier day: due by its date",
        "graded below 4 today, then suspended",
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
    filters, terms = parse_query('Topic:serving "KV  cache" id: foo:bar is:due x "still typ')
    assert filters == [("topic", "serving"), ("is", "due")]
    # a word or an unclosed phrase may end in the start of a word; a closed phrase is found as typed
    assert terms == [Term("kv cache", prefix=False), Term("foo:bar"), Term("x"), Term("still typ", prefix=True)]


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
        ("tag:anything kind:diagnosis", ["no tag 'anything'"]),  # too many tags to list; a known kind says nothing
        ("tag:kvcache", ["no tag 'kvcache', did you mean tag:kv-cache?"]),
        ("tag:nc", []),  # the start of a tag
        (
            "is:reviewed",
            [
                "no is 'reviewed', did you mean is:review? "
                "(is: takes buried, due, learning, leech, new, review, suspended, today)"
            ],
        ),
        ("is:today is:leech", []),  # every label is known, whether or not a card has it now
        ("topic:colectives", ["no topic 'colectives', did you mean topic:collectives?"]),
        ("kind:ledgr", ["no kind 'ledgr', did you mean kind:ledger?"]),
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


# -- relevance, FTS5 and is:today ------------------------------------------------------------


def test_words_rank_the_cards_they_describe_first():
    cards = {
        c.id: c
        for c in [
            card("cold-start", "concept", "capacity", "Why is a cold start slow?", "Weights load; the KV cache fills."),
            card(
                "paged-kv-cache", "concept", "serving", "Why page the KV cache?", "Fragmentation.", tags=("kv-cache",)
            ),
            card("attn-exact", "concept", "kernels", "Why is FlashAttention exact?", "Online softmax."),
        ]
    }
    index = CardIndex(cards, {}, TODAY)
    assert search(index, "kv cache") == ["paged-kv-cache", "cold-start"]  # named in id and tag, not only in passing
    assert search(index, "KV-Cache") == ["paged-kv-cache", "cold-start"]  # dashes and case as in prose
    assert search(index, "flash") == ["attn-exact"]  # the start of a word
    assert search(index, '"flash"') == []  # a closed phrase: the word as typed
    assert search(index, "cache kv") == search(index, "kv cache")


def test_kv_cache_ranks_a_kv_cache_card_first_over_the_bundled_decks():
    from drill.cards.loader import load_decks

    cards = load_decks(None).cards
    found = search(CardIndex(cards, {}, TODAY), "kv cache")
    first = cards[found[0]]
    assert "kv-cache" in first.id or "kv-cache" in first.tags, found[:5]
    assert found.index("capacity-cost-cold-start") > 0  # it mentions the KV cache in passing; it came first by name
    assert search(CardIndex(cards, {}, TODAY), "flash")[0].startswith("flashattention-")


def test_filters_alone_list_due_cards_first_and_words_rank_within_the_filters(index):
    assert search(index, "topic:serving") == ["kv-ledger", "kv-paging"]
    assert search(index, "cache topic:serving id:paging") == ["kv-paging"]
    assert search(index, "all is:due") == ["ring-allreduce"]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        '"""',
        '"kv" "',
        "*",
        "kv*",
        "* kv",
        "^kv",
        "-kv",
        "kv -cache",
        "-",
        ":",
        "::",
        "id:",
        "prompt:kv",
        "{id prompt}: kv",
        "NEAR(kv cache)",
        "NEAR(kv cache, 2)",
        "kv NEAR cache",
        "kv AND",
        "OR",
        "NOT kv",
        "kv OR cache",
        "(kv",
        "kv)",
        "+",
        "'",
        "kv\0cache",
        "\ud800kv",
        "\u0301",
        'topic:"serv',
        'note:"',
    ],
)
def test_fts5_syntax_typed_as_a_search_never_raises(index, query):
    assert isinstance(search(index, query), list)
    assert isinstance(unknown_filters(index, query), list)


def test_fts5_operators_are_words_to_find():
    odd = {"near-or-not": card("near-or-not", "concept", "t", "NEAR, OR, NOT and AND", "x")}
    index = CardIndex(odd, {}, TODAY)
    assert search(index, "NEAR") == search(index, "not or") == ["near-or-not"]
    assert search(index, '"or not"') == ["near-or-not"]


def test_a_word_with_no_letter_or_digit_narrows_nothing(index):
    assert search(index, "* - :") == search(index, "")
    assert search(index, "warp *") == ["warp-size"]


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_any_text_is_a_search(text):
    search(CardIndex(CARDS, STATES, TODAY), text)


def test_match_expression_quotes_every_word():
    assert match_expression([Term('say "hi"'), Term("NEAR", prefix=False), Term("*")]) == '"say ""hi"""* AND "NEAR"'


def test_match_expression_joins_the_ways_of_saying_one_thing_by_or():
    flash = AnyOf(((Term("flash"), Term("attention")), (Term("flashattention"),)))
    assert match_expression([flash, Term("exact", prefix=False)]) == (
        '(("flash"* AND "attention"*) OR "flashattention"*) AND "exact"'
    )
    assert match_expression([AnyOf(((Term("tp", prefix=False),),))]) == '"tp"'
    assert match_expression([AnyOf(((Term("*"),), (Term("tp"),)))]) == ""  # an option asking nothing narrows nothing


def test_the_table_is_filled_again_when_the_cards_text_changes():
    first = CardIndex(CARDS, {}, TODAY)
    assert CardIndex(dict(CARDS), {}, TODAY).table is first.table  # the same decks: the table is reused
    edited = dict(CARDS, **{"warp-size": card("warp-size", "concept", "gpu-arch", "How wide is a wavefront?", "64.")})
    index = CardIndex(edited, {}, TODAY)
    assert index.table is not first.table
    assert search(index, "wavefront") == ["warp-size"] and search(index, "warp") == ["warp-size"]  # the id still
    assert search(index, '"how wide is a warp"') == []


def test_is_today_finds_the_cards_graded_this_study_day(tmp_path):
    index = CardIndex(CARDS, STATES, TODAY, studied={"kv-paging", "dram-bound", "not-a-card"})
    assert search(index, "is:today") == ["dram-bound", "kv-paging"]
    assert index.labels["kv-paging"] == ("new", "today")
    index.mark_studied(["warp-size"])  # practised from the browser just now
    assert search(index, "is:today warp") == ["warp-size"]
    index.update_state(seen("warp-size", due=TODAY + dt.timedelta(days=6)))
    assert index.labels["warp-size"] == ("review", "today")


def test_studied_on_reads_every_mode_of_one_study_day_from_the_log(tmp_path):
    from drill.store.reader import studied_on

    assert studied_on(tmp_path / "nothing-here", TODAY) == set()
    store = Store(tmp_path)
    for day, mode, card_id in (
        (TODAY, "review", "a"),
        (TODAY, "cram", "b"),
        (TODAY, "repeat", "a"),
        (TODAY - dt.timedelta(days=1), "review", "c"),
    ):
        at = dt.datetime.combine(day, dt.time(23, 30))
        store.record_review(CardState(card_id), CardState(card_id), grade=4, at=at, day=day, mode=mode, duration_ms=0)
    store.close()
    assert studied_on(tmp_path, TODAY) == {"a", "b"}
