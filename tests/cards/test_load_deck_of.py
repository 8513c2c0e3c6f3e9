"""`load_deck_of`: a command about one card loads only the deck file that defines it, and only when one place does."""

from drill.cards.loader import load_deck_of, load_decks


def test_the_one_file_that_defines_the_card_is_loaded_alone(concept_deck, write_deck):
    concepts = concept_deck(3, "a.yaml")
    write_deck("cards:\n  - id: broken\n    prompt: [unclosed\n", "b.yaml")  # never parsed for c01
    deck = load_deck_of("c01", [concepts.parent])
    assert deck is not None
    assert deck.problems == []
    assert sorted(deck.cards) == ["c00", "c01", "c02"]
    assert deck.cards["c01"] == load_decks([concepts]).cards["c01"]


def test_a_card_defined_twice_or_nowhere_is_left_to_the_whole_load(concept_deck):
    first = concept_deck(2, "a.yaml")
    concept_deck(1, "b.yaml")  # c00 again
    assert load_deck_of("c00", [first.parent]) is None
    assert load_deck_of("c05", [first.parent]) is None
    assert load_deck_of("c01", [first.parent]) is not None  # defined once


FLOW_AND_LONGER = """\
cards:
  - {id: "c1", kind: concept, topic: gpu-arch, prompt: "Q?", answer: "A.", sources: ["FACTS.md"]}
  - id: c1-more  # a longer id
    kind: concept
    topic: gpu-arch
    prompt: "Q2?"
    answer: "A2."
    sources: ["FACTS.md"]
"""
QUOTED = """\
cards:
  - id: 'c1'
    kind: concept
    topic: gpu-arch
    prompt: "Q?"
    answer: "A."
    sources: ["FACTS.md"]
"""


def test_an_id_in_flow_style_or_quoted_counts_and_a_longer_id_does_not(write_deck):
    deck = write_deck(FLOW_AND_LONGER)
    loaded = load_deck_of("c1", [deck.parent])
    assert loaded is not None and set(loaded.cards) == {"c1", "c1-more"}
    other = write_deck(QUOTED, "b.yaml")
    assert load_deck_of("c1", [other.parent]) is None  # quoted in b.yaml, flow style in deck.yaml: twice
