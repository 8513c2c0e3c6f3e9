import datetime as dt

import pytest

from drill.cards.model import Card
from drill.session import ReviewSession, build_queue, study_day
from drill.sm2 import SM2State
from drill.store.records import CardState
from drill.store.store import Store

TODAY = dt.date(2026, 5, 10)


def cards(n):
    return [Card(id=f"c{i:02d}", kind="concept", topic="gpu-arch", prompt="p", answer="a") for i in range(n)]


def state(cid, due, **kw):
    return CardState(cid, sm2=SM2State(2, 2.5, 6, due), introduced_on=TODAY - dt.timedelta(30), **kw)


@pytest.mark.parametrize(
    "now, hour, day",
    [
        (dt.datetime(2026, 5, 10, 3, 59), 4, dt.date(2026, 5, 9)),
        (dt.datetime(2026, 5, 10, 4, 0), 4, dt.date(2026, 5, 10)),
        (dt.datetime(2026, 5, 10, 0, 30), 0, dt.date(2026, 5, 10)),
        (dt.datetime(2026, 5, 10, 23, 0), 6, dt.date(2026, 5, 10)),
    ],
)
def test_study_day_rolls_over_at_the_configured_hour(now, hour, day):
    assert study_day(now, hour) == day


def test_due_first_oldest_first_then_new_up_to_limit():
    cs = cards(20)
    states = {
        "c05": state("c05", TODAY),
        "c03": state("c03", TODAY - dt.timedelta(3)),
        "c07": state("c07", TODAY + dt.timedelta(1)),  # not due
        "c09": state("c09", TODAY - dt.timedelta(1), suspended=True),
        "c11": state("c11", TODAY - dt.timedelta(1), buried_until=TODAY + dt.timedelta(1)),
    }
    q = build_queue(cs, states, TODAY, new_limit=4, new_done_today=1)
    assert q == ["c03", "c05", "c00", "c01", "c02"]


def test_new_limit_already_used_up():
    assert build_queue(cards(5), {}, TODAY, new_limit=3, new_done_today=3) == []


def test_buried_card_returns_the_next_day():
    states = {"c00": state("c00", TODAY, buried_until=TODAY + dt.timedelta(1))}
    assert build_queue(cards(1), states, TODAY, new_limit=0) == []
    assert build_queue(cards(1), states, TODAY + dt.timedelta(1), new_limit=0) == ["c00"]


def make_session(tmp_path, n=6):
    cs = {c.id: c for c in cards(n)}
    store = Store(tmp_path)
    q = build_queue(cs.values(), {}, TODAY, new_limit=n)
    return ReviewSession(cards=cs, states={}, queue=q, today=TODAY), store


NOW = dt.datetime(2026, 5, 10, 12)


def test_low_grade_comes_back_same_day_without_a_second_sm2_review(tmp_path):
    session, store = make_session(tmp_path)
    g = session.grade(store, 2, now=NOW)
    assert g.repeat_scheduled and session.queue.index("c00") == 3
    assert g.after.sm2 == SM2State(0, 2.18, 1, TODAY + dt.timedelta(1))
    for _ in range(3):
        session.grade(store, 5, now=NOW)
    assert session.current.id == "c00"
    again = session.grade(store, 3, now=NOW)  # still below 4: comes back again
    assert again.mode == "repeat" and again.after.sm2 == g.after.sm2 and again.repeat_scheduled
    while session.current.id != "c00":
        session.grade(store, 5, now=NOW)
    final = session.grade(store, 4, now=NOW)
    assert final.mode == "repeat" and not final.repeat_scheduled and final.after.sm2 == g.after.sm2
    modes = [r.mode for r in store.reviews("c00")]
    assert modes == ["review", "repeat", "repeat"]


def test_repeat_survives_a_restart(tmp_path):
    session, store = make_session(tmp_path)
    session.grade(store, 1, now=NOW)
    states = store.states()
    q = build_queue(session.cards.values(), states, TODAY, new_limit=6, new_done_today=1)
    assert q[0] == "c00"


def test_undo_puts_the_card_back_first(tmp_path):
    session, store = make_session(tmp_path)
    session.grade(store, 5, now=NOW)
    session.grade(store, 1, now=NOW)
    assert session.done == 1 and "c01" in session.queue[1:]
    session.undo(store)
    assert session.queue[0] == "c01" and session.queue.count("c01") == 1
    session.undo(store)
    assert session.queue[:2] == ["c00", "c01"] and session.done == 0
    assert store.review_count() == 0 and store.states()["c00"].sm2 == SM2State()
    assert session.undo(store) is None


def test_lapses_flag_a_leech_at_eight(tmp_path):
    session, store = make_session(tmp_path, 1)
    st = CardState("c00", sm2=SM2State(3, 1.3, 10, TODAY), lapses=7, introduced_on=TODAY - dt.timedelta(90))
    session.states["c00"] = st
    g = session.grade(store, 1, now=NOW)
    assert g.after.lapses == 8 and g.after.leech
    assert store.states()["c00"].leech


def test_suspend_and_bury_are_stored(tmp_path):
    session, store = make_session(tmp_path, 3)
    assert session.suspend(store) == "c00"
    assert session.bury(store) == "c01"
    states = store.states()
    assert states["c00"].suspended and states["c01"].buried_until == TODAY + dt.timedelta(1)
    assert build_queue(session.cards.values(), states, TODAY, new_limit=10) == ["c02"]
