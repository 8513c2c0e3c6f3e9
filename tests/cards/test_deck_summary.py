"""The deck summary `drill stats` reads: the cards' ids, topics and kinds, current whenever the decks are."""

from drill.cards.deck_cache import load_decks_cached
from drill.cards.deck_summary import SUMMARY_FILE, load_summary_cached

CARD = """\
  - id: {id}
    kind: concept
    topic: {topic}
    prompt: "Question {id}?"
    answer: "Answer {id}."
    sources: ["a source"]
"""


def deck(*cards: tuple[str, str]) -> str:
    return "cards:\n" + "".join(CARD.format(id=cid, topic=topic) for cid, topic in cards)


def test_the_summary_holds_each_cards_id_topic_and_kind(tmp_path, write_deck):
    path = write_deck(deck(("a", "gpu-arch"), ("b", "serving")))
    summary = load_summary_cached([path], tmp_path / "data")
    assert {c.id: (c.topic, c.kind) for c in summary.cards.values()} == {
        "a": ("gpu-arch", "concept"),
        "b": ("serving", "concept"),
    }
    assert (tmp_path / "data" / SUMMARY_FILE).is_file()
    again = load_summary_cached([path], tmp_path / "data")  # read back from the file
    assert again.cards == summary.cards
    assert list(again.cards) == list(load_decks_cached([path], tmp_path / "data").cards)


def test_an_edited_deck_is_summarised_again(tmp_path, write_deck):
    path = write_deck(deck(("a", "gpu-arch")))
    load_summary_cached([path], tmp_path / "data")
    write_deck(deck(("a", "serving"), ("c", "gpu-arch")))
    summary = load_summary_cached([path], tmp_path / "data")
    assert {c.id: c.topic for c in summary.cards.values()} == {"a": "serving", "c": "gpu-arch"}


def test_a_damaged_summary_is_rebuilt(tmp_path, write_deck):
    path = write_deck(deck(("a", "gpu-arch")))
    load_summary_cached([path], tmp_path / "data")
    file = tmp_path / "data" / SUMMARY_FILE
    first_line = file.read_text(encoding="utf-8").splitlines()[0]
    file.write_text(first_line + "\n{not json", encoding="utf-8")
    assert list(load_summary_cached([path], tmp_path / "data").cards) == ["a"]


def test_a_deck_folder_named_in_bytes_that_are_not_utf8_is_summarised_each_time(tmp_path):
    import os
    from pathlib import Path

    missing = Path(os.fsdecode(bytes(tmp_path) + b"/decks-\xff"))  # a lone surrogate in the name
    summary = load_summary_cached([missing], tmp_path / "data")  # no UnicodeEncodeError from the file it keeps
    assert [p.message for p in summary.problems] == ["no such file or folder"]
    assert not (tmp_path / "data" / SUMMARY_FILE).exists()
