"""With an interview date set, the daily queue follows the plan: its new cards, and early reviews in the last days."""

import datetime as dt
import json
import random
import sqlite3

import pytest

from drill import paths
from drill.cli import main
from drill.config.settings import load_settings
from drill.store.reader import database_path, read_log
from drill.study.forecast import replay
from drill.study.plan_runs import EARLY_REVIEW_DAYS
from drill.workspace import Workspace
from tests.readiness_world import START, at, make_world, study

TODAY = START + dt.timedelta(days=3)
DATE = START + dt.timedelta(days=12)


@pytest.fixture
def world(tmp_path, monkeypatch, capsys):
    data = make_world(tmp_path, monkeypatch)
    rng = random.Random(1)
    for offset in range(3):  # 30 of the 36 cards introduced, 10 a day
        study(data, START + dt.timedelta(days=offset), rng)
    assert main(["plan", "--data-dir", str(data), "--date", DATE.isoformat(), "--today", TODAY.isoformat()]) == 0
    capsys.readouterr()
    return data


def workspace(data):
    return Workspace(data, [paths.cards_dir()], settings=load_settings())


def test_the_plans_new_cards_are_todays_new_cards_and_a_restart_keeps_them(world):
    space = workspace(world)
    figures = space.readiness(TODAY)
    planned = list(figures.new_today)
    assert planned  # 36 cards, 30 introduced by 10 a day: the plan deals the rest
    session = space.review_session(TODAY, new_per_day=10)
    new = [cid for cid in session.queue if space.states().get(cid) is None]
    assert new == planned != []
    assert len(new) != 10  # new_per_day gives way to the plan
    store = space.store()
    session.grade(store, 4, now=at(TODAY))  # the day goes on: a restart shows what is left of the same plan
    graded = session.history[-1].card_id
    space.close()
    again = workspace(world)
    queue = again.review_session(TODAY).queue
    assert [cid for cid in queue if again.states().get(cid) is None] == [cid for cid in planned if cid != graded]
    again.close()


def test_without_a_date_the_queue_is_as_before(world, capsys):
    assert main(["plan", "--clear"]) == 0
    space = workspace(world)
    session = space.review_session(TODAY, new_per_day=2)
    assert len([cid for cid in session.queue if space.states().get(cid) is None]) == 2
    assert session.early == frozenset()
    space.close()


def days_to_the_date(world):
    """Each day from the third of the world's study to the one before the date: the day, a workspace open on the
    world (the test closes it), its card states and its readiness figures."""
    for offset in range(3, 12):
        day = START + dt.timedelta(days=offset)
        space = workspace(world)
        states = space.states()
        yield day, space, states, space.readiness(day, states=states)


def test_early_reviews_come_up_in_the_last_days_and_are_logged_as_such(world):
    rng = random.Random(2)
    early_days = {}
    for day, space, states, figures in days_to_the_date(world):
        session = space.review_session(day, states=dict(states))
        assert session.early == set(figures.early_today)
        for card_id in session.early:  # brought up although not due
            assert states[card_id].due > day
        space.close()
        modes = study(world, day, rng)
        early_days[day] = sorted(cid for cid, mode in modes.items() if mode == "early")
        assert early_days[day] == sorted(session.early)
    first_early_day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)
    assert all(not cards for day, cards in early_days.items() if day < first_early_day)
    assert any(cards for day, cards in early_days.items() if day >= first_early_day)
    log = read_log(world)
    early = [row for row in log if row.mode == "early"]
    assert len(early) == sum(len(cards) for cards in early_days.values())
    # fed to FSRS as real reviews on the day they happened
    scheduled = {row.id for row in replay(log).scheduled}
    assert all(row.id in scheduled for row in early)
    # counted for retention: the day's scheduled reviews include them (only cram is left out)
    with sqlite3.connect(database_path(world)) as conn:
        for day in {row.day for row in early}:
            reviews, scheduled_count = conn.execute(
                "SELECT reviews, scheduled FROM review_day WHERE day = ?", (day.isoformat(),)
            ).fetchone()
            assert reviews == scheduled_count


def test_the_queue_serves_the_plans_top_up_cards_and_logs_them_as_early(world, capsys):
    """In the last days the minutes nothing else wants bring up cards not due: the queue serves the plan's, and
    `drill plan` says how many."""
    rng = random.Random(3)
    topped = {}
    for day, space, states, figures in days_to_the_date(world):
        top_up = figures.plan.today_cards.top_up
        if top_up and not any(topped.values()):  # the first day with a top-up: the plan's text says it
            assert main(["plan", "--data-dir", str(world), "--today", day.isoformat()]) == 0
            noun = "card" if len(top_up) == 1 else "cards"
            assert f"{len(top_up)} {noun} not yet due top up the minutes left" in capsys.readouterr().out
        session = space.review_session(day, states=dict(states))
        assert [cid for cid in session.queue if cid in top_up] == list(top_up)  # all of them, in the plan's order
        assert set(top_up) <= session.early
        for card_id in top_up:  # not due, and not asked today or yesterday
            assert states[card_id].due > day and states[card_id].last_review_day < day - dt.timedelta(days=1)
        space.close()
        modes = study(world, day, rng)
        assert all(modes[card_id] == "early" for card_id in top_up)
        topped[day] = top_up
    first_top_up_day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)
    assert all(not cards for day, cards in topped.items() if day < first_top_up_day)
    assert sum(len(cards) for day, cards in topped.items() if day >= first_top_up_day) >= 5


def test_stats_json_counts_the_plans_new_cards(world, capsys):
    assert main(["stats", "--json", "--data-dir", str(world), "--today", TODAY.isoformat()]) == 0
    report = json.loads(capsys.readouterr().out)
    space = workspace(world)
    assert report["new_today"] == len(space.readiness(TODAY).new_today)
    space.close()


def test_a_new_users_plan_says_the_new_cards_and_reviews_the_queue_then_serves(tmp_path, monkeypatch, capsys):
    """After a first day of 10 new cards over every topic, the plan is set for one track in 20 minutes a day.

    The plan's "Today" counts what the queue serves: its new cards and every due review, the other
    topics' ones too (the queue serves them), within the minutes given; the learner then answers the
    whole queue and exactly that many cards are introduced and reviewed.
    """
    data = make_world(tmp_path, monkeypatch)
    rng = random.Random(5)
    study(data, START, rng)  # no date yet: 10 new cards, in lab order over the three topics
    day = START + dt.timedelta(days=1)
    date = START + dt.timedelta(days=15)
    args = ["--data-dir", str(data), "--today", day.isoformat()]
    plan_args = ["plan", *args, "--date", date.isoformat(), "--track", "kernels", "--minutes", "20"]
    assert main(plan_args) == 0
    printed = capsys.readouterr().out
    assert main([*plan_args, "--json"]) == 0
    today = json.loads(capsys.readouterr().out)["plan"]["today"]
    assert f"{today['new']:>3} new, {today['reviews']:>3} reviews" in printed
    earlier = {row.card_id for row in read_log(data)}
    off_track_due = [cid for cid in earlier if cid.startswith("serving")]  # SM-2: due the next day
    assert off_track_due and today["new"] > 0
    modes = study(data, day, rng)
    introduced = [cid for cid in modes if cid not in earlier]
    reviewed = [cid for cid in modes if cid in earlier]
    assert len(introduced) == today["new"]
    assert len(reviewed) == today["reviews"]
    assert set(off_track_due) <= set(reviewed)
    assert sum(row.duration_ms for row in read_log(data) if row.day == day) <= 20 * 60 * 1000
