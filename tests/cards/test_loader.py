import pytest

from drill.cards.loader import load_decks
from drill.cli import main


def problems_of(path):
    return [str(p) for p in load_decks([path]).problems]


def test_good_deck_loads(concept_deck):
    decks = load_decks([concept_deck(3)])
    assert decks.problems == []
    assert sorted(decks.cards) == ["c00", "c01", "c02"]
    card = decks.cards["c01"]
    assert card.deck == "Test deck" and card.topic == "gpu-arch" and card.rubric == ("point one",)
    assert card.line == 10  # the line of the card's first key


def test_yaml_syntax_error_names_the_line(write_deck):
    path = write_deck("cards:\n  - id: a\n    prompt: [unclosed\n    kind: concept\n")
    (msg,) = problems_of(path)
    assert msg.startswith(f"{path}:") and "YAML syntax error" in msg
    line = int(msg.split(":")[1])
    assert 3 <= line <= 5


def test_duplicate_ids_name_both_places(concept_deck):
    a = concept_deck(2, "a.yaml")
    b = concept_deck(1, "b.yaml")
    msgs = [str(p) for p in load_decks([a.parent]).problems]
    assert msgs == [f"{b}:3: c00: duplicate id: also defined at {a}:3"]


@pytest.mark.parametrize(
    "card, expected",
    [
        ("kind: poem", "unknown kind 'poem'"),
        ("kind: concept\n    promt: hi", "unknown key `promt` (did you mean `prompt`?)"),
        ("kind: concept\n    topic: cooking", "unknown topic 'cooking'"),
        ("kind: concept\n    sources: FACTS.md", "`sources` must be a list, got text"),
        ("kind: concept\n    tags: [1, 2]", "every item of `tags` must be non-empty text"),
        ("kind: concept\n    sources: []", "`sources` needs at least one source"),
    ],
)
def test_field_problems(write_deck, card, expected):
    base = {"topic": "gpu-arch", "prompt": "p", "answer": "a", "sources": "[x]"}
    extra_keys = {line.split(":")[0].strip() for line in card.splitlines()}
    rest = "".join(f"    {k}: {v}\n" for k, v in base.items() if k not in extra_keys)
    path = write_deck(f"cards:\n  - id: bad-card\n    {card}\n{rest}")
    msgs = problems_of(path)
    assert any(expected in m and ": bad-card: " in m for m in msgs), msgs


def test_missing_required_field(write_deck):
    path = write_deck("cards:\n  - id: x\n    kind: concept\n    topic: gpu-arch\n    answer: a\n    sources: [s]\n")
    assert problems_of(path) == [f"{path}:2: x: missing required field `prompt`"]


def test_missing_id_reports_dash(write_deck):
    path = write_deck("cards:\n  - kind: concept\n    prompt: p\n")
    assert problems_of(path) == [f"{path}:2: -: missing required field `id`"]


def test_python_tags_are_errors_never_run(write_deck, tmp_path):
    marker = tmp_path / "pwned"
    path = write_deck(
        "cards:\n  - id: evil\n    kind: concept\n    topic: gpu-arch\n"
        f"    prompt: !!python/object/apply:os.system ['touch {marker}']\n"
        "    answer: a\n    sources: [s]\n"
    )
    (msg,) = problems_of(path)
    assert msg.startswith(f"{path}:5: evil: YAML error") and "python/object/apply" in msg
    assert not marker.exists()


def test_not_a_deck(write_deck):
    path = write_deck("- just\n- a list\n")
    assert problems_of(path) == [f"{path}:1: -: a deck is a mapping with `deck:` and `cards:`"]


def test_edited_text_changes_hash_but_not_id(write_deck):
    p1 = write_deck(
        "cards:\n  - {id: x, kind: concept, topic: gpu-arch, prompt: p, answer: a, sources: [s]}\n", "1.yaml"
    )
    p2 = write_deck(
        "cards:\n  - {id: x, kind: concept, topic: gpu-arch, prompt: p2, answer: a, sources: [s]}\n", "2.yaml"
    )
    h1 = load_decks([p1]).cards["x"].content_hash
    h2 = load_decks([p2]).cards["x"].content_hash
    assert h1 and h2 and h1 != h2


def test_check_command_exit_codes_and_no_traceback(concept_deck, write_deck, capsys):
    good = concept_deck(2)
    assert main(["check", str(good)]) == 0
    bad = write_deck("cards:\n  - id: x\n    kind: concept\n    promt: p\n", "bad.yaml")
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert f"{bad}:4: x: unknown key `promt`" in out.out


def test_check_names_an_id_a_bundled_card_has_too(write_deck, capsys):
    """The app always loads the bundled decks beside a learner's own: checked alone, a clash must show."""
    from drill import paths

    mine = write_deck(
        "deck: Mine\ncards:\n"
        "  - {id: profiling-timeline-first, kind: concept, topic: profiling, prompt: p, answer: a, sources: [s]}\n"
        "  - {id: mine-only, kind: concept, topic: profiling, prompt: p, answer: a, sources: [s]}\n"
    )
    assert main(["check", str(mine)]) == 1
    out = capsys.readouterr().out
    assert f"{mine}:3: profiling-timeline-first: duplicate id: a bundled card has it too" in out
    assert "mine-only" not in out
    assert main(["check", str(paths.cards_dir() / "profiling.yaml")]) == 0  # a bundled file clashes with nothing


def test_bundled_decks_pass_check():
    decks = load_decks(deep=False)
    assert decks.problems == [], "\n".join(map(str, decks.problems[:20]))
    assert len(decks.cards) >= 20


def test_cached_decks_follow_edits(tmp_path, write_deck):
    from drill.cards.deck_cache import load_decks_cached

    deck = write_deck("cards:\n  - {id: x, kind: concept, topic: gpu-arch, prompt: one, answer: a, sources: [s]}\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert (cache / "decks.json").exists()
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    deck.write_text("cards:\n  - {id: x, kind: concept, topic: gpu-arch, prompt: two!, answer: a, sources: [s]}\n")
    assert load_decks_cached([deck], cache).cards["x"].prompt == "two!"
    (cache / "decks.json").write_bytes(b"garbage")
    assert load_decks_cached([deck], cache).cards["x"].prompt == "two!"


class _Canary:
    """Unpickling this runs `open(path, "w")`: what a crafted cache could run instead."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_a_crafted_pickle_in_the_data_dir_is_never_run_by_stats(tmp_path, concept_deck, capsys):
    import pickle

    data = tmp_path / "data"
    data.mkdir()
    canary = tmp_path / "CANARY"
    (data / "decks.pickle").write_bytes(pickle.dumps(_Canary(canary)))
    assert main(["stats", "--json", "--data-dir", str(data)]) == 0
    assert main(["stats", "--json", "--data-dir", str(data), "--decks", str(concept_deck(2))]) == 0
    assert not canary.exists()
    assert not (data / "decks.pickle").exists()  # the old cache is gone once the new one is written
    assert (data / "decks.json").read_bytes()[:1] == b"["  # the key, then the cards: JSON, nothing that runs


def _cache_text(tmp_path, write_deck):
    from drill.cards.deck_cache import load_decks_cached

    deck = write_deck(CACHED.format(prompt="one"))
    cache = tmp_path / "cache"
    cache.mkdir()
    load_decks_cached([deck], cache)
    return deck, cache, (cache / "decks.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda key, body: key + "\n" + body[: len(body) // 2],  # cut short
        lambda key, body: key + "\n" + body.replace('"prompt":"one"', '"prompt":1'),  # a field of the wrong type
        lambda key, body: key + "\n" + body.replace('"cards":', '"kards":'),  # an older layout
        lambda key, body: key + "\n" + "[" * 100_000 + "]" * 100_000,  # nested too deep for the parser
        lambda key, body: key + "\n" + body.replace('"line":', '"line":"x",'),  # not JSON
        lambda key, body: key + "\n" + '{"cards": 5, "problems": [], "warnings": [], "topics": null}',
        lambda key, body: key.replace("[4,", "[3,") + "\n" + body,  # another layout's key
        lambda key, body: "\xff\xfe" + key,  # not even text
    ],
)
def test_any_cache_problem_means_the_decks_are_read_again(tmp_path, write_deck, parse_count, spoil):
    from drill.cards.deck_cache import load_decks_cached

    deck, cache, text = _cache_text(tmp_path, write_deck)
    key, body = text.split("\n", 1)
    (cache / "decks.json").write_text(spoil(key, body), encoding="utf-8", errors="surrogateescape")
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert len(parse_count) == 2  # read again, and the cache written afresh
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert len(parse_count) == 2


def test_the_cache_gives_back_the_cards_as_loaded(tmp_path):
    """Every bundled card (its kind-specific fields above all) comes back from the cache as it was parsed."""
    from drill.cards import deck_cache, loader

    first = deck_cache.load_decks_cached(None, tmp_path)
    again = deck_cache._read_cache(tmp_path / "decks.json", (tmp_path / "decks.json").read_text().split("\n", 1)[0])
    assert again is not None
    assert again[0].cards == first.cards and list(again[0].cards) == list(first.cards)
    assert again[1] == loader.known_topics()


def test_decks_holding_values_json_would_change_are_not_cached(tmp_path, write_deck):
    """A date (YAML reads `2024-01-01` as one) would come back as text: such decks are parsed at each start."""
    import dataclasses
    import datetime as dt

    from drill.cards import deck_cache, loader

    card = loader.load_decks([write_deck(CACHED.format(prompt="one"))]).cards["x"]
    dated = loader.DeckSet(cards={"x": dataclasses.replace(card, fields={"when": dt.date(2024, 1, 1)})})
    cache = tmp_path / "cache"
    cache.mkdir()
    deck_cache._write_cache(cache / "decks.json", "[]", dated, None)
    assert list(cache.iterdir()) == []


def test_a_deck_path_that_is_not_utf8_is_read_each_start_not_cached(tmp_path, write_deck):
    """A folder named in bytes that are not UTF-8 reaches Python as lone surrogates, which UTF-8 cannot write."""
    import dataclasses
    from pathlib import Path

    from drill.cards import deck_cache, loader

    card = loader.load_decks([write_deck(CACHED.format(prompt="one"))]).cards["x"]
    odd = loader.DeckSet(cards={"x": dataclasses.replace(card, path=Path("decks-\udcff/deck.yaml"))})
    cache = tmp_path / "cache"
    cache.mkdir()
    deck_cache._write_cache(cache / "decks.json", "[]", odd, None)
    assert list(cache.iterdir()) == []


@pytest.fixture
def parse_count(monkeypatch):
    """Count the real parses load_decks_cached falls back to."""
    from drill.cards import deck_cache

    calls = []
    real = deck_cache.load_decks

    def counting(roots=None, **kw):
        calls.append(roots)
        return real(roots, **kw)

    monkeypatch.setattr(deck_cache, "load_decks", counting)
    return calls


CACHED = "cards:\n  - {{id: x, kind: concept, topic: gpu-arch, prompt: {prompt}, answer: a, sources: [s]}}\n"


def test_cache_sees_an_edit_that_keeps_size_and_mtime(tmp_path, write_deck, parse_count):
    import os

    from drill.cards.deck_cache import load_decks_cached

    deck = write_deck(CACHED.format(prompt="one"))
    cache = tmp_path / "cache"
    cache.mkdir()
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert len(parse_count) == 1  # the second start came from the cache
    stat = deck.stat()
    deck.write_text(CACHED.format(prompt="two"))  # same length
    os.utime(deck, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert deck.stat().st_size == stat.st_size and deck.stat().st_mtime_ns == stat.st_mtime_ns
    assert load_decks_cached([deck], cache).cards["x"].prompt == "two"
    assert len(parse_count) == 2


def test_cache_is_dropped_when_drill_version_changes(tmp_path, write_deck, monkeypatch, parse_count):
    from drill.cards import deck_cache

    deck = write_deck(CACHED.format(prompt="one"))
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(deck_cache, "drill_version", lambda: "1.0.0")
    deck_cache.load_decks_cached([deck], cache)
    deck_cache.load_decks_cached([deck], cache)
    assert len(parse_count) == 1
    monkeypatch.setattr(deck_cache, "drill_version", lambda: "1.0.1")
    assert deck_cache.load_decks_cached([deck], cache).cards["x"].prompt == "one"
    assert len(parse_count) == 2
    deck_cache.load_decks_cached([deck], cache)
    assert len(parse_count) == 2  # and the new version's cache is kept


def test_drill_version_is_the_package_version(monkeypatch):
    import importlib.metadata

    import drill
    from drill.cards import deck_cache

    assert deck_cache.drill_version() == drill.__version__ == importlib.metadata.version("drill")


def test_alias_bombs_deep_nesting_and_odd_kinds_are_problems_and_the_rest_loads(write_deck):
    from drill.cards.loader import load_decks

    bomb = "\n".join(
        [f"    l0: &l0 [{', '.join(['x'] * 9)}]"]
        + [f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 8)]
    )
    deck = write_deck(
        "deck: T\ncards:\n"
        '  - {id: fine, kind: concept, topic: gpu-arch, prompt: "p?", answer: "a.", sources: [s]}\n'
        "  - id: bomb\n    kind: shape_trace\n    topic: gpu-arch\n" + bomb + "\n"
        "  - id: deep\n    kind: concept\n    topic: gpu-arch\n    prompt: " + "[" * 300 + "]" * 300 + "\n"
        "  - {id: odd, kind: [x], topic: gpu-arch}\n"
    )
    decks = load_decks([deck])
    assert list(decks.cards) == ["fine"]
    messages = {p.card_id: (p.line, p.message) for p in decks.problems}
    assert "expands to more than 100,000 values" in messages["bomb"][1]
    assert "nested more than 64 levels" in messages["deep"][1]
    assert "unknown kind" in messages["odd"][1]
    assert all(line >= 1 for line, _ in messages.values())


def test_follow_ups_name_other_cards(write_deck):
    card = "  - id: {id}\n    kind: concept\n    topic: gpu-arch\n    prompt: p\n    answer: a\n    sources: [s]\n"
    good = card.format(id="a") + "    follow_ups: [b]\n" + card.format(id="b")
    decks = load_decks([write_deck("cards:\n" + good)])
    assert decks.problems == [] and decks.cards["a"].follow_ups == ("b",)
    bad = card.format(id="a") + "    follow_ups: [a, bb]\n" + card.format(id="b")
    path = write_deck("cards:\n" + bad)
    assert problems_of(path) == [
        f"{path}:2: a: `follow_ups` names the card itself",
        f"{path}:2: a: `follow_ups` names unknown card 'bb' (did you mean 'b'?)",
    ]


def test_a_start_from_the_cache_reads_no_yaml(tmp_path, write_deck):
    import subprocess
    import sys

    from drill.cards.deck_cache import load_decks_cached
    from drill.cards.loader import known_topics

    deck = write_deck(CACHED.format(prompt="one"))
    cache = tmp_path / "cache"
    cache.mkdir()
    load_decks_cached([deck], cache)  # parses the deck (and the topic list) and writes the cache
    code = (
        "import sys; from pathlib import Path; from drill.cards.deck_cache import load_decks_cached\n"
        "from drill.cards.loader import known_topics\n"
        f"cards = load_decks_cached([Path({str(deck)!r})], Path({str(cache)!r})).cards\n"
        "print(cards['x'].prompt, len(known_topics()), 'yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["one", str(len(known_topics())), "False"]


def test_a_missing_deck_path_is_named_without_a_line_or_card(capsys, tmp_path):
    from drill.cli import main

    missing = tmp_path / "nowhere.yaml"
    assert main(["check", str(missing)]) == 1
    assert capsys.readouterr().out.strip() == f"{missing}: no such file or folder"


GOOD = """  - id: {id}
    kind: concept
    topic: gpu-arch
    prompt: "What is {id}?"
    answer: "It is {id}."
    sources: [FACTS.md]
"""


@pytest.mark.parametrize(
    "broken",
    [
        '    prompt: "an unclosed quote\n    answer: a\n',  # a syntax error inside one card
        "    prompt: p\n    answer: a\n    tags: " + "[" * 1000 + "]" * 1000 + "\n",  # deeper than the reader goes
    ],
    ids=["unclosed-quote", "nested-1000"],
)
def test_a_card_the_yaml_reader_refuses_costs_only_that_card(tmp_path, broken):
    text = "deck: Mixed\ncards:\n" + GOOD.format(id="before") + "  - id: bad\n    kind: concept\n    topic: gpu-arch\n"
    text += broken + GOOD.format(id="after")
    (tmp_path / "mixed.yaml").write_text(text)
    decks = load_decks([tmp_path])
    mine = {cid: c for cid, c in decks.cards.items() if c.path.name == "mixed.yaml"}
    assert set(mine) == {"before", "after"}
    assert mine["after"].line == text.splitlines().index("  - id: after") + 1  # lines as in the file
    assert mine["before"].deck == "Mixed"
    (problem,) = [p for p in decks.problems if p.path.endswith("mixed.yaml")]
    assert problem.card_id == "bad" and "YAML" in problem.message
    assert 9 <= problem.line <= 14  # at the broken card (or where its chunk ends, for an unclosed quote)
