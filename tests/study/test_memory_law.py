"""The plan's float arithmetic of FSRS-6 gives what the fsrs package gives, review by review, to the last digit."""

import datetime as dt
import random

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.study.forecast import MemoryModel
from drill.study.memory_law import memory_law

DAY = dt.date(2026, 1, 1)
OTHER = tuple(v * (1.1 if i % 3 == 0 else 1.05) if i != 20 else 0.2 for i, v in enumerate(DEFAULT_PARAMETERS))


@pytest.mark.parametrize("parameters", [None, OTHER], ids=["defaults", "other parameters"])
def test_every_review_and_recall_matches_the_package(parameters):
    rng = random.Random(7)
    law = memory_law(parameters, 36500)
    model = MemoryModel(parameters)
    for _ in range(100):
        day = DAY
        grade = rng.choice([0, 1, 3, 4, 5])
        memory, due = model.review(None, grade, day)
        mine = law.first(grade)
        assert (mine.stability, mine.difficulty, mine.state) == (memory.stability, memory.difficulty, memory.state)
        assert mine.interval == (due - day).days
        for _ in range(6):
            gap = rng.choice([1, 2, 3, 5, 10, 30, 200])
            later = day + dt.timedelta(days=gap)
            assert law.recall(mine.stability, gap) == pytest.approx(model.recall(memory, later), abs=1e-12)
            grade = rng.choice([1, 3, 4, 5])
            memory, due = model.review(memory, grade, later)
            mine = law.review(mine.stability, mine.difficulty, mine.state, gap, grade)
            assert (mine.stability, mine.difficulty, mine.state) == (memory.stability, memory.difficulty, memory.state)
            assert mine.interval == (due - later).days
            day = later


def test_the_longest_interval_caps_the_next_one():
    law = memory_law(None, 7)
    assert law.review(300.0, 3.0, 2, 300, 5).interval == 7
