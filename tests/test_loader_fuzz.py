"""Whatever a deck file holds, loading it yields cards or problems, never an exception."""

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from drill.cards.loader import load_decks

yaml_ish = st.text(alphabet=string.printable + "×→µ", max_size=300)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
keys = st.sampled_from(["id", "kind", "topic", "prompt", "answer", "rubric", "sources", "tags", "steps", "promt"])


@settings(max_examples=150, deadline=None)
@given(text=yaml_ish)
def test_any_text_gives_problems_not_exceptions(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "deck.yaml"
    path.write_text(text, encoding="utf-8")
    decks = load_decks([path])
    for p in decks.problems:
        assert str(p).startswith(f"{path}:")


@settings(max_examples=150, deadline=None)
@given(cards=st.lists(st.dictionaries(keys, values, max_size=8), max_size=4))
def test_any_card_mapping_gives_problems_not_exceptions(tmp_path_factory, cards):
    import yaml

    path = tmp_path_factory.mktemp("fuzz") / "deck.yaml"
    path.write_text(yaml.safe_dump({"cards": cards}), encoding="utf-8")
    decks = load_decks([path], deep=True)
    assert len(decks.cards) + len(decks.problems) >= 0
    for card in decks.cards.values():
        assert card.kind in ("concept", "shape_trace", "memory_ledger", "diagnosis", "kernel")
