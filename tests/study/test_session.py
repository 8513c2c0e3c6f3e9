import datetime as dt

import pytest

from drill.cards.model import Card
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.session import ReviewSession, build_queue, study_day
from drill.study.sm2 import SM2State

TODAY = dt.date(2026, 5, 10)


def cards(n):
    return [Card(id=f"c{i:02d}", kind="concept", topic="gpu-arch", prompt="p", answer="a") for i in range(n)]


def state(cid, due, **kw):
    return CardState(cid, sm2=SM2State(2, 2.5, 6), due=due, introduced_on=TODAY - dt.timedelta(30), **kw)


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
    assert (g.after.sm2, g.after.due) == (
        SM2State(0, 2.5, 1),
        TODAY + dt.timedelta(1),
    )  # a lapse keeps the ease (SM-2 as published)
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


def test_a_budget_holds_back_the_rest_of_the_queue_once_the_minutes_are_spent(tmp_path):
    session, store = make_session(tmp_path)
    session.budget_seconds = 150.0
    session.grade(store, 5, now=NOW, duration_ms=60_000)
    session.grade(store, 5, now=NOW, duration_ms=60_000)
    assert session.left == 4 and not session.budget_reached
    session.grade(store, 5, now=NOW, duration_ms=45_000)  # 165 s: the day's minutes are spent
    assert session.budget_reached and session.current is None
    assert session.held_back == ["c03", "c04", "c05"]
    session.undo(store)  # the last grade taken back: its seconds too, and the rest comes back
    assert not session.budget_reached and session.queue == ["c02", "c03", "c04", "c05"]
    assert session.held_back == []


def test_without_a_budget_the_queue_is_served_whole(tmp_path):
    session, store = make_session(tmp_path)
    while session.current is not None:
        session.grade(store, 5, now=NOW, duration_ms=600_000)
    assert session.done == 6 and session.held_back == []


def test_lapses_flag_a_leech_at_eight(tmp_path):
    session, store = make_session(tmp_path, 1)
    st = CardState("c00", sm2=SM2State(3, 1.3, 10), due=TODAY, lapses=7, introduced_on=TODAY - dt.timedelta(90))
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


# New-card order ------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled_cards():
    from drill.cards.loader import load_decks

    return load_decks().cards


def lab_of(card):
    from drill.cards.loader import known_topics

    return known_topics()[card.topic].get("lab")


def test_lab_order_starts_with_the_labs_in_turn(bundled_cards):
    q = build_queue(bundled_cards.values(), {}, TODAY, new_limit=10, new_order="lab")
    labs = [lab_of(bundled_cards[cid]) for cid in q]
    assert len(q) == 10
    assert labs == list(range(1, 11)), [(cid, bundled_cards[cid].topic) for cid in q]
    assert len(set(labs)) >= 5


def test_lab_order_is_the_default(bundled_cards):
    assert build_queue(bundled_cards.values(), {}, TODAY) == build_queue(
        bundled_cards.values(), {}, TODAY, new_order="lab"
    )


def test_lab_order_keeps_deck_order_within_a_topic_and_puts_unlabbed_topics_last():
    def card(cid, topic):
        return Card(id=cid, kind="concept", topic=topic, prompt="p", answer="a")

    cs = [
        card("g1", "gpu-arch"),  # no lab
        card("g2", "gpu-arch"),
        card("d1", "ddp"),  # lab 3
        card("m1", "memory-accounting"),  # lab 1
        card("c1", "collectives"),  # no lab, after gpu-arch in the topic list
        card("d2", "ddp"),
        card("m2", "memory-accounting"),
        card("m3", "memory-accounting"),
    ]
    q = build_queue(cs, {}, TODAY, new_limit=100, new_order="lab")
    assert q == ["m1", "d1", "g1", "c1", "m2", "d2", "g2", "m3"]


def test_every_new_card_is_introduced_exactly_once_in_each_order(bundled_cards):
    from drill.study.session import MOCK_ONLY_KINDS

    everything = sorted(cid for cid, card in bundled_cards.items() if card.kind not in MOCK_ONLY_KINDS)
    for order in ("lab", "random", "deck"):
        q = build_queue(bundled_cards.values(), {}, TODAY, new_limit=10**6, new_order=order, seed=3)
        assert sorted(q) == everything, order


def test_deck_order_is_the_order_cards_come_in(bundled_cards):
    q = build_queue(bundled_cards.values(), {}, TODAY, new_limit=10, new_order="deck")
    assert q == list(bundled_cards)[:10]
    assert build_queue(cards(8), {}, TODAY, new_limit=5, new_order="deck") == ["c00", "c01", "c02", "c03", "c04"]


def test_random_order_is_fixed_by_the_seed(bundled_cards):
    def draw(seed):
        return build_queue(bundled_cards.values(), {}, TODAY, new_limit=10, new_order="random", seed=seed)

    first = draw(20260510)
    assert draw(20260510) == first  # a restart the same day shows the same new cards
    assert draw(20260511) != first
    assert first != list(bundled_cards)[:10]


def test_random_order_keeps_its_draw_when_a_deck_gains_a_card():
    cs = cards(30)
    before = build_queue(cs, {}, TODAY, new_limit=100, new_order="random", seed=7)
    extra = Card(id="zz-new", kind="concept", topic="gpu-arch", prompt="p", answer="a")
    after = build_queue([*cs, extra], {}, TODAY, new_limit=100, new_order="random", seed=7)
    assert [cid for cid in after if cid != "zz-new"] == before


@pytest.mark.parametrize("order", ["lab", "random", "deck"])
def test_new_orders_skip_suspended_and_buried_cards_and_keep_due_first(bundled_cards, order):
    ids = build_queue(bundled_cards.values(), {}, TODAY, new_limit=3, new_order=order, seed=1)
    due_id = next(cid for cid in reversed(list(bundled_cards)) if cid not in ids)
    states = {
        ids[0]: CardState(ids[0], suspended=True),
        ids[1]: CardState(ids[1], buried_until=TODAY + dt.timedelta(1)),
        due_id: state(due_id, TODAY - dt.timedelta(2)),
    }
    q = build_queue(bundled_cards.values(), states, TODAY, new_limit=3, new_order=order, seed=1)
    assert q[0] == due_id and len(q) == 4
    assert ids[0] not in q and ids[1] not in q and ids[2] in q


def test_unknown_new_order_is_refused():
    with pytest.raises(ValueError, match="unknown new-card order"):
        build_queue(cards(2), {}, TODAY, new_order="alphabetical")


def test_focused_queue_keeps_to_the_topics_and_cram_takes_every_card_hardest_first():
    import datetime as dt

    from drill.cards.model import Card
    from drill.study.focus import focused_queue
    from drill.study.records import CardState
    from drill.study.sm2 import SM2State

    today = dt.date(2026, 11, 23)
    cards = [Card(id=f"{t}{i}", kind="concept", topic=t, prompt="p", answer="a") for t in ("a", "b") for i in range(3)]
    later = today + dt.timedelta(days=9)
    states = {
        "a0": CardState("a0", sm2=SM2State(2, 2.5, 6), due=later, introduced_on=today),
        "a1": CardState("a1", sm2=SM2State(1, 1.7, 1), due=today, lapses=3, introduced_on=today),
        "b0": CardState("b0", sm2=SM2State(1, 2.5, 1), due=today, introduced_on=today),
        "a2": CardState("a2", suspended=True, introduced_on=today),
    }
    assert focused_queue(cards, states, today, ["a"], focus_new=5) == ["a1"]  # a0 is not due, a2 suspended
    assert focused_queue(cards, states, today, ["a"], cram=True) == ["a1", "a0"]
    assert focused_queue(cards, states, today, [], cram=True) == ["a1", "b0", "a0", "b1", "b2"]  # b0 is due sooner


@pytest.mark.parametrize("order", ["lab", "random", "deck"])
def test_a_restart_mid_day_keeps_the_days_plan_of_new_cards(bundled_cards, order):
    planned = build_queue(bundled_cards.values(), {}, TODAY, new_limit=10, new_order=order, seed=TODAY.toordinal())
    graded = {
        cid: CardState(cid, sm2=SM2State(1, 2.5, 1), due=TODAY + dt.timedelta(1), introduced_on=TODAY)
        for cid in planned[:9]
    }
    after = build_queue(
        bundled_cards.values(), graded, TODAY, new_limit=10, new_done_today=9, new_order=order, seed=TODAY.toordinal()
    )
    assert after == planned[9:]  # the tenth planned card, not the first of a fresh round
    tomorrow = TODAY + dt.timedelta(1)
    nxt = build_queue(bundled_cards.values(), graded, tomorrow, new_limit=10, new_order=order, seed=TODAY.toordinal())
    assert planned[9] in nxt and not set(planned[:9]) & set(nxt[-10:])  # a new day plans from what is left


def test_the_first_day_in_lab_order_holds_every_checked_kind(bundled_cards):
    q = build_queue(bundled_cards.values(), {}, TODAY, new_limit=10, new_order="lab")
    kinds = [bundled_cards[cid].kind for cid in q]
    assert {"concept", "diagnosis", "memory_ledger", "shape_trace"} <= set(kinds), kinds
    assert "kernel" not in kinds  # a topic's kernel cards wait until its other cards are in


def test_lab_order_deals_a_topics_kinds_in_turn_and_its_kernel_cards_last():
    def card(cid, kind):
        return Card(id=cid, kind=kind, topic="memory-accounting", prompt="p", answer="a")

    cs = [card("k1", "kernel"), card("c1", "concept"), card("c2", "concept"), card("d1", "diagnosis")]
    cs += [card("l1", "memory_ledger")]
    assert build_queue(cs, {}, TODAY, new_limit=10, new_order="lab") == ["c1", "d1", "l1", "c2", "k1"]


# Focused practice: new cards past the day's limit --------------------------------------


def topic_cards(topic, n):
    return [Card(id=f"{topic}-{i:02d}", kind="concept", topic=topic, prompt="p", answer="a") for i in range(n)]


MOE = topic_cards("moe", 26)
OTHER = topic_cards("gpu-arch", 12)
DAY_DONE = {  # the day's ten new cards, all from another topic
    c.id: CardState(c.id, sm2=SM2State(1, 2.5, 1), due=TODAY + dt.timedelta(1), introduced_on=TODAY) for c in OTHER[:10]
}


def test_a_topic_introduces_its_new_cards_after_the_days_new_cards_are_done():
    from drill.study.focus import focused_queue
    from drill.study.session import DEFAULT_FOCUS_NEW

    assert build_queue([*OTHER, *MOE], DAY_DONE, TODAY, new_limit=10, new_done_today=10) == []
    q = focused_queue([*OTHER, *MOE], DAY_DONE, TODAY, ["moe"], new_order="deck")
    assert q == [c.id for c in MOE[:DEFAULT_FOCUS_NEW]] and DEFAULT_FOCUS_NEW == 10
    assert focused_queue([*OTHER, *MOE], DAY_DONE, TODAY, ["moe"], focus_new=3, new_order="deck") == [
        "moe-00",
        "moe-01",
        "moe-02",
    ]
    assert focused_queue([*OTHER, *MOE], DAY_DONE, TODAY, ["moe"], focus_new=0) == []


def test_the_topics_own_new_cards_of_the_day_count_toward_focus_new_and_a_restart_keeps_the_plan():
    from drill.study.focus import focused_queue

    first = focused_queue([*OTHER, *MOE], DAY_DONE, TODAY, ["moe"], focus_new=5)
    graded = dict(DAY_DONE)
    graded.update(
        {
            cid: CardState(cid, sm2=SM2State(1, 2.5, 1), due=TODAY + dt.timedelta(1), introduced_on=TODAY)
            for cid in first[:2]
        }
    )
    assert focused_queue([*OTHER, *MOE], graded, TODAY, ["moe"], focus_new=5) == first[2:]
    tomorrow = TODAY + dt.timedelta(1)
    nxt = focused_queue([*OTHER, *MOE], graded, tomorrow, ["moe"], focus_new=5)
    assert nxt[:2] == first[:2] and len(nxt) == 2 + 5  # yesterday's two are due; five more are new


def focus_session(states, focus_new=10, cram=False):
    from drill.study.focus import focused_queue

    deck = {c.id: c for c in [*OTHER, *MOE]}
    queue = focused_queue(deck.values(), states, TODAY, ["moe"], focus_new=focus_new, cram=cram)
    return ReviewSession(
        cards=deck, states=dict(states), queue=queue, today=TODAY, topics=("moe",), focus_new=focus_new, cram=cram
    )


def test_a_focused_session_with_nothing_to_show_names_the_flag_that_shows_more():
    from drill.study.focus import nothing_to_show

    session = focus_session(DAY_DONE, focus_new=0)
    assert session.queue == []
    assert nothing_to_show(session) == (
        "Nothing in moe is due today. 26 of its cards are new, but `--focus-new 0` lets a focused session introduce"
        " none. For more: `drill --topic moe --focus-new 10`. To go over them anyway, without touching the"
        " schedule: `drill --topic moe --cram`."
    )
    ten = {
        c.id: CardState(c.id, sm2=SM2State(1, 2.5, 1), due=TODAY + dt.timedelta(1), introduced_on=TODAY)
        for c in MOE[:10]
    }
    session = focus_session({**DAY_DONE, **ten})
    assert session.queue == []
    assert nothing_to_show(session) == (
        "Nothing in moe is due today. 16 of its cards are new, but 10 came in today and a focused session"
        " introduces at most 10 a day (`--focus-new 10`). For more: `drill --topic moe --focus-new 20`. To go over"
        " them anyway, without touching the schedule: `drill --topic moe --cram`."
    )


def test_a_topic_with_every_card_seen_and_none_due_says_so():
    from drill.study.focus import nothing_to_show

    seen = {
        c.id: CardState(
            c.id, sm2=SM2State(2, 2.5, 6), due=TODAY + dt.timedelta(3), introduced_on=TODAY - dt.timedelta(9)
        )
        for c in MOE
    }
    seen["moe-00"] = CardState("moe-00", suspended=True)  # a new card set aside is not waiting
    session = focus_session(seen)
    assert session.queue == []
    assert nothing_to_show(session) == (
        "Nothing in moe is due or new today. To go over them anyway, without touching the schedule:"
        " `drill --topic moe --cram`."
    )


def test_the_done_screen_says_when_the_days_minutes_held_cards_back(tmp_path):
    from drill.ui.review_words import done_text

    session, store = make_session(tmp_path)
    session.budget_seconds = 60.0
    session.grade(store, 5, now=NOW, duration_ms=61_000)
    assert "Today's minutes are spent: 5 cards wait for tomorrow." in done_text(session)
    roomy, store = make_session(tmp_path / "roomy")
    assert "minutes are spent" not in done_text(roomy)
