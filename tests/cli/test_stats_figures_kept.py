"""`drill stats` on a fixed history prints the very figures it printed when this file's expected output was written.

The history is written row by row (no session, no plan decides what is graded), the study day is
given with --today and the interview date in the settings file, so every figure is fixed: the
progress report, readiness with the plan to the date, and the calibration. Making `drill stats`
quicker must not move one of them. A change meant to move a figure writes the expected files
again: `DRILL_WRITE_EXPECTED=1 pytest tests/cli/test_stats_figures_kept.py`, and the diff shows it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from pathlib import Path

import pytest

from drill.cli import main
from drill.config.settings import config_path
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State
from tests.readiness_world import CARDS_PER_TOPIC, TOPICS, make_world

EXPECTED = Path(__file__).parent / "expected"
TODAY = dt.date(2026, 4, 20)
DATE = TODAY + dt.timedelta(days=12)
HISTORY_DAYS = 45
MODES = ("review", "review", "review", "review", "repeat", "cram", "early")


def write_history(data: Path) -> None:
    """Forty-five days of reviews of the world's 36 cards, drawn from a seeded generator, with a mock, kernel
    runs and cards set aside: each state written as given, none computed by the code under test."""
    rng = random.Random(40)
    store = Store(data)
    ids = [f"{topic}-{i:02d}" for topic in TOPICS for i in range(CARDS_PER_TOPIC)]
    introduced: dict[str, dt.date] = {}
    states: dict[str, CardState] = {}
    try:
        for offset in range(HISTORY_DAYS, 0, -1):
            day = TODAY - dt.timedelta(days=offset)
            if rng.random() < 0.15:
                continue  # a day off
            for card_id in rng.sample(ids[: 12 + (HISTORY_DAYS - offset) // 2], rng.randint(3, 9)):
                introduced.setdefault(card_id, day)
                grade = rng.choice((1, 3, 4, 4, 5, 5))
                interval = rng.randint(1, 12)
                after = CardState(
                    card_id,
                    sm2=SM2State(rng.randint(0, 4), round(rng.uniform(1.3, 2.8), 2), interval),
                    due=day + dt.timedelta(days=interval),
                    lapses=rng.randint(0, 3),
                    leech=rng.random() < 0.05,
                    last_review_day=day,
                    repeat_pending=grade < 3 and offset == 1,
                    introduced_on=introduced[card_id],
                )
                at = dt.datetime.combine(day, dt.time(8 + rng.randint(0, 12), rng.randint(0, 59)))
                store.record_review(
                    states.get(card_id, CardState(card_id)),
                    after,
                    grade=grade,
                    at=at,
                    day=day,
                    duration_ms=rng.randint(5_000, 90_000),
                    mode=rng.choice(MODES),
                    topic=card_id.rsplit("-", 1)[0],
                )
                states[card_id] = after
        store.set_suspended(states[ids[0]], True)
        store.bury(states[ids[1]], TODAY + dt.timedelta(days=1))
        store.record_kernel_attempt(ids[2], "src", {"pct_of_ceiling": 71.5})
        store.record_kernel_attempt(ids[2], "src", {"error": "did not compile"})
        mock_id = store.start_mock(dt.datetime.combine(TODAY - dt.timedelta(days=3), dt.time(9)), 30, [])
        answer = {"position": 0, "topic": TOPICS[0], "kind": "concept", "budget_s": 300.0, "spent_s": 120.0}
        store.save_mock_answer(mock_id, ids[3], status="answered", score=0.6, **answer)
        store.finish_mock(
            mock_id, dt.datetime.combine(TODAY - dt.timedelta(days=3), dt.time(9, 30)), "finished", 0.6, {}
        )
    finally:
        store.close()


def stats(capsys: pytest.CaptureFixture[str], data: Path, *extra: str) -> str:
    code = main(["stats", "--data-dir", str(data), "--today", TODAY.isoformat(), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def kept(name: str, text: str) -> str:
    """The expected text of `name`; with DRILL_WRITE_EXPECTED set, `text` is written as it first."""
    path = EXPECTED / name
    if os.environ.get("DRILL_WRITE_EXPECTED"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


@pytest.fixture
def history(tmp_path, monkeypatch):
    data = make_world(tmp_path, monkeypatch)
    write_history(data)
    return data


@pytest.mark.parametrize("with_date", [False, True], ids=["no interview date", "an interview date set"])
def test_stats_prints_the_figures_it_printed_before(history, capsys, with_date):
    if with_date:
        config_path().write_text(f"interview_date = {DATE.isoformat()}\nminutes_per_day = 20\n", encoding="utf-8")
    suffix = "date" if with_date else "no_date"
    first = stats(capsys, history, "--json")
    again = stats(capsys, history, "--json")  # from what the first one kept (the replay, the day's plan)
    text = stats(capsys, history)
    assert json.loads(first) == json.loads(kept(f"stats_{suffix}.json", first))
    assert again == first
    assert text == kept(f"stats_{suffix}.txt", text)
    report = json.loads(first)
    assert report["reviews"] > 100 and report["calibration"]["reviews"] > 0
    assert (report["readiness"] is not None) == with_date
