"""A small learner's world for the readiness tests: a deck of its own as the bundled one, and a way to study a day."""

from __future__ import annotations

import datetime as dt
import random
import shutil
from pathlib import Path

from drill import paths
from drill.config.settings import load_settings
from drill.study.forecast import MemoryModel, replay
from drill.workspace import Workspace

TOPICS = ("gpu-arch", "fusion", "serving")
CARDS_PER_TOPIC = 12
START = dt.date(2026, 3, 2)  # a Monday

CARD = """\
  - id: {id}
    kind: concept
    topic: {topic}
    prompt: "Question {id}?"
    answer: "Answer {id}."
    rubric: ["point one"]
    sources: ["FACTS.md"]
"""


def make_world(tmp_path: Path, monkeypatch) -> Path:
    """The data folder of a learner whose decks are 36 concept cards over three topics (the bundled ones left out)."""
    cards = tmp_path / "cards"
    shutil.copytree(paths.data_files_dir(), cards / "data")
    body = "deck: Readiness test deck\ncards:\n" + "".join(
        CARD.format(id=f"{topic}-{i:02d}", topic=topic) for topic in TOPICS for i in range(CARDS_PER_TOPIC)
    )
    (cards / "readiness.yaml").write_text(body, encoding="utf-8")
    monkeypatch.setattr(paths, "cards_dir", lambda: cards)
    return tmp_path / "home"


def at(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12, 0))


def study(data: Path, day: dt.date, rng: random.Random, *, new_per_day: int = 10) -> dict[str, str]:
    """Answer the day's whole queue as the model expects: recalled with its predicted recall, graded 4 then (else 1).

    Returns each card's mode of its first grade that day.
    """
    workspace = Workspace(data, [paths.cards_dir()], settings=load_settings())
    model = MemoryModel()
    memories = replay(workspace.review_log()).cards
    session = workspace.review_session(day, new_per_day=new_per_day)
    store = workspace.store()
    modes: dict[str, str] = {}
    try:
        while session.current is not None:
            card_id = session.current.id
            known = memories.get(card_id)
            recall = model.recall(known.memory if known else None, day)
            grade = 4 if known is None or rng.random() < recall else 1
            graded = session.grade(store, grade, now=at(day), duration_ms=30_000)
            modes.setdefault(card_id, graded.mode)
    finally:
        workspace.close()
    return modes
