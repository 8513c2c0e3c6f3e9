"""The plan to an interview date: plans that fit and do not, what would fit, early reviews, mocks."""

import datetime as dt

import pytest

from drill.study.forecast import MemoryModel, TrackCard
from drill.study.plan import (
    DEFAULT_FIRST_GRADES,
    DEFAULT_SECONDS_BY_KIND,
    EARLY_REVIEW_DAYS,
    INTRO_LEAD_DAYS,
    LAST_MOCK_DAYS_BEFORE,
    MIN_GRADED,
    MIN_TIMED,
    MOCK_EVERY_DAYS,
    early_review_day,
    early_reviews,
    grade_mix,
    make_plan,
    seconds_per_card,
)
from drill.study.records import FSRSState, LoggedReview

TODAY = dt.date(2026, 6, 1)
DATE = TODAY + dt.timedelta(days=20)


def unseen(n, topic="serving", kind="concept", prefix=None):
    return [TrackCard(f"{prefix or topic}-{i}", topic, kind) for i in range(n)]


def seen(card_id, stability, last_review, due, topic="serving"):
    return TrackCard(card_id, topic, "concept", FSRSState(stability, 5.0, 2, last_review), due)


def test_a_plan_that_fits_introduces_every_card_in_time_and_reaches_the_target():
    cards = unseen(30) + unseen(20, "moe")
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=60)
    assert plan.fits and plan.reasons == () and plan.leave_out == () and plan.minutes_needed is None
    introduced = [card for day in plan.days for card in day.new_cards]
    assert sorted(introduced) == sorted(c.card_id for c in cards)
    last_new = max(day.day for day in plan.days if day.new_cards)
    assert last_new <= DATE - dt.timedelta(days=INTRO_LEAD_DAYS)
    assert max(len(d.new_cards) for d in plan.days) - min(len(d.new_cards) for d in plan.days if d.new_cards) <= 1
    assert plan.planned.overall >= 0.9 and plan.now.overall == 0.0
    assert all(day.minutes <= 60 for day in plan.days)
    assert [d.day for d in plan.days] == [TODAY + dt.timedelta(days=i) for i in range(20)]


def test_the_plan_is_the_same_for_the_same_inputs():
    cards = unseen(25)
    assert make_plan(cards, today=TODAY, date=DATE, minutes_per_day=30) == make_plan(
        cards, today=TODAY, date=DATE, minutes_per_day=30
    )


def test_minutes_follow_the_learners_seconds_per_card():
    cards = unseen(40)
    quick = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=500, seconds_by_kind={"concept": 30})
    slow = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=500, seconds_by_kind={"concept": 90})
    assert sum(d.minutes for d in slow.days) == pytest.approx(3 * sum(d.minutes for d in quick.days))


def test_a_plan_that_does_not_fit_says_the_minutes_that_would():
    cards = unseen(60) + unseen(60, "moe", "memory_ledger")
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=10)
    assert not plan.fits
    assert plan.reasons and "more than the 10 given" in plan.reasons[0]
    assert plan.minutes_needed is not None and plan.minutes_needed > 10
    again = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=plan.minutes_needed)
    assert again.fits


def test_when_it_does_not_fit_the_topic_saving_most_is_left_out_first():
    ledgers = unseen(40, "moe", "memory_ledger")  # 150 s a card: the slow topic
    concepts = unseen(10, "serving")
    full = make_plan(ledgers + concepts, today=TODAY, date=DATE, minutes_per_day=500)
    alone = make_plan(concepts, today=TODAY, date=DATE, minutes_per_day=500)
    budget = (full.peak_minutes + alone.peak_minutes) / 2
    plan = make_plan(ledgers + concepts, today=TODAY, date=DATE, minutes_per_day=budget)
    assert not plan.fits
    assert [cut.topic for cut in plan.leave_out] == ["moe"]
    assert plan.leave_out[0].cards == 40 and plan.leave_out[0].minutes_saved > 0
    assert make_plan(concepts, today=TODAY, date=DATE, minutes_per_day=budget).fits


def test_too_close_to_the_date_to_introduce_new_cards():
    plan = make_plan(unseen(5), today=TODAY, date=TODAY + dt.timedelta(days=2), minutes_per_day=60)
    assert not plan.fits
    assert any("cannot be introduced 3 days before the date" in r for r in plan.reasons)
    assert all(not d.new_cards for d in plan.days)
    assert plan.minutes_needed is None


@pytest.mark.parametrize(
    "date, minutes, target, message",
    [
        (TODAY, 30, 0.9, "is not after today"),
        (DATE, 0, 0.9, "more than 0"),
        (DATE, 30, 1.0, "between 0 and 1"),
    ],
)
def test_bad_inputs_are_one_line_errors(date, minutes, target, message):
    with pytest.raises(ValueError, match=message):
        make_plan(unseen(3), today=TODAY, date=date, minutes_per_day=minutes, target=target)


def test_mocks_every_week_the_last_two_days_before():
    plan = make_plan(unseen(5), today=TODAY, date=DATE, minutes_per_day=60)
    last = DATE - dt.timedelta(days=LAST_MOCK_DAYS_BEFORE)
    assert plan.mocks == (
        last - dt.timedelta(days=2 * MOCK_EVERY_DAYS),
        last - dt.timedelta(days=MOCK_EVERY_DAYS),
        last,
    )
    assert [d.day for d in plan.days if d.mock] == list(plan.mocks)


# The early-review rule -------------------------------------------------------


def test_a_card_below_target_on_the_date_comes_up_early_in_the_last_days_only():
    # reviewed 10 days ago with 10 days of stability: recall 0.9 today, lower on the date
    card = seen("weak", 10.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5))
    first = early_review_day("weak", DATE)
    assert DATE - dt.timedelta(days=EARLY_REVIEW_DAYS) <= first < DATE
    assert early_reviews([card], first - dt.timedelta(days=1), DATE) == []
    assert early_reviews([card], first, DATE) == ["weak"]
    assert early_reviews([card], DATE - dt.timedelta(days=1), DATE) == ["weak"]
    assert early_reviews([card], DATE, DATE) == []


def test_early_reviews_leave_out_cards_due_anyway_strong_cards_and_unseen_ones_lowest_first():
    day = DATE - dt.timedelta(days=1)
    cards = [
        seen("weak", 10.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5)),
        seen("weaker", 3.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5)),
        seen("strong", 200.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=90)),
        seen("due", 3.0, DATE - dt.timedelta(days=12), day),
        TrackCard("new", "serving", "concept"),
    ]
    assert early_reviews(cards, day, DATE) == ["weaker", "weak"]
    assert early_reviews(cards, day, DATE, target=0.85) == ["weaker"]  # recall on the date 0.78 and 0.89


def test_the_plan_counts_the_early_reviews_and_they_lift_recall_on_the_date():
    weak = seen("weak", 10.0, TODAY - dt.timedelta(days=1), DATE + dt.timedelta(days=30))
    plan = make_plan([weak], today=TODAY, date=DATE, minutes_per_day=30)
    assert sum(d.early_reviews for d in plan.days) >= 1  # more when a hard answer leaves it below target
    assert all(d.early_reviews == 0 for d in plan.days if d.day < early_review_day("weak", DATE))
    stop = MemoryModel().recall(weak.memory, DATE)
    assert plan.now.overall == pytest.approx(stop) and stop < 0.9
    assert plan.planned.overall > 0.9


# What the plan learns from the log -----------------------------------------


def test_seconds_per_card_are_the_learners_median_once_there_are_enough():
    timed = [("concept", s) for s in (20, 30, 40, 50, 1000)] + [("diagnosis", 10)] * (MIN_TIMED - 1) + [("concept", 0)]
    seconds = seconds_per_card(timed)
    assert seconds["concept"] == 40
    assert seconds["diagnosis"] == DEFAULT_SECONDS_BY_KIND["diagnosis"]
    assert seconds["kernel"] == DEFAULT_SECONDS_BY_KIND["kernel"]


def test_grade_mix_from_the_log():
    day = TODAY
    log = []
    for i in range(MIN_GRADED):
        log.append(LoggedReview(2 * i, f"c{i}", day, 1 if i % 2 else 4, "review"))
        log.append(LoggedReview(2 * i + 1, f"c{i}", day + dt.timedelta(days=3), 5, "review"))
    log.append(LoggedReview(999, "c0", day, 3, "repeat"))
    mix = grade_mix(log)
    assert mix.first == ((1, 0.5), (4, 0.5))
    assert mix.recalled == ((5, 1.0),)
    assert grade_mix(log[:10]).first == DEFAULT_FIRST_GRADES


def test_a_days_new_cards_come_in_the_queues_order_kernel_cards_after_the_others():
    # the queue's order: each topic's concepts, then its kernel card (dealing the slowest kinds first evens the
    # minutes over the days, but a day still opens with the cards the queue would ask first)
    cards = [*unseen(6, "serving"), *unseen(1, "serving", "kernel", "serving-k")]
    cards += [*unseen(6, "moe"), *unseen(1, "moe", "kernel", "moe-k")]
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=500)
    place = {card.card_id: n for n, card in enumerate(cards)}
    for day in plan.days:
        assert list(day.new_cards) == sorted(day.new_cards, key=place.__getitem__)
    first_day = next(day for day in plan.days if day.new_cards)
    assert not first_day.new_cards[0].endswith("-k-0")
