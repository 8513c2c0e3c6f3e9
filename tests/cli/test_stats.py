import datetime as dt
import json
from dataclasses import asdict

import pytest

from drill.cards.model import Card
from drill.cli import main
from drill.store.store import Store
from drill.study.progress import render_text
from drill.study.records import CardState
from drill.study.session import study_day
from drill.study.sm2 import SM2State
from drill.workspace import collect


def reviewed(store, cid, grade, *, day, due, introduced=None):
    """Log one review of `cid` on `day` that leaves it due on `due`."""
    after = CardState(cid, sm2=SM2State(1, 2.5, 1), due=due, introduced_on=introduced or day, last_review_day=day)
    store.record_review(CardState(cid), after, grade=grade, at=dt.datetime.now(), day=day, duration_ms=1, mode="review")
    return after


def test_stats_json_counts(tmp_path, concept_deck, capsys):
    deck = concept_deck(6)
    data = tmp_path / "data"
    store = Store(data)
    today = dt.date.today() - dt.timedelta(days=1)
    for cid, grade in (("c00", 5), ("c01", 1), ("c01", 4)):
        reviewed(store, cid, grade, day=today, due=today, introduced=today - dt.timedelta(3))
    store.set_suspended(reviewed(store, "c02", 5, day=today, due=today), True)
    store.bury(reviewed(store, "c03", 5, day=today, due=today), dt.date.today() + dt.timedelta(days=2))
    store.bury(CardState("c04"), today - dt.timedelta(days=1))  # buried once, back by now
    store.close()
    assert main(["stats", "--json", "--data-dir", str(data), "--decks", str(deck)]) == 0
    report = json.loads(capsys.readouterr().out)
    bundled = report["cards"] - 6
    assert bundled >= 0
    assert report["reviews"] == 5
    assert report["due_today"] == 2  # c00 and c01: c02 is suspended, c03 buried
    assert report["suspended"] == 1 and report["buried"] == 1
    assert report["new_available"] == bundled + 2  # c04 (its bury is over) and c05
    topic = next(t for t in report["topics"] if t["topic"] == "gpu-arch")
    assert topic["reviews"] == 5 and abs(topic["retention"] - 4 / 5) < 1e-9
    # --weak's three: the one topic practised, then the first topics not practised yet, by id
    assert report["weak_topics"] == ["gpu-arch", *sorted(t for t in report["weakest_first"] if t != "gpu-arch")[:2]]
    assert [t["topic"] for t in report["topics"] if t["practised"]] == ["gpu-arch"]


# 02:00 on 10 May: still 9 May under the default 04:00 rollover, already 10 May under a 00:00 one.
NOW = dt.datetime(2026, 5, 10, 2, 0)
DAY = dt.date(2026, 5, 10)


def deck(n):
    return {
        f"c{i:02d}": Card(id=f"c{i:02d}", kind="concept", topic="gpu-arch", prompt="p", answer="a") for i in range(n)
    }


def test_saved_rollover_hour_decides_what_is_due_today(tmp_path):
    store = Store(tmp_path)
    reviewed(store, "c00", 5, day=DAY - dt.timedelta(days=1), due=DAY)
    cards = deck(3)

    default = collect(cards, store.data_dir, now=NOW)
    assert default.today.isoformat() == "2026-05-09" and default.day_starts_at == 4
    assert default.due_today == 0 and default.forecast_7d == {"2026-05-10": 1}
    assert len(default.forecast) == 30 and default.forecast[:2] == [
        {"date": "2026-05-09", "due": 0},
        {"date": "2026-05-10", "due": 1},
    ]

    store.set_setting("day_starts_at", "0")
    saved = collect(cards, store.data_dir, now=NOW)
    assert saved.today.isoformat() == "2026-05-10" and saved.day_starts_at == 0
    assert saved.due_today == 1 and saved.forecast_7d == {}
    assert saved.forecast[0] == {"date": "2026-05-10", "due": 1}

    assert collect(cards, store.data_dir, now=NOW, rollover_hour=4).due_today == 0  # an explicit hour wins
    store.close()


def test_a_bury_ends_with_the_study_day_the_saved_rollover_gives(tmp_path):
    store = Store(tmp_path)
    store.bury(CardState("c00"), DAY)  # hidden until the study day of 10 May
    assert collect(deck(2), store.data_dir, now=NOW).buried == 1
    store.set_setting("day_starts_at", "0")
    report = collect(deck(2), store.data_dir, now=NOW)
    assert report.buried == 0 and report.new_available == 2
    store.close()


def test_saved_new_per_day_and_order(tmp_path):
    store = Store(tmp_path)
    cards = deck(8)
    today = study_day(NOW)
    reviewed(store, "c00", 4, day=today, due=today + dt.timedelta(days=1))  # one new card already seen today
    assert collect(cards, store.data_dir, now=NOW).new_today == 9 - 2  # the default 10, capped by the 7 left
    store.set_setting("new_per_day", "3")
    store.set_setting("new_order", "random")
    report = collect(cards, store.data_dir, now=NOW)
    assert report.new_per_day == 3 and report.new_done_today == 1 and report.new_today == 2
    assert report.new_available == 7 and report.new_order == "random"
    store.set_setting("new_per_day", "0")
    assert collect(cards, store.data_dir, now=NOW).new_today == 0


@pytest.mark.parametrize(
    "key, value",
    [("new_per_day", "-4"), ("new_per_day", "lots"), ("day_starts_at", "25"), ("new_order", "alphabetical")],
)
def test_bad_saved_settings_fall_back_to_the_defaults(tmp_path, key, value):
    store = Store(tmp_path)
    store.set_setting(key, value)
    report = collect(deck(20), store.data_dir, now=NOW)
    assert (report.new_per_day, report.day_starts_at, report.new_order) == (10, 4, "lab")
    assert report.new_today == 10
    store.close()


def test_stats_command_reads_the_saved_rollover(tmp_path, concept_deck, capsys):
    store = Store(tmp_path)
    store.set_setting("day_starts_at", "0")
    store.set_setting("new_per_day", "2")
    store.close()
    before = dt.datetime.now()
    assert main(["stats", "--json", "--data-dir", str(tmp_path), "--decks", str(concept_deck(2))]) == 0
    after = dt.datetime.now()
    report = json.loads(capsys.readouterr().out)
    assert report["day_starts_at"] == 0 and report["new_today"] == 2
    assert report["today"] in {study_day(before, 0).isoformat(), study_day(after, 0).isoformat()}
    assert main(["--day-starts-at", "7", "stats", "--json", "--data-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["day_starts_at"] == 7  # a flag before `stats` wins for this report


def test_stats_text_reports_what_the_reviews_left(tmp_path):
    store = Store(tmp_path)
    today = study_day(NOW)
    cards = deck(5)
    for cid, grade, due in (
        ("c00", 2, today),
        ("c01", 5, today + dt.timedelta(days=3)),
        ("c02", 4, today + dt.timedelta(days=3)),
    ):
        reviewed(store, cid, grade, day=today - dt.timedelta(days=1), due=due)
    store.bury(CardState("c03"), today + dt.timedelta(days=1))
    text = render_text(collect(cards, store.data_dir, now=NOW))
    store.close()
    lines = text.splitlines()
    assert lines[0] == "drill: 5 cards, 3 reviews logged, a 1-day streak"  # reviewed yesterday, not yet today
    assert lines[1] == "study day 2026-05-09 (rolls over at 04:00)"
    assert lines[2] == "due today: 1, plus 1 new (1 not yet seen; new cards in lab order)"
    assert lines[3] == "set aside: 0 suspended, 1 buried until tomorrow"
    assert lines[4] == "next 7 days: 05-12:2"
    row = next(line for line in lines if line.startswith("gpu-arch")).split()
    # 3 reviews in 30 days, 2 passed: retention pulled toward 0.85 by 10 prior reviews -> weakness 0.15
    assert row == ["gpu-arch", "5", "3", "67%", "0", "3", "0.15"]
    assert lines[-2] == "weakest: gpu-arch"  # the only topic; no other is left to name
    assert lines[-1] == "ranking: the topics practised, weakest first; then those not practised yet, by id (weakness -)"


def test_stats_text_with_no_reviews(tmp_path, concept_deck, capsys):
    assert main(["stats", "--data-dir", str(tmp_path), "--decks", str(concept_deck(2))]) == 0
    out = capsys.readouterr().out
    assert "0 reviews logged" in out
    assert "weakest: no topic practised yet (--weak starts with capacity-cost, collectives, compilers)" in out
    assert "set aside" not in out and "next 7 days" not in out


def test_the_report_is_a_record_and_its_json_form_is_what_stats_json_prints(tmp_path):
    store = Store(tmp_path)
    reviewed(store, "c00", 2, day=DAY - dt.timedelta(days=1), due=DAY)
    store.close()
    report = collect(deck(3), tmp_path, now=NOW)
    assert report.today == dt.date(2026, 5, 9) and report.topics[0].topic == "gpu-arch"
    data = json.loads(json.dumps(report.as_json()))  # every value is plain JSON
    assert data["today"] == "2026-05-09" and data["cards"] == 3 and data["reviews"] == 1
    assert data["topics"] == [asdict(t) for t in report.topics]
    assert data["topics"][0]["reviews"] == 1 and data["topics"][0]["practised"] is True
    assert list(data)[-2:] == ["kernels", "kernels_untimed"]
