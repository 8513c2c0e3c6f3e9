"""Searching as people say it: abbreviations and compounds both ways, prefixes, "did you mean", and `drill search`."""

import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill import cli, paths
from drill.browse import CardIndex, matches, matching_line, preview_prompt, rendered_line, search, suggestion
from drill.cards.loader import deck_files
from drill.cards.model import Card
from drill.cards.search_words import (
    SearchWordsError,
    bundled_search_words,
    parse_search_words,
    search_words_path,
    words_of,
)
from drill.start import AppOptions
from drill.store.search import Vocabulary, edit_distance
from drill.ui.app import make_app
from tests.conftest import FixedClock, bundled_cards
from tests.ui.test_browser import NOW, detail, open_browser, shown_ids
from tests.ui.test_browser import search as type_search
from tests.ui.test_checked import DECK

TODAY = dt.date(2026, 5, 10)
TP_TAG = "tensor-parallel"


def card(cid, prompt, answer="", topic="t", tags=()):
    return Card(id=cid, kind="concept", topic=topic, prompt=prompt, answer=answer, tags=tags, deck="Test deck")


def index_of(*cards):
    return CardIndex({c.id: c for c in cards}, {}, TODAY)


@pytest.fixture(scope="module")
def bundled():
    return CardIndex(bundled_cards(), {}, TODAY)


# -- the bundled decks ------------------------------------------------------------------------


def test_flash_attention_finds_every_card_of_the_flashattention_topic(bundled):
    cards = bundled_cards()
    topic = {cid for cid, c in cards.items() if c.topic == "flashattention"}
    # the cards that write FlashAttention as one word and never the word attention on its own
    one_word = {
        cid
        for cid in topic
        if "attention" not in words_of(" ".join([cid, cards[cid].prompt, cards[cid].answer, *cards[cid].tags]))
    }
    assert len(topic) >= 30 and one_word  # else this test would prove nothing about compounds
    found = search(bundled, "flash attention", limit=10_000)
    assert topic <= set(found), sorted(topic - set(found))
    assert set(search(bundled, "Flash-Attention", limit=10_000)) >= topic
    assert set(search(bundled, '"flash attention"', limit=10_000)) >= one_word  # a phrase finds the compound too


@pytest.mark.parametrize("query", ["tp", "TP", "tensor parallel", "tensor-parallel", '"tensor parallel"'])
def test_tp_and_tensor_parallel_rank_the_tensor_parallel_cards_first(bundled, query):
    cards = bundled_cards()
    tagged = {cid for cid, c in cards.items() if TP_TAG in c.tags}
    assert len(tagged) >= 10
    first = search(bundled, query, limit=10)
    assert [cid for cid in first if cid not in tagged] == []
    # the cards that say TP in their id are among them
    assert any("-tp-" in cid or cid.endswith("-tp") for cid in first)


def test_a_typed_prefix_still_finds_the_longer_words(bundled):
    assert search(bundled, "flashatt")[0].startswith("flashattention-")
    assert set(search(bundled, "tensor paral", limit=10)) & {c for c, v in bundled_cards().items() if TP_TAG in v.tags}


def test_atention_suggests_attention(bundled):
    assert search(bundled, "atention") == []
    assert suggestion(bundled, "atention") == "attention"
    assert suggestion(bundled, "flash atention") == "flash attention"
    assert suggestion(bundled, "attention") is None  # it finds plenty
    assert suggestion(bundled, "zzqxv") is None  # nothing near


# -- forms both ways, over small decks ----------------------------------------------------------


@pytest.mark.parametrize("query", ["allreduce", "all reduce", "all-reduce", "All_Reduce", "ALLREDUCE"])
def test_all_reduce_is_found_however_it_is_written(query):
    index = index_of(
        card("joined", "Why is an AllReduce bandwidth-bound?"),
        card("hyphen", "Count the all-reduce traffic."),
        card("apart", "An all reduce on a ring."),
        card("other", "Reduce the batch; all of it."),
    )
    assert set(search(index, query)) >= {"joined", "hyphen", "apart"}
    assert search(index, query)[-1] == "other" or "other" not in search(index, query)


def _entry_pairs():
    for term in bundled_search_words().terms:
        for written in term.forms:
            for typed in term.forms:
                if words_of(written) != words_of(typed):
                    yield pytest.param(written, typed, id=f"{typed} finds {written}")


@pytest.mark.parametrize(("written", "typed"), list(_entry_pairs()))
def test_each_form_of_an_entry_finds_a_card_that_writes_another(written, typed):
    index = index_of(card("says-it", f"Here the card says {written} once."), card("unrelated", "Nothing of it."))
    assert search(index, typed) == ["says-it"]


def test_a_short_abbreviation_is_a_whole_word_but_its_words_are_prefixes():
    index = index_of(
        card("tpot", "What is TPOT?"),
        card("tp", "Why keep TP inside a node?"),
        card("tensor-parallelism", "Tensor parallelism splits each matrix."),
    )
    assert sorted(search(index, "tp")) == ["tensor-parallelism", "tp"]
    assert search(index, "tpo") == ["tpot"]  # a word that is no abbreviation is still a prefix


def test_two_typed_words_find_the_word_they_make():
    index = index_of(card("kvcache", "The kvcache grows per token."), card("none", "A cache of keys."))
    assert search(index, "kv cache") == ["kvcache"]
    assert search(index, '"kv cache"') == ["kvcache"]


def test_a_card_that_says_it_several_ways_ranks_first():
    index = index_of(
        card("once", "Parallel work on a tensor."),
        card("all-ways", "TP, tensor parallelism: how TP splits a layer.", tags=(TP_TAG,)),
    )
    assert search(index, "tensor parallel") == ["all-ways", "once"]


# -- did you mean -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("attention", "attention", 0),
        ("atention", "attention", 1),  # a letter left out
        ("cahce", "cache", 1),  # two neighbours swapped
        ("kernal", "kernel", 1),
        ("tensr", "tensor", 1),
        ("paralel", "parallel", 1),
        ("abc", "xyz", 3),
        ("abcdef", "a", 3),  # above the bound: bound + 1
    ],
)
def test_edit_distance(a, b, distance):
    assert edit_distance(a, b, bound=2) == min(distance, 3)


@pytest.mark.parametrize(
    ("typed", "prefix", "nearest"),
    [
        ("atention", False, "attention"),
        ("cahce", False, "cache"),
        ("tset", False, "test"),  # as long as it, before a shorter word as near (set)
        ("atenti", True, "attention"),  # still typing: the start of a word
        ("zzzz", False, None),
        ("at", False, None),  # too short to correct
        ("cach3", False, None),  # a digit: an id or a size
    ],
)
def test_the_nearest_word_of_the_vocabulary(typed, prefix, nearest):
    vocabulary = Vocabulary({"attention": 40, "attend": 2, "cache": 30, "catch": 1, "test": 5, "set": 9, "x1": 1})
    assert vocabulary.nearest(typed, prefix=prefix) == nearest


def test_the_vocabulary_is_the_index_own_words():
    index = index_of(card("a", "Online softmax rescales."), card("b", "Softmax again."))
    vocabulary = index.table.vocabulary()
    assert vocabulary.cards_holding["softmax"] == 2 and "rescales" in vocabulary
    assert vocabulary.has_prefix("resc") and not vocabulary.has_prefix("zz")
    assert suggestion(index, "sofmtax") == "softmax"


@given(st.text(max_size=30))
@settings(max_examples=200, deadline=None)
def test_any_text_gets_a_suggestion_or_none_and_a_matching_line(text):
    index = index_of(card("c", "FlashAttention and TP.\nAll-reduce on a ring.", "Mixture of experts."))
    corrected = suggestion(index, text)
    assert corrected is None or isinstance(corrected, str)
    assert isinstance(matching_line(index, "c", text), str)


# -- the matching line ---------------------------------------------------------------------------


def test_the_matching_line_is_the_first_line_holding_a_matched_word():
    index = index_of(
        card("c", "What bounds it?\nLook at the timeline.", "First line.\nThe FlashAttention kernel\nends here."),
    )
    assert matching_line(index, "c", "flash attention") == "The FlashAttention kernel"
    assert matching_line(index, "c", "timeline") == "Look at the timeline."
    assert matching_line(index, "c", "id:c") == "What bounds it?"  # no words: the prompt's first line


# -- drill search -------------------------------------------------------------------------------


def drill(capsys, tmp_path, *args):
    code = cli.main(["search", "--data-dir", str(tmp_path / "data"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_command_prints_id_topic_kind_and_line_in_the_browser_order(capsys, tmp_path, bundled):
    code, out, err = drill(capsys, tmp_path, "flash", "attention", "--limit", "5")
    assert code == 0
    rows = out.splitlines()
    cards = bundled_cards()
    expected = matches(bundled, "flash attention")[:5]
    assert [row.split()[0] for row in rows] == expected
    for row, cid in zip(rows, expected):
        assert row.split()[1:3] == [cards[cid].topic, cards[cid].kind]
        assert row.rstrip().endswith(rendered_line(cards[cid], matching_line(bundled, cid, "flash attention")))
    assert f"5 of {len(matches(bundled, 'flash attention'))} cards shown" in err


def test_the_command_shows_a_parameterised_card_line_rendered_not_its_template(capsys, tmp_path, bundled):
    code, out, _ = drill(capsys, tmp_path, "tp", "--limit", "100")
    assert code == 0
    rows = {row.split()[0]: row for row in out.splitlines()}
    cards = bundled_cards()
    templated = [cid for cid in rows if "{{" in matching_line(bundled, cid, "tp")]
    assert {cards[cid].kind for cid in templated} >= {"memory_ledger", "scenario"}
    for cid in templated:
        assert "{{" not in rows[cid] and "}}" not in rows[cid], rows[cid]
    assert rows["topology-tp-traffic"].rstrip().endswith(_drawn_degree_line())


def _drawn_degree_line():
    """The line of the TP-traffic ledger's preview that gives the drawn degree and model."""
    preview = preview_prompt(bundled_cards()["topology-tp-traffic"])
    lines = [" ".join(line.split()) for line in preview.splitlines()]
    drawn = next(line for line in lines if line.startswith("Megatron TP of degree t = "))
    assert "{{" not in drawn and "model.title" not in drawn
    return drawn


def test_a_rendered_line_is_the_rendered_prompt_line_holding_the_template_line_literal_words():
    ledger = bundled_cards()["topology-tp-traffic"]
    template = "Megatron TP of degree t = {{ t }} for {{ model.title }}"
    assert rendered_line(ledger, template) == _drawn_degree_line()
    assert rendered_line(ledger, "no template here") == "no template here"


def test_the_command_json(capsys, tmp_path, bundled):
    code, out, _ = drill(capsys, tmp_path, "tp", "--json", "--limit", "3")
    result = json.loads(out)
    assert code == 0 and result["query"] == "tp" and result["found"] == len(matches(bundled, "tp"))
    assert [c["id"] for c in result["cards"]] == matches(bundled, "tp")[:3]
    first = result["cards"][0]
    assert set(first) == {"id", "topic", "kind", "line"} and first["topic"] == bundled_cards()[first["id"]].topic
    assert result["suggestion"] is None and result["notes"] == []


def test_the_command_suggests_and_exits_1_when_nothing_is_found(capsys, tmp_path):
    code, out, err = drill(capsys, tmp_path, "atention")
    assert code == 1 and out == ""
    assert "did you mean: attention" in err and "no card matches" in err
    code, out, _ = drill(capsys, tmp_path, "atention", "--json")
    result = json.loads(out)
    assert code == 1 and result["found"] == 0 and result["cards"] == [] and result["suggestion"] == "attention"


def test_the_command_names_an_unknown_filter(capsys, tmp_path):
    code, _, err = drill(capsys, tmp_path, "topic:colectives")
    assert code == 1 and "did you mean topic:collectives?" in err


def test_the_command_searches_the_decks_given(capsys, tmp_path, write_deck):
    deck = write_deck(
        """
        deck: Mine
        cards:
          - id: my-zero-card
            kind: concept
            topic: zero-fsdp
            prompt: "What does the Zero Redundancy Optimizer shard at stage 2?"
            answer: "Gradients and optimizer state."
            rubric: ["gradients"]
            sources: ["FACTS.md"]
        """
    )
    code, out, _ = drill(capsys, tmp_path, "--decks", str(deck), "zero redundancy stage", "--json")
    assert code == 0 and json.loads(out)["cards"][0]["id"] == "my-zero-card"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["  "], "give words or filters to search for"),
        (["x", "--limit", "0"], "argument --limit: must be 1 or more (got 0)"),
        (["x", "--limit", "many"], "argument --limit: must be a whole number (got 'many')"),
        ([], "the following arguments are required: QUERY"),
    ],
)
def test_bad_input_is_said_in_a_line(capsys, tmp_path, args, message):
    try:
        code = cli.main(["search", "--data-dir", str(tmp_path / "data"), *args])
    except SystemExit as exc:  # argparse
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


# -- the search-words file ---------------------------------------------------------------------


def test_the_bundled_search_words_file_is_valid_data_not_a_deck():
    words = bundled_search_words()
    assert len(words.terms) >= 40
    for short in ("tp", "pp", "dp", "ep", "sp", "cp", "kv", "moe", "gqa", "mla", "fsdp", "zero"):
        term = words.term_of((short,))
        assert term is not None and term.meaning, short
        assert any(len(spelling) > 1 for spelling in term.spellings), short  # its words, the other way
    assert all(term.meaning for term in words.terms)
    path = search_words_path()
    assert path.parent == paths.data_files_dir() and path.name == "search-words.yaml"
    assert path not in deck_files([paths.cards_dir()])  # shipped with the decks, never read as one


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("terms: a: b", ":1: not valid YAML"),
        ("words: []", ":1: the file holds one key, `terms`"),
        ("terms: {tp: x}", ":1: `terms` must be a list"),
        ("terms:\n  - [TP, tensor parallel]", ":2: an entry is a mapping"),
        ("terms:\n  - {forms: [TP], meaning: m}", ":2: forms must be a list of two or more strings"),
        ("terms:\n  - {forms: [on, off], meaning: m}", ":2: forms must be a list of two or more strings"),
        ("terms:\n  - {forms: [TP, '--'], meaning: m}", ":2: the form '--' has no letter or digit"),
        ("terms:\n  - {forms: [all-reduce, all reduce], meaning: m}", ":2: the forms"),
        ("terms:\n  - {forms: [TP, tensor parallel]}", ":2: meaning must say"),
        ("terms:\n  - {forms: [TP, tensor parallel], meaning: m, seen: 1}", ":2: unknown key seen"),
        ("terms:\n  - {forms: [TP, tensor parallel], meaning: m, source: [1]}", ":2: source must be text"),
        (
            "terms:\n  - {forms: [TP, tensor parallel], meaning: m}\n  - {forms: [tp, toilet paper], meaning: m}",
            ":3: the form 'tp' is already an entry's at line 2",
        ),
    ],
)
def test_the_search_words_file_is_validated_with_its_line(text, message):
    with pytest.raises(SearchWordsError) as raised:
        parse_search_words(text, "words.yaml")
    assert str(raised.value).startswith("words.yaml:") and message in str(raised.value)


def test_a_valid_file_gives_each_entry_by_any_of_its_forms():
    words = parse_search_words(
        "terms:\n  - forms: [MoE, mixture of experts, Mixture-of-Experts]\n    meaning: experts\n    source: S\n",
        "w.yaml",
    )
    (term,) = words.terms
    assert term.spellings == (("moe",), ("mixture", "of", "experts"))
    assert words.term_of(("mixture", "of", "experts")) is term and term.source == "S" and term.line == 2


# -- the browser ------------------------------------------------------------------------------------


async def test_the_browser_offers_the_nearest_word_when_nothing_matches(tmp_path, write_deck):
    app = make_app(AppOptions(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await open_browser(pilot)
        await type_search(pilot, "multi-head atention")
        assert shown_ids(app) == [] and "did you mean: multi-head attention" in detail(app)
        await type_search(pilot, "mha")  # the abbreviation finds the card that says multi-head attention
        assert shown_ids(app) == ["t-shape"] and "did you mean" not in detail(app)
