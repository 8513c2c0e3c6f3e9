import datetime as dt
import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def write_deck(tmp_path):
    """Write a deck file from YAML text and return its path."""

    def write(text: str, name: str = "deck.yaml") -> Path:
        path = tmp_path / "decks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


CONCEPT = """\
  - id: {id}
    kind: concept
    topic: gpu-arch
    prompt: "Question {id}?"
    answer: "Answer {id}."
    rubric: ["point one"]
    sources: ["FACTS.md"]
"""


@pytest.fixture
def concept_deck(write_deck):
    """A deck of n concept cards named c00, c01, ..."""

    def make(n: int, name: str = "concepts.yaml") -> Path:
        body = "deck: Test deck\ncards:\n" + "".join(CONCEPT.format(id=f"c{i:02d}") for i in range(n))
        return write_deck(body, name)

    return make


class FixedClock:
    def __init__(self, when: dt.datetime) -> None:
        self.now = when

    def __call__(self) -> dt.datetime:
        return self.now
