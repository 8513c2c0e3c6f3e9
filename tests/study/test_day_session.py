"""Today's session decided from records handed in: one card, some topics, the plan's day or the day's queue;
nothing is read from the store."""

import datetime as dt

from drill.study.day_session import PlannedDay, SessionAsked, day_session, follows_plan
from drill.workspace import Workspace
from tests.test_start import TWO_TOPICS as DECK

DAY = dt.date(2026, 5, 10)


def _cards(tmp_path, write_deck):
    return Workspace(tmp_path / "nothing-read", [write_deck(DECK)]).cards


def test_the_day_follows_the_plan_handed_in(tmp_path, write_deck):
    cards = _cards(tmp_path, write_deck)
    planned = PlannedDay(["serve-1", "arch-2"], ("arch-2",), 600.0)
    session = day_session(cards, {}, DAY, SessionAsked(), planned=planned, graded_today={"serve-1": 1})
    assert session.queue == ["serve-1", "arch-2"]
    assert session.early == frozenset({"arch-2"})
    assert session.budget_seconds == 600.0
    assert session.graded_today == {"serve-1": 1}
    assert not (tmp_path / "nothing-read" / "drill.sqlite3").exists()  # nothing was read of, or made in, a store


def test_one_card_or_some_topics_pass_the_plan_by(tmp_path, write_deck):
    cards = _cards(tmp_path, write_deck)
    planned = PlannedDay(["serve-1"], (), 600.0)
    one = day_session(cards, {}, DAY, SessionAsked(card_id="arch-1"), planned=planned, graded_today={})
    assert one.queue == ["arch-1"]
    assert one.budget_seconds is None
    asked = SessionAsked(topics=("gpu-arch",), focused=True)
    topic = day_session(cards, {}, DAY, asked, planned=planned, graded_today={})
    assert set(topic.queue) == {"arch-1", "arch-2"}
    assert topic.topics == ("gpu-arch",)


def test_without_a_plan_the_day_takes_new_cards_up_to_the_limit(tmp_path, write_deck):
    cards = _cards(tmp_path, write_deck)
    session = day_session(cards, {}, DAY, SessionAsked(new_per_day=2), planned=None, graded_today={})
    assert len(session.queue) == 2
    again = day_session(cards, {}, DAY, SessionAsked(new_per_day=2), planned=None, graded_today={})
    assert again.queue == session.queue  # seeded with the day: a restart shows the same new cards


def test_only_the_day_queue_follows_a_plan():
    assert follows_plan(None, focused=False, cram=False)
    assert not follows_plan("arch-1", focused=False, cram=False)
    assert not follows_plan(None, focused=True, cram=False)
    assert not follows_plan(None, focused=False, cram=True)
