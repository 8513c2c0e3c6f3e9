"""The bundled decks: they pass the deep check, and they cannot silently shrink."""

import re
from collections import Counter
from pathlib import Path

import pytest

from drill.cards.deck_table import deck_table
from drill.cards.loader import known_topics

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def decks(bundled_decks):
    return bundled_decks


def test_bundled_decks_pass_the_deep_check(decks):
    assert decks.problems == [], "\n".join(map(str, decks.problems[:20]))


def test_counts_per_kind(decks):
    kinds = Counter(c.kind for c in decks.cards.values())
    assert len(decks.cards) >= 540
    assert kinds["shape_trace"] >= 50
    assert kinds["memory_ledger"] >= 110
    assert kinds["diagnosis"] >= 75
    assert kinds["concept"] >= 260
    assert kinds["kernel"] >= 4


def test_every_topic_has_at_least_15_cards(decks):
    per_topic = Counter(c.topic for c in decks.cards.values())
    short = {t: per_topic[t] for t in known_topics() if per_topic[t] < 15}
    assert short == {}


def test_every_card_names_a_source(decks):
    assert all(c.sources for c in decks.cards.values())


def test_readme_table_is_current(decks):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- deck-table -->\n(.*)\n<!-- /deck-table -->", readme, re.S)
    assert table, "README.md lost its deck table"
    assert table.group(1) == deck_table(decks.cards, known_topics()), "regenerate: python -m drill.cards.deck_table"


def test_every_card_sits_in_its_topic_deck_under_a_topic_prefixed_id(decks):
    for card in decks.cards.values():
        # kernel cards share cards/kernels.yaml and keep their short ids; scenarios live in cards/scenarios-*.yaml
        if card.kind == "scenario":
            assert card.path.name.startswith("scenarios-") and card.id.startswith("scenario-"), card.id
        elif card.kind != "kernel":
            assert card.path.name == f"{card.topic}.yaml", card.id
            assert card.id.startswith(f"{card.topic}-"), card.id


def test_diagnoses_offer_four_to_six_distinct_choices_with_one_correct(decks):
    for card in decks.cards.values():
        if card.kind == "diagnosis":
            choices = card.fields["choices"]
            assert 4 <= len(choices) <= 6 and len(set(choices)) == len(choices), card.id
            assert choices.count(card.fields["correct"]) == 1, card.id


def test_shape_traces_have_three_to_six_steps(decks):
    for card in decks.cards.values():
        if card.kind == "shape_trace":
            assert 3 <= len(card.fields["steps"]) <= 6, card.id
