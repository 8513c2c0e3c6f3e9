"""Big decks: the deck cache is built on a first start in one pass over the files, and the loader's quick paths
for plain decks give exactly the cards its careful paths give."""

import sys
from pathlib import Path

import pytest
import yaml

from drill import paths
from drill.cards import deck_cache, loader
from drill.cards.deck_cache import CACHE_FILE, load_decks_cached
from drill.cards.loader import load_decks
from drill.cards.yaml_guards import FILE_MAX_DEPTH, file_shape

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from start_speed import BIG_DECK_BYTES, big_deck_text, write_big_deck  # noqa: E402


def test_the_generated_big_deck_loads_whole_and_fits_a_decks_limit(tmp_path):
    small = tmp_path / "decks" / "big.yaml"
    small.parent.mkdir()
    small.write_text(big_deck_text(60), encoding="utf-8")
    decks = load_decks([small], deep=True)
    assert decks.problems == [] and decks.warnings == []
    assert len(decks.cards) == 60
    assert {card.kind for card in decks.cards.values()} == {"concept", "shape_trace", "memory_ledger"}
    size = write_big_deck(tmp_path / "full" / "big.yaml")
    assert 3.5 * 1024 * 1024 < size <= BIG_DECK_BYTES  # about 4 MB, never past what a deck may be


def test_a_first_start_writes_the_deck_cache_into_a_data_folder_not_made_yet(tmp_path, write_deck, concept_deck):
    data = tmp_path / "new" / "data"
    decks = load_decks_cached([concept_deck(3)], data)
    assert len(decks.cards) == 3
    assert (data / CACHE_FILE).is_file()  # the second start reads it, not the YAML


def test_each_deck_file_is_read_once_and_the_cache_holds_what_was_read(tmp_path, concept_deck, monkeypatch):
    deck = concept_deck(4)
    reads: list[Path] = []
    real_bytes = Path.read_bytes
    real_text = Path.read_text

    def read_bytes(self: Path) -> bytes:
        reads.append(self)
        return real_bytes(self)

    def read_text(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return real_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.setattr(Path, "read_text", read_text)
    load_decks_cached([deck], tmp_path / "data")
    assert reads.count(deck) == 1
    monkeypatch.undo()
    # the key is of the bytes that were parsed: the cached cards are the file's
    key = deck_cache.cache_key([deck])
    assert key is not None
    cached = deck_cache._read_cache(tmp_path / "data" / CACHE_FILE, key)
    assert cached is not None and sorted(cached[0].cards) == ["c00", "c01", "c02", "c03"]


def test_a_deck_with_windows_line_endings_reads_as_before(tmp_path):
    text = big_deck_text(3).replace("\n", "\r\n")
    deck = tmp_path / "crlf.yaml"
    deck.write_bytes(text.encode("utf-8"))
    from_cache = load_decks_cached([deck], tmp_path / "data").cards
    read_alone = load_decks([deck]).cards
    assert from_cache == read_alone
    assert from_cache["big-00000"].prompt == read_alone["big-00000"].prompt
    assert "\r" not in from_cache["big-00000"].prompt


def test_many_shallow_brackets_do_not_make_every_card_measured():
    many = big_deck_text(3 * FILE_MAX_DEPTH // 2)  # more brackets than FILE_MAX_DEPTH, two deep at most
    assert many.count("[") > FILE_MAX_DEPTH
    shape = file_shape(many)
    assert shape.too_deep_at is None and shape.measure_cards is False


def test_deep_nesting_and_anchors_still_get_the_careful_look(tmp_path):
    deep = "deck: x\ncards:\n  - id: a\n    prompt: " + "[" * (FILE_MAX_DEPTH + 5) + "]" * (FILE_MAX_DEPTH + 5) + "\n"
    assert file_shape(deep).measure_cards is True  # the careful look is still taken
    anchored = "deck: x\ncards:\n  - &one {id: a}\n  - *one\n"
    assert file_shape(anchored).measure_cards is True
    deck = tmp_path / "deep.yaml"
    deck.write_text(deep, encoding="utf-8")
    assert load_decks([deck]).problems  # refused with a problem, never a crash


def _card_nodes(text: str) -> list[tuple[object, yaml.Node]]:
    parsing = loader._yaml_loader()(text)
    root = parsing.get_single_node()
    cards = next(v for k, v in root.value if k.value == "cards")
    return [(parsing, node) for node in cards.value]


@pytest.mark.parametrize("deck", sorted(paths.cards_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_the_quick_path_builds_what_the_yaml_loader_builds(deck):
    text = deck.read_text(encoding="utf-8")
    for parsing, node in _card_nodes(text):
        assert loader._value_of(parsing, node) == parsing.construct_object(node, deep=True)  # type: ignore[attr-defined]


def test_the_quick_path_leaves_merge_keys_dates_and_numbers_to_the_loader():
    text = (
        "cards:\n"
        "  - id: a\n"
        "    when: 2026-05-10\n"
        "    n: 0x1F\n"
        "    ratio: .5\n"
        "    flag: yes\n"
        "    nothing: ~\n"
        "    base: {x: 1}\n"
        "    merged: {<<: {x: 1}, y: 2}\n"
        "    set: !!set {a, b}\n"
    )
    for parsing, node in _card_nodes(text):
        assert loader._value_of(parsing, node) == parsing.construct_object(node, deep=True)  # type: ignore[attr-defined]


def test_an_escaped_control_character_is_still_shown_and_warned_of(tmp_path):
    text = big_deck_text(1).replace('prompt: "Card 0:', 'prompt: "Card 0: \\x1b[31m')
    deck = tmp_path / "escaped.yaml"
    deck.write_text(text, encoding="utf-8")
    decks = load_decks([deck], deep=True)
    assert "\x1b" not in decks.cards["big-00000"].prompt
    assert "\u241b" in decks.cards["big-00000"].prompt  # the symbol for ESC
    assert any("ESC U+001B" in warning.message for warning in decks.warnings)


def test_a_cache_whose_lists_hold_other_than_text_is_read_again(tmp_path, concept_deck):
    import json

    deck = concept_deck(2)
    data = tmp_path / "data"
    load_decks_cached([deck], data)
    key, body = (data / CACHE_FILE).read_text(encoding="utf-8").split("\n", 1)
    assert deck_cache._read_cache(data / CACHE_FILE, key) is not None
    edited = json.loads(body)
    edited["cards"][0]["tags"] = ["fine", 7]
    (data / CACHE_FILE).write_text(key + "\n" + json.dumps(edited), encoding="utf-8")
    assert deck_cache._read_cache(data / CACHE_FILE, key) is None  # refused: the decks are read again
    assert sorted(load_decks_cached([deck], data).cards) == ["c00", "c01"]
