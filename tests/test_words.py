"""Counts with their nouns agreeing."""

import pytest

from drill.words import counted


@pytest.mark.parametrize(
    "number, noun, plural, words",
    [
        (0, "card", None, "0 cards"),
        (1, "card", None, "1 card"),
        (2, "card", None, "2 cards"),
        (1, "query", "queries", "1 query"),
        (10_000, "query", "queries", "10000 queries"),
    ],
)
def test_a_count_and_its_noun_agree(number, noun, plural, words):
    assert counted(number, noun, plural) == words
