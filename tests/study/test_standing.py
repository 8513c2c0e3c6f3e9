"""Weakness, retention, streak, forecast and heatmap as pure functions over what the store read."""

import datetime as dt
import json
import sqlite3

from drill.cards.model import Card
from drill.store.reader import DB_NAME, read_progress
from drill.store.store import Store
from drill.study.records import CardFigures, CardState, ProgressRows
from drill.study.standing import forecast, heatmap, retention_trend, streak, topic_figures, weakness

TODAY = dt.date(2026, 11, 23)


def figures(reviews=1, lapses=0, ef=2.5, due=None, suspended=False):
    return CardFigures(reviews, lapses, ef, 1, due, suspended, False, None)


def test_no_evidence_sits_at_the_prior():
    assert weakness(0, 0, None, 0) == 0.1275


def test_the_docstring_examples():
    assert weakness(2, 0, 2.5, 2) == 0.2125
    assert weakness(40, 24, 2.5, 20) == 0.2475


def test_two_failed_reviews_rank_below_forty_reviews_at_sixty_percent():
    lucky = weakness(2, 0, 2.5, 2)
    evidenced = weakness(40, 24, 2.5, 20)
    assert lucky < evidenced
    assert weakness(40, 40, 2.5, 20) < weakness(0, 0, None, 0) < lucky  # all passed is stronger than unseen


def test_weakness_grows_with_a_poor_mock_and_a_low_ease():
    base = weakness(20, 15, 2.5, 10)
    assert weakness(20, 15, 2.5, 10, last_mock=0.2, mock_questions=3) > base
    assert weakness(20, 15, 1.3, 10) > base
    assert weakness(20, 15, 2.5, 10, last_mock=1.0, mock_questions=3) < base


def card(cid, topic, kind="concept", **fields):
    return Card(id=cid, kind=kind, topic=topic, prompt="p", answer="a", fields=fields)


def test_topic_figures_sum_cards_and_rank_weakest_first():
    cards = {
        c.id: c for c in [card("a1", "a"), card("a2", "a"), card("b1", "b"), card("k", "b", "kernel", target_pct=80)]
    }
    rows = ProgressRows(
        cards={"a1": figures(30, 4, 1.6, "2026-11-25"), "a2": figures(10, 1, 2.0, "2026-12-30"), "b1": figures(5)},
        recent={"a1": (30, 12), "a2": (10, 5), "b1": (5, 5)},
        last_mock_by_topic={"b": (2, 0.5, 2)},
        kernel_pcts={"k": [40.0, 72.0, 60.0]},
    )
    a, b = topic_figures(cards, rows, TODAY, {"a": "Topic A"})
    assert (a.topic, a.title, a.cards, a.reviews, a.lapses, a.due_7d) == ("a", "Topic A", 2, 40, 5, 1)
    assert a.retention == 17 / 40 and a.mean_ease == 1.8
    assert b.last_mock == 0.5 and b.kernel_best_pct_of_target == 90.0  # 72 % of the ceiling against a target of 80
    assert a.weakness > b.weakness


def test_forecast_counts_overdue_today_and_skips_suspended():
    rows = ProgressRows(
        cards={
            "x": figures(due="2026-11-01"),
            "y": figures(due="2026-11-24"),
            "z": figures(due="2026-11-24", suspended=True),
            "w": figures(due="2027-03-01"),
        }
    )
    days = forecast(rows, TODAY)
    assert len(days) == 30 and days[0] == {"date": "2026-11-23", "due": 1}
    assert days[1]["due"] == 1 and sum(d["due"] for d in days) == 2


def test_streak_ends_today_or_yesterday_and_reaches_past_the_window():
    rows = ProgressRows(days={"2026-11-22": (3, 3, 2), "2026-11-21": (1, 1, 1), "2026-11-19": (5, 5, 5)})
    assert streak(rows, TODAY) == 2  # none yet today: the run up to yesterday still counts
    rows.days["2026-11-23"] = (1, 1, 1)
    assert streak(rows, TODAY) == 3
    assert streak(rows, TODAY + dt.timedelta(days=2)) == 0
    long = ProgressRows(days={"2026-11-23": (1, 1, 1)}, earlier_days=["2026-11-22", "2026-11-21"])
    assert streak(long, TODAY) == 3


def test_retention_trend_by_week_leaves_out_cram():
    rows = ProgressRows(days={"2026-11-23": (10, 4, 3), "2026-11-10": (2, 2, 0)})
    trend = retention_trend(rows, TODAY, weeks=3)
    assert [w["week_start"] for w in trend] == ["2026-11-03", "2026-11-10", "2026-11-17"]
    assert trend[0]["retention"] is None and trend[1]["retention"] == 0.0 and trend[2]["retention"] == 0.75
    assert heatmap(rows) == {"2026-11-10": 2, "2026-11-23": 10}


def test_read_progress_from_a_real_store(tmp_path):
    store = Store(tmp_path)
    for day, grade, mode in (
        (TODAY, 5, "review"),
        (TODAY, 1, "review"),
        (TODAY, 0, "cram"),
        (TODAY - dt.timedelta(40), 5, "review"),
    ):
        store.record_review(
            CardState("c"), CardState("c"), grade=grade, at=dt.datetime(2026, 11, 23), day=day, duration_ms=1, mode=mode
        )
    store.record_kernel_attempt("k", "src", {"pct_of_ceiling": 55.5})
    store.record_kernel_attempt("k", "src", {"verdict": "wrong"})
    mock = store.start_mock(dt.datetime(2026, 11, 22, 9), 45, [])
    store.save_mock_answer(
        mock, "c", position=1, topic="t", kind="concept", budget_s=60, spent_s=30, status="answered", score=0.5
    )
    # shown, but the time ran out on it: it counts as 0
    store.save_mock_answer(
        mock, "d", position=2, topic="t", kind="concept", budget_s=60, spent_s=40, status="unanswered"
    )
    # the planned question a follow-up took the place of: never asked, so it counts for nothing
    store.save_mock_answer(mock, "e", position=3, topic="t", kind="concept", budget_s=60, status="pending")
    # the mock ended before this one came up: not reached, so it says nothing about its topic
    store.save_mock_answer(mock, "f", position=4, topic="u", kind="concept", budget_s=60, status="unanswered")
    store.finish_mock(mock, dt.datetime(2026, 11, 22, 10), "time_up", 0.25, None)
    store.close()
    rows = read_progress(tmp_path, TODAY)
    assert rows.total_reviews == 4 and rows.cards["c"].reviews == 4
    assert rows.recent == {"c": (2, 1)}  # cram and the review 40 days ago are left out
    assert rows.days[TODAY.isoformat()] == (3, 2, 1)
    assert rows.kernel_pcts == {"k": [55.5]}
    assert rows.kernel_untimed == {"k": 1}  # the wrong run has no figure, but it was a run
    assert rows.mocks == [(mock, "2026-11-22T09:00:00", "time_up", 0.25, 45)]
    assert rows.last_mock_by_topic == {"t": (mock, 0.25, 2)}  # an unanswered question scores 0; u was not reached


def test_a_mock_with_no_answered_question_is_listed_as_abandoned_and_is_no_evidence(tmp_path):
    store = Store(tmp_path)
    scored = store.start_mock(dt.datetime(2026, 11, 21, 9), 30, [])
    store.save_mock_answer(
        scored, "a", position=1, topic="t", kind="concept", budget_s=60, status="answered", score=1.0
    )
    store.finish_mock(scored, dt.datetime(2026, 11, 21, 9, 30), "finished", 1.0, None)
    for status in ("quit", "abandoned"):  # "quit" with 0 %: how such a mock was written before it was abandoned
        empty = store.start_mock(dt.datetime(2026, 11, 22, 9), 30, [])
        store.save_mock_answer(empty, "a", position=1, topic="t", kind="concept", budget_s=60, status="unanswered")
        store.save_mock_answer(empty, "b", position=2, topic="u", kind="concept", budget_s=60, status="unanswered")
        store.finish_mock(empty, dt.datetime(2026, 11, 22, 9, 1), status, 0.0, None)
    store.close()
    rows = read_progress(tmp_path, TODAY)
    assert [(status, score) for _, _, status, score, _ in rows.mocks] == [
        ("abandoned", None),
        ("abandoned", None),
        ("finished", 1.0),
    ]
    assert rows.last_mock_by_topic == {"t": (scored, 1.0, 1)}  # the scored mock still speaks for t; u never asked


def test_undo_takes_back_the_review_count(tmp_path):
    store = Store(tmp_path)
    log = store.record_review(
        CardState("c"), CardState("c"), grade=4, at=dt.datetime(2026, 11, 23), day=TODAY, duration_ms=1, mode="review"
    )
    store.undo_review(log)
    store.close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("SELECT reviews FROM card_state WHERE card_id='c'").fetchone() == (0,)
    conn.close()
    rows = read_progress(tmp_path, TODAY)
    assert json.dumps(rows.recent) == "{}" and rows.days == {}  # the day's count went back too


def test_reviews_logged_with_their_topic_are_counted_by_topic_and_undone(tmp_path):
    store = Store(tmp_path)
    at = dt.datetime(2026, 11, 23)
    for grade, mode in ((5, "review"), (2, "review"), (5, "cram")):
        store.record_review(
            CardState("c"), CardState("c"), grade=grade, at=at, day=TODAY, duration_ms=1, mode=mode, topic="moe"
        )
    last = store.record_review(
        CardState("d"), CardState("d"), grade=4, at=at, day=TODAY, duration_ms=1, mode="mock", topic="moe"
    )
    rows = read_progress(tmp_path, TODAY)
    assert rows.recent_by_topic == {"moe": (3, 2)} and rows.recent == {}  # cram left out
    store.undo_review(last)
    store.close()
    assert read_progress(tmp_path, TODAY).recent_by_topic == {"moe": (2, 1)}
    cards = {"c": card("c", "moe"), "d": card("d", "moe")}
    (moe,) = topic_figures(cards, read_progress(tmp_path, TODAY), TODAY)
    assert (moe.reviews_30d, moe.retention) == (2, 0.5)
