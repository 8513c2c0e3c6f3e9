"""stop_now's recall is the memory model's, float for float: FSRS's retrievability worked out once a day, not per card."""

import datetime as dt
import random

import pytest

from drill.study.forecast import MemoryModel, TrackCard, stop_now
from drill.study.records import FSRSState

DAY = dt.date(2026, 6, 1)
FITTED = (
    0.3, 1.1, 2.9, 14.0, 7.0, 0.6, 1.8, 0.01, 1.5, 0.12, 1.0, 1.9, 0.11, 0.3, 2.3, 0.23, 2.9, 0.5, 0.66, 0.1, 0.25,
)  # fmt: skip


def memories(count: int) -> list[FSRSState | None]:
    rng = random.Random(3)
    out: list[FSRSState | None] = [None]
    for _ in range(count):
        last = DAY - dt.timedelta(days=rng.randint(-3, 400))  # a few reviewed after the day asked about
        out.append(FSRSState(rng.uniform(0.01, 900.0), rng.uniform(1.0, 10.0), rng.choice((1, 2, 3)), last))
    return out


@pytest.mark.parametrize("parameters", [None, FITTED], ids=["default parameters", "fitted parameters"])
def test_stop_now_recalls_are_the_models_own(parameters):
    model = MemoryModel(parameters, 3650)
    cards = [TrackCard(f"c{i}", f"t{i % 3}", "concept", memory) for i, memory in enumerate(memories(500))]
    on = DAY + dt.timedelta(days=9)
    expected = {card.card_id: model.recall(card.memory, on) for card in cards}
    figures = stop_now(cards, on, model)
    by_topic: dict[str, list[float]] = {}
    for card in cards:
        by_topic.setdefault(card.topic, []).append(expected[card.card_id])
    assert figures.overall == sum(expected.values()) / len(expected)
    assert {t.topic: t.readiness for t in figures.topics} == {
        topic: sum(values) / len(values) for topic, values in by_topic.items()
    }
    assert 0.0 < figures.overall < 1.0 and figures.cards == len(cards)
    for card in cards:  # each card alone: its own recall, to the last bit
        assert stop_now([card], on, model).overall == expected[card.card_id]
