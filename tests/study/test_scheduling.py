import datetime as dt
import json
import sqlite3

import fsrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.cards.model import Card
from drill.cli import main
from drill.mock.run import schedule_after
from drill.store import migrations
from drill.store.reader import DB_NAME, read_states
from drill.store.store import Store
from drill.study import scheduling
from drill.study.records import CardState, FSRSState
from drill.study.scheduling import (
    GRADE_RATINGS,
    FSRSScheduler,
    SM2Scheduler,
    rating_for,
    scheduler_named,
    switch_scheduler,
)
from drill.study.scheduling import MOCK_PASS as PASS
from drill.study.session import ReviewSession
from drill.study.sm2 import DEFAULT_MAX_INTERVAL, SM2State, days_after

DAY = dt.date(2026, 5, 10)
IDS = ["c00", "c01", "c02", "c03"]
DECK = {cid: Card(id=cid, kind="concept", topic="gpu-arch", prompt="p", answer="a") for cid in IDS}
# Grades handed out in turn: every kind of answer, with passes often enough that each day ends.
GRADES = [5, 2, 4, 3, 0, 4, 5, 1, 4, 4, 3, 5]


# The grade -> rating table ----------------------------------------------------


@pytest.mark.parametrize(
    "grade, rating",
    [
        (0, fsrs.Rating.Again),  # blackout
        (1, fsrs.Rating.Again),  # wrong, familiar
        (2, fsrs.Rating.Again),  # wrong, easy recall once shown: still not recalled
        (3, fsrs.Rating.Hard),  # right, hard
        (4, fsrs.Rating.Good),  # right, hesitant
        (5, fsrs.Rating.Easy),  # perfect
    ],
)
def test_grades_map_to_fsrs_ratings(grade, rating):
    assert rating_for(grade) == rating
    assert GRADE_RATINGS[grade] == rating.name


def test_the_again_line_is_the_sm2_pass_line():
    from drill.study.sm2 import PASSING

    assert [g for g in range(6) if rating_for(g) == fsrs.Rating.Again] == list(range(PASSING))


@pytest.mark.parametrize("grade", [-1, 6, 2.0, True, None])
def test_a_grade_outside_0_to_5_is_refused(grade):
    with pytest.raises(ValueError, match="grade must be an integer 0-5"):
        rating_for(grade)
    with pytest.raises(ValueError, match="grade must be an integer 0-5"):
        FSRSScheduler().review(CardState("c"), grade, DAY)


# One FSRS review ----------------------------------------------------------------

SEEN = CardState(
    "c",
    sm2=SM2State(3, 2.5, 15),
    due=DAY,
    introduced_on=DAY - dt.timedelta(40),
    fsrs=FSRSState(stability=20.0, difficulty=5.0, state=fsrs.State.Review, last_review=DAY - dt.timedelta(20)),
)


@pytest.mark.parametrize(
    "before, grade, days_at_least, days_at_most",
    [
        (CardState("c"), 0, 1, 1),  # new card, blackout: tomorrow
        (CardState("c"), 2, 1, 1),  # new card, almost: tomorrow
        (CardState("c"), 4, 2, 10),
        (CardState("c"), 5, 5, 30),
        (SEEN, 0, 1, 1),  # a lapse: back tomorrow, as under SM-2
        (SEEN, 2, 1, 1),
        (SEEN, 3, 21, 400),  # recalled, 20 days after the last review: further out than it was
        (SEEN, 4, 21, 400),
        (SEEN, 5, 21, 400),
    ],
)
def test_fsrs_moves_due_forward_for_a_recall_and_to_tomorrow_for_again(before, grade, days_at_least, days_at_most):
    after = FSRSScheduler().review(before, grade, DAY)
    assert days_at_least <= (after.due - DAY).days <= days_at_most
    assert after.fsrs is not None and after.fsrs.last_review == DAY
    assert after.introduced_on == (before.introduced_on or DAY)


def test_better_grades_give_later_due_dates_under_fsrs():
    dues = [FSRSScheduler().review(SEEN, g, DAY).due for g in (2, 3, 4, 5)]
    assert dues == sorted(dues) and dues[0] < dues[1] < dues[3]


def test_a_lapse_counts_the_same_under_both_schedulers():
    for scheduler in (SM2Scheduler(), FSRSScheduler()):
        after = scheduler.review(SEEN, 1, DAY)
        assert after.lapses == 1 and after.sm2.repetitions == 0
    assert SM2Scheduler().review(SEEN, 1, DAY).fsrs is None


# Sessions, the store and switching --------------------------------------------


def practise(store, days, scheduler=None, start=0):
    """A session on each day over every card, graded from GRADES in turn; returns how many grades were given."""
    n = start
    for day in days:
        session = ReviewSession(cards=DECK, states=store.states(), queue=list(IDS), today=day, scheduler=scheduler)
        while session.queue:
            session.grade(store, GRADES[n % len(GRADES)], now=dt.datetime.combine(day, dt.time(12)))
            n += 1
    return n


def some_history(store, scheduler=None):
    """Reviews over several weeks, with a cram session and a failed and a passed mock answer."""
    days = [DAY + dt.timedelta(d) for d in (0, 1, 2, 4, 7, 8, 13, 21, 30, 31, 45)]
    n = practise(store, days[:6], scheduler)
    cram = ReviewSession(cards=DECK, states=store.states(), queue=["c01", "c02"], today=days[5], cram=True)
    cram.grade(store, 1, now=dt.datetime.combine(days[5], dt.time(13)))
    cram.grade(store, 5, now=dt.datetime.combine(days[5], dt.time(13)))
    for cid, score in (("c00", 0.2), ("c03", 0.9)):
        before = store.states()[cid]
        after = schedule_after(CardState(**before.__dict__), score, days[6])
        store.record_review(
            before,
            after,
            grade=round(score * 5),
            at=dt.datetime.combine(days[6], dt.time(9)),
            day=days[6],
            duration_ms=1,
            mode="mock",
            answer={"mock": 1, "score": score},
        )
    practise(store, days[6:], scheduler, n)


def log_of(store):
    return [r.model_dump() for r in store.reviews()]


def test_switching_to_fsrs_and_back_keeps_every_review_and_the_sm2_states(tmp_path):
    store = Store(tmp_path)
    some_history(store)
    store.set_suspended(store.states()["c02"], True)
    store.bury(store.states()["c01"], DAY + dt.timedelta(60))
    sm2_states, log = store.states(), log_of(store)
    assert {r["mode"] for r in log} == {"review", "repeat", "cram", "mock"}

    there = switch_scheduler(store, "fsrs")
    assert (there.previous, there.active, there.cards, there.reviews) == ("sm2", "fsrs", 4, len(log))
    fsrs_states = store.states()
    assert log_of(store) == log
    assert all(s.fsrs is not None for s in fsrs_states.values())
    assert any(fsrs_states[c].due != sm2_states[c].due for c in IDS)  # FSRS has its own dates
    assert fsrs_states["c02"].suspended and fsrs_states["c01"].buried_until == DAY + dt.timedelta(60)

    back = switch_scheduler(store, "sm2")
    assert (back.previous, back.active) == ("fsrs", "sm2")
    assert store.states() == sm2_states
    assert read_states(tmp_path) == sm2_states
    assert log_of(store) == log
    assert store.get_setting("scheduler") == "sm2"


def test_reviews_under_fsrs_give_what_a_replay_of_their_log_gives(tmp_path):
    """Live grading and replay are one rule: the same log gives the same states, whichever scheduler graded it."""
    by_sm2, by_fsrs = Store(tmp_path / "a"), Store(tmp_path / "b")
    some_history(by_sm2, "sm2")
    some_history(by_fsrs, "fsrs")
    assert [r["grade"] for r in log_of(by_sm2)] == [r["grade"] for r in log_of(by_fsrs)]
    fsrs_live = by_fsrs.states()
    assert all(s.fsrs is not None for s in fsrs_live.values())

    switch_scheduler(by_sm2, "fsrs")
    assert by_sm2.states() == fsrs_live
    sm2_live = Store(tmp_path / "c")
    some_history(sm2_live, "sm2")
    switch_scheduler(by_fsrs, "sm2")
    assert by_fsrs.states() == sm2_live.states()


def test_the_session_grades_with_the_saved_scheduler(tmp_path):
    store = Store(tmp_path)
    switch_scheduler(store, "fsrs")  # no reviews yet: only the setting changes
    session = ReviewSession(cards=DECK, states={}, queue=list(IDS), today=DAY)
    graded = session.grade(store, 4, now=dt.datetime.combine(DAY, dt.time(12)))
    assert session.scheduler == "fsrs"
    assert graded.after.fsrs is not None and graded.after.fsrs.state == fsrs.State.Review
    assert store.states()["c00"] == graded.after == read_states(tmp_path)["c00"]
    assert json.loads(store.reviews("c00")[0].state_after)["fsrs"]["stability"] == graded.after.fsrs.stability


def test_undo_under_fsrs_puts_back_fsrs_memory(tmp_path):
    store = Store(tmp_path)
    session = ReviewSession(cards=DECK, states={}, queue=["c00"], today=DAY, scheduler="fsrs")
    first = session.grade(store, 5, now=dt.datetime.combine(DAY, dt.time(12)))
    later = DAY + dt.timedelta(8)
    session = ReviewSession(cards=DECK, states=store.states(), queue=["c00"], today=later, scheduler="fsrs")
    session.grade(store, 1, now=dt.datetime.combine(later, dt.time(12)))
    assert store.states()["c00"].due == later + dt.timedelta(1)
    session.undo(store)
    assert store.states()["c00"] == first.after and store.states()["c00"].fsrs == first.after.fsrs


def test_an_unknown_scheduler_is_refused_and_nothing_changes(tmp_path):
    store = Store(tmp_path)
    practise(store, [DAY])
    states = store.states()
    with pytest.raises(ValueError) as caught:
        switch_scheduler(store, "anki")
    assert str(caught.value) == "unknown scheduler 'anki' (choose from sm2, fsrs)"
    assert store.get_setting("scheduler") is None and store.states() == states
    assert scheduler_named(" FSRS ").name == "fsrs"


def test_a_bad_grade_in_the_log_is_named_and_nothing_changes(tmp_path):
    store = Store(tmp_path)
    practise(store, [DAY])
    states = store.states()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE review_log SET grade = 9 WHERE id = 2")
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match=r"^review 2 \(c\d\d\): grade must be an integer 0-5, got 9$"):
        switch_scheduler(store, "fsrs")
    assert store.get_setting("scheduler") is None and store.states() == states


@pytest.mark.parametrize("score", [0.0, 0.3, 0.59, PASS, 0.9])
@pytest.mark.parametrize("due_in", [None, 0, 1, 2, 30])
def test_a_replayed_mock_answer_moves_the_card_as_the_mock_did(score, due_in):
    due = None if due_in is None else DAY + dt.timedelta(due_in)
    before = CardState("c", sm2=SM2State(2, 2.5, 6), due=due, introduced_on=None if due is None else DAY)
    replayed = scheduling.after_grade(SM2Scheduler(), before, round(score * 5), DAY, "mock", {"score": score})
    assert replayed == schedule_after(CardState(**before.__dict__), score, DAY)
    assert scheduling.MOCK_PASS == PASS


# Schema and stats ---------------------------------------------------------------


def test_a_version_3_file_gets_the_fsrs_columns_empty(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME, isolation_level=None)
    for version in (1, 2, 3):
        for stmt in migrations.MIGRATIONS[version]:
            conn.execute(stmt)
    conn.execute("INSERT INTO meta VALUES('schema_version', '3')")
    conn.execute(
        "INSERT INTO card_state(card_id, repetitions, ef, interval, due) VALUES('old', 2, 2.4, 6, '2026-05-12')"
    )
    conn.close()
    assert read_states(tmp_path)["old"].fsrs is None  # the fast reader copes with a v3 file
    store = Store(tmp_path)
    assert (store.migrated_from, store.version) == (3, migrations.LATEST)  # version 4 and any step after it
    assert store.states()["old"] == CardState("old", sm2=SM2State(2, 2.4, 6), due=dt.date(2026, 5, 12))


def test_stats_show_the_active_scheduler(tmp_path, concept_deck, capsys):
    deck = concept_deck(2)

    def stats():
        assert main(["stats", "--json", "--data-dir", str(tmp_path), "--decks", str(deck)]) == 0
        return json.loads(capsys.readouterr().out)

    assert stats()["scheduler"] == "sm2"
    store = Store(tmp_path)
    switch_scheduler(store, "fsrs")
    store.close()
    assert stats()["scheduler"] == "fsrs"


# The maximum interval, live and in a replay --------------------------------------------


def perfect_reviews(scheduler, start, times=200):
    """The card after a grade of 5 on each of `times` successive due dates, and each review's (day, state after)."""
    state, day, seen = CardState("c"), start, []
    for _ in range(times):
        state = scheduling.after_grade(scheduler, state, 5, day, "review")
        seen.append((day, state))
        day = state.due
    return seen


def assert_bounded(seen, cap):
    for day, state in seen:
        assert 1 <= state.sm2.interval <= cap  # SM-2's figures, kept under FSRS too
        assert day < state.due or day == state.due == dt.date.max
        assert (state.due - day).days <= cap  # the active scheduler's interval


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(["sm2", "fsrs"]),
    cap=st.one_of(st.just(DEFAULT_MAX_INTERVAL), st.integers(1, 36500)),
    start=st.dates(min_value=dt.date(2000, 1, 1)),
)
def test_two_hundred_perfect_grades_on_their_due_dates_stay_within_the_maximum_interval(name, cap, start):
    seen = perfect_reviews(scheduler_named(name, cap), start)
    assert_bounded(seen, cap)


@pytest.mark.parametrize("name", ["sm2", "fsrs"])
def test_two_hundred_perfect_grades_reach_the_default_maximum_and_the_calendars_end(name):
    seen = perfect_reviews(scheduler_named(name), DAY)
    assert max((state.due - day).days for day, state in seen) == DEFAULT_MAX_INTERVAL == 36500
    assert max(state.sm2.interval for _, state in seen) == 36500
    assert seen[-1][1].due == dt.date.max  # 200 x 100 years pass 9999-12-31: the due date stops there


@pytest.mark.parametrize("name", ["sm2", "fsrs"])
def test_a_session_grades_with_the_maximum_interval_it_was_given(tmp_path, name):
    store = Store(tmp_path)
    long_ago = CardState("c00", sm2=SM2State(9, 2.5, 400), due=DAY, introduced_on=DAY - dt.timedelta(900))
    session = ReviewSession(
        cards=DECK, states={"c00": long_ago}, queue=["c00"], today=DAY, scheduler=name, max_interval=30
    )
    graded = session.grade(store, 5, now=dt.datetime.combine(DAY, dt.time(12)))
    assert graded.after.sm2.interval == 30 and graded.after.due <= DAY + dt.timedelta(30)


@pytest.mark.parametrize("cap, reached", [(DEFAULT_MAX_INTERVAL, False), (100, True)])
def test_fsrs_matches_the_reference_package_review_by_review(cap, reached):
    """The fsrs package run as its own documentation shows (one Card carried through), with drill's settings."""
    reference = fsrs.Scheduler(
        learning_steps=(), relearning_steps=(dt.timedelta(days=1),), maximum_interval=cap, enable_fuzzing=False
    )
    card = fsrs.Card(card_id=1, due=dt.datetime.combine(DAY, dt.time(), tzinfo=dt.timezone.utc))
    ours, day = CardState("c"), DAY
    for grade in [4, 5, 3, 1, 4, 5, 5, 2, 4, 5, 5, 5, 5, 3, 5]:
        at = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)
        card, _ = reference.review_card(card, rating_for(grade), review_datetime=at)
        ours = FSRSScheduler(cap).review(ours, grade, day)
        assert ours.fsrs == FSRSState(card.stability, card.difficulty, int(card.state), day)
        assert ours.due == card.due.date()
        day = ours.due
    assert ((card.due - at).days == cap) == reached


def test_fsrs_near_the_calendars_end_remembers_as_it_would_any_other_year():
    """FSRS counts days between reviews only: shifted to where its dates can be written, nothing changes."""
    grades = [4, 5, 5, 1, 4, 5, 5]
    card, day, early = CardState("c"), DAY, []
    for grade in grades:
        card = FSRSScheduler().review(card, grade, day)
        early.append((card.fsrs.stability, card.fsrs.difficulty, (card.due - day).days))
        day = card.due
    gaps = [gap for *_, gap in early]
    day = dt.date.max - dt.timedelta(sum(gaps[:-1]) + 3)  # the same reviews, the last 3 days before the end
    card = CardState("c")
    for grade, (stability, difficulty, gap) in zip(grades, early):
        card = FSRSScheduler().review(card, grade, day)
        assert (card.fsrs.stability, card.fsrs.difficulty) == (stability, difficulty)
        assert card.due == days_after(day, gap)
        day = card.due
    assert day == dt.date.max and gaps[-1] > 3


@pytest.mark.parametrize("graded_by", ["sm2", "fsrs"])
def test_an_imported_log_of_two_hundred_perfect_grades_replays_within_the_maximum(tmp_path, graded_by, capsys):
    """Graded live, exported, imported into another data folder, then replayed by each scheduler with a lower cap."""
    source = Store(tmp_path / "a")
    day = DAY
    for n in range(200):
        session = ReviewSession(cards=DECK, states=source.states(), queue=["c00"], today=day, scheduler=graded_by)
        session.grade(source, 5, now=dt.datetime.combine(day, dt.time(12, n // 60, n % 60)))  # a time of its own
        day = source.states()["c00"].due
    live = source.states()
    source.close()
    out = tmp_path / "log.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(tmp_path / "a")]) == 0
    assert main(["import", "reviews", str(out), "--data-dir", str(tmp_path / "b")]) == 0
    assert "imported 200 reviews" in capsys.readouterr().err
    target = Store(tmp_path / "b")
    assert target.states() == live  # the import takes each card's last logged state
    assert json.loads(target.reviews()[-1].state_after)["due"] == "9999-12-31"
    for name in ("sm2", "fsrs"):
        switch_scheduler(target, name, max_interval=365)
        (state,) = target.states().values()
        assert state.sm2.interval == 365 and state.due == dt.date.max
        assert len(target.reviews()) == 200
    switch_scheduler(target, graded_by)
    assert target.states() == live  # the default maximum again: the log gives what live grading gave
