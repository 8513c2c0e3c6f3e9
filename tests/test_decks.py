"""The bundled decks: they pass the deep check, and they cannot silently shrink."""

import re
from collections import Counter
from pathlib import Path

import pytest

from drill.cards.loader import known_topics, load_decks
from drill.stats import deck_table

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def decks():
    return load_decks(deep=True)


def test_bundled_decks_pass_the_deep_check(decks):
    assert decks.problems == [], "\n".join(map(str, decks.problems[:20]))


def test_counts_per_kind(decks):
    kinds = Counter(c.kind for c in decks.cards.values())
    assert len(decks.cards) >= 300
    assert kinds["shape_trace"] >= 25
    assert kinds["memory_ledger"] >= 50
    assert kinds["diagnosis"] >= 40
    assert kinds["concept"] >= 120
    assert kinds["kernel"] >= 4


def test_every_lab_topic_has_at_least_15_cards(decks):
    per_topic = Counter(c.topic for c in decks.cards.values())
    for topic_id, topic in known_topics().items():
        if topic.get("lab"):
            assert per_topic[topic_id] >= 15, topic_id


def test_every_card_names_a_source(decks):
    assert all(c.sources for c in decks.cards.values())


def test_readme_table_is_current(decks):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- deck-table -->\n(.*)\n<!-- /deck-table -->", readme, re.S)
    assert table, "README.md lost its deck table"
    assert table.group(1) == deck_table(decks.cards, known_topics()), "regenerate: python -m drill.stats"
