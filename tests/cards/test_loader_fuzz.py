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


@settings(max_examples=100, deadline=None)
@given(text=yaml_ish)
def test_any_text_gives_problems_not_exceptions(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "deck.yaml"
    path.write_text(text, encoding="utf-8")
    decks = load_decks([path])
    for p in decks.problems:
        assert str(p).startswith(f"{path}:")


@settings(max_examples=100, deadline=None)
@given(cards=st.lists(st.dictionaries(keys, values, max_size=8), max_size=4))
def test_any_card_mapping_gives_problems_not_exceptions(tmp_path_factory, cards):
    import yaml

    path = tmp_path_factory.mktemp("fuzz") / "deck.yaml"
    path.write_text(yaml.safe_dump({"cards": cards}), encoding="utf-8")
    decks = load_decks([path], deep=True)
    given_ids = [c.get("id") for c in cards]
    assert set(decks.cards) <= {i for i in given_ids if isinstance(i, str)}  # nothing made up
    assert len(decks.cards) <= len(cards)
    lines = {p.line for p in decks.problems}
    for card_id in given_ids:
        # every card given either loaded or was reported (on a line of the file)
        assert (isinstance(card_id, str) and card_id in decks.cards) or any(line >= 1 for line in lines)
    for card in decks.cards.values():
        assert card.kind in ("concept", "shape_trace", "memory_ledger", "diagnosis", "kernel")
