"""One weakest-topics ranking: `drill stats`, `--weak`, the mock's setup and the mock's report name the same
topics in the same order for one log, and topics not practised yet come after the practised ones, by id."""

from __future__ import annotations

import datetime as dt
import json

from drill import paths
from drill.cli import main
from drill.mock.report import build_report
from drill.start import AppOptions
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State
from drill.study.standing import RANKING_RULE, UNSEEN_WEAKNESS, ranked_topics, weakest
from drill.study.standing import measured_weakness as measured
from drill.ui.app import make_app
from drill.ui.mock_setup import MockSetupScreen
from drill.workspace import Workspace, topic_titles
from tests.conftest import FixedClock, settle, type_keys

NOW = dt.datetime(2026, 11, 20, 12, 0)
YESTERDAY = NOW.date() - dt.timedelta(days=1)

# (topic, grades of its first cards): profiling failed twice (weaker than the prior), ddp and memory-accounting
# passed every review (stronger than the prior, 0.1275): practised topics all the same
LOG = (("profiling", (1, 2, 5)), ("ddp", (5, 5)), ("memory-accounting", (4, 5, 5, 5)))


def test_practised_topics_rank_first_weakest_first_then_the_rest_by_id():
    measured_scores = {"serving": 0.30, "ddp": 0.05, "moe": 0.30}
    assert ranked_topics(["zero", "ddp", "serving", "attention", "moe"], measured_scores) == [
        "moe",  # 0.30, ties by id
        "serving",
        "ddp",  # 0.05: practised and strong, still before any topic not practised yet
        "attention",
        "zero",
    ]
    assert ranked_topics(["b", "a"], {}) == ["a", "b"]


def _write_log(data):
    store = Store(data)
    cards = Workspace(data, [paths.cards_dir()]).cards
    for topic, grades in LOG:
        ids = sorted(cid for cid, card in cards.items() if card.topic == topic and card.kind != "kernel")
        for cid, grade in zip(ids, grades):
            ef = 2.5 if grade >= 4 else 1.7
            after = CardState(cid, sm2=SM2State(1, ef, 1), due=NOW.date(), introduced_on=YESTERDAY)
            after.last_review_day = YESTERDAY
            at = dt.datetime.combine(YESTERDAY, dt.time(10))
            store.record_review(CardState(cid), after, grade=grade, at=at, day=YESTERDAY, duration_ms=1, mode="review")
    store.close()


def _expected(data):
    figures = Workspace(data, [paths.cards_dir()]).weakness(NOW.date())
    return figures, [t.topic for t in figures]


async def test_stats_weak_the_mock_setup_and_the_mock_report_agree(tmp_path, capsys):
    data = tmp_path / "data"
    _write_log(data)
    figures, ranking = _expected(data)
    practised = [t.topic for t in figures if t.practised]
    assert practised == ranking[:3] and set(practised) == {topic for topic, _ in LOG}
    assert ranking[0] == "profiling"  # the one weaker than the prior
    strong = [t for t in figures if t.practised and t.weakness < UNSEEN_WEAKNESS]
    assert strong  # practised topics scoring below the prior still rank before the topics not practised
    assert ranking[3:] == sorted(ranking[3:])  # the topics not practised yet, by id

    # drill stats: JSON and text
    assert main(["--data-dir", str(data), "--today", NOW.date().isoformat(), "stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["weak_topics"] == ranking[:3]
    assert report["weakest_first"] == ranking
    assert report["ranking_rule"] == RANKING_RULE
    assert main(["--data-dir", str(data), "--today", NOW.date().isoformat(), "stats"]) == 0
    text = capsys.readouterr().out
    assert f"weakest: {', '.join(ranking[:3])}\n" in text
    assert RANKING_RULE in text
    rows = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in ranking]
    assert rows == ranking  # the table in the same order
    unseen_row = next(line for line in text.splitlines() if line.startswith(ranking[-1] + " "))
    assert unseen_row.split()[-1] == "-"  # no score shown for a topic not practised yet

    # --weak 4: the three practised topics, then the first topic not practised yet
    app = make_app(AppOptions(data, [paths.cards_dir()], clock=FixedClock(NOW), weak=4))
    assert list(app.start.focus_topics) == ranking[:4] == weakest(figures, 4)

    # the mock's setup: one mix per topic, in the ranking
    app = make_app(AppOptions(data, [paths.cards_dir()], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+o")
        await settle(pilot, pauses=2)
        assert isinstance(app.screen, MockSetupScreen)
        singles = [
            (label, topics[0]) for label, topics in app.screen.mixes if len(topics) == 1 and "track" not in label
        ]
    assert [topic for _, topic in singles] == ranking
    assert "not practised yet" in singles[-1][0] and "weakness" in singles[0][0]

    # the mock's report: with no answer scored, what to study next is the ranking's head
    cards = Workspace(data, [paths.cards_dir()]).cards
    mock = {"id": 1, "started_at": NOW.isoformat(), "minutes": 30, "status": "abandoned"}
    report = build_report(mock, [], cards, topic_titles(), measured(figures))
    assert [s["topic"] for s in report.study_next] == ranking[:3]
