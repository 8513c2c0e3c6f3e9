"""The plan to an interview date: plans that fit and do not, what would fit, early reviews, mocks."""

import datetime as dt

import pytest

from drill.study.calibration import Outcome, Tally
from drill.study.day_cards import day_cards, expected_views
from drill.study.forecast import MemoryModel, TrackCard
from drill.study.grades import DEFAULT_FIRST_GRADES, MIN_GRADED, GradeMix, grade_mix
from drill.study.pace import DEFAULT_SECONDS_BY_KIND, Pace, learned_pace
from drill.study.plan import LAST_MOCK_DAYS_BEFORE, MOCK_EVERY_DAYS, make_plan
from drill.study.plan_runs import BASELINE_NEW_PER_DAY, EARLY_REVIEW_DAYS, early_review_day
from drill.study.records import FSRSState, LoggedReview
from drill.study.uncertainty import PRIOR_LOG_SCALE_SD, Uncertainty, learner_uncertainty, skip_rate

TODAY = dt.date(2026, 6, 1)
DATE = TODAY + dt.timedelta(days=20)


def unseen(n, topic="serving", kind="concept", prefix=None):
    return [TrackCard(f"{prefix or topic}-{i}", topic, kind) for i in range(n)]


def seen(card_id, stability, last_review, due, topic="serving"):
    return TrackCard(card_id, topic, "concept", FSRSState(stability, 5.0, 2, last_review), due)


def pace_of(seconds):
    """A pace whose views take exactly `seconds` by kind (no spread)."""
    import math

    return Pace({kind: math.log(s) for kind, s in seconds.items()}, {kind: 0.0 for kind in seconds})


# The day's cards ----------------------------------------------------------------


def test_the_days_cards_take_each_group_in_turn_while_they_fit():
    cost = {"d1": 60, "d2": 60, "e1": 30, "n1": 90, "n2": 90, "o1": 30}.__getitem__
    day = day_cards(["d1", "d2"], ["e1"], ["n1", "n2"], ["o1"], cost, budget_seconds=250)
    assert day.cards == ("d1", "d2", "e1", "n1")  # 240 s; n2 would pass 250
    assert day.left_over == ("o1",)  # a due review that waits for tomorrow; a new card not taken is no debt
    assert day.seconds == 240 and day.reviews == 3
    roomy = day_cards(["d1", "d2"], ["e1"], ["n1", "n2"], ["o1"], cost, budget_seconds=10_000)
    assert roomy.cards == ("d1", "d2", "e1", "n1", "n2", "o1") and roomy.left_over == ()


def test_a_card_longer_than_the_day_is_still_taken_first_and_alone():
    day = day_cards([], [], ["kernel", "concept"], [], {"kernel": 900, "concept": 60}.__getitem__, 600)
    assert day.new == ("kernel",) and day.seconds == 900


def test_the_top_up_takes_only_the_minutes_left_and_never_passes_them():
    cost = {"d1": 60, "n1": 90, "o1": 30, "t1": 40, "t2": 40, "t3": 40}.__getitem__
    tight = day_cards(["d1"], [], ["n1"], ["o1"], cost, budget_seconds=180, top_up=["t1", "t2"])
    assert tight.cards == ("d1", "n1", "o1") and tight.top_up == ()  # 180 s: nothing is left for it
    some = day_cards(["d1"], [], ["n1"], ["o1"], cost, budget_seconds=275, top_up=["t1", "t2", "t3"])
    assert some.top_up == ("t1", "t2")  # after every other group, while it fits: 260 s of 275
    assert some.seconds == 260 <= 275 and some.reviews == 4 and some.left_over == ()
    assert some.ahead == ("t1", "t2")
    short = day_cards(["d1", "d2"], [], [], [], {"d1": 60, "d2": 60, "t1": 10}.__getitem__, 100, top_up=["t1"])
    assert short.cards == ("d1",) and short.left_over == ("d2",)  # a due review left over: no top-up that day
    for budget in range(0, 400, 7):
        day = day_cards(["d1"], [], ["n1"], ["o1"], cost, budget_seconds=budget, top_up=["t1", "t2", "t3"])
        assert not day.top_up or day.seconds <= budget


def test_expected_views_count_the_same_day_repeat():
    grades = GradeMix()
    assert expected_views(None, grades) == pytest.approx(1.5)  # half the first answers are below 4
    assert expected_views(1.0, grades) == pytest.approx(1.15)
    assert expected_views(0.0, grades) == pytest.approx(2.0)


# The plan for the minutes given ----------------------------------------------------------


def test_a_plan_keeps_each_day_within_the_minutes_and_says_what_they_reach():
    cards = unseen(60) + unseen(40, "moe", "memory_ledger")
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=20)
    assert plan.today_cards.seconds <= 20 * 60
    assert all(day.minutes <= 20 + 150 * 2 / 60 for day in plan.days)  # served: at most one card's views past it
    assert plan.days[0].new_cards == plan.today_cards.new
    assert 0 < plan.forecast.ready_share < 1 and plan.forecast.low <= plan.forecast.mean <= plan.forecast.high
    roomy = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=240, suggest=False)
    assert roomy.forecast.ready_share > plan.forecast.ready_share
    assert plan.minutes_needed is not None and plan.needed_reaches is not None and plan.needed_reaches >= 0.9
    assert make_plan(cards, today=TODAY, date=DATE, minutes_per_day=20, suggest=False).minutes_needed is None


@pytest.mark.parametrize("minutes", [15, 30, 120])
def test_the_plan_is_never_worse_than_ten_new_cards_a_day_in_its_own_simulation(minutes):
    cards = unseen(80) + unseen(40, "moe", "memory_ledger")
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=minutes, suggest=False)
    compared = dict(plan.compared)
    baseline = compared[f"baseline {BASELINE_NEW_PER_DAY} new a day"]
    assert compared[plan.policy] >= baseline
    assert compared[plan.policy] == max(compared.values())


def test_the_plan_is_the_same_for_the_same_inputs():
    cards = unseen(25)
    assert make_plan(cards, today=TODAY, date=DATE, minutes_per_day=30) == make_plan(
        cards, today=TODAY, date=DATE, minutes_per_day=30
    )


def test_minutes_follow_the_learners_pace():
    cards = unseen(40)  # five minutes a day: the minutes bind whichever way of dealing is chosen
    quick = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=5, pace=pace_of({"concept": 30}))
    slow = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=5, pace=pace_of({"concept": 90}))
    assert len(quick.today_cards.new) > len(slow.today_cards.new)
    assert quick.today_cards.seconds <= 5 * 60 and slow.today_cards.seconds <= 5 * 60


def test_a_plan_that_does_not_fit_says_the_minutes_that_would():
    cards = unseen(60) + unseen(60, "moe", "memory_ledger")
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=10)
    assert not plan.fits
    assert plan.reasons and plan.minutes_needed is not None and plan.minutes_needed > 10
    again = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=plan.minutes_needed, suggest=False)
    assert again.forecast.mean >= 0.9 and again.forecast.ready_share > plan.forecast.ready_share


def test_when_it_does_not_fit_the_slowest_topic_is_left_out_first():
    ledgers = unseen(40, "moe", "memory_ledger")  # 150 s a card: the slow topic
    concepts = unseen(10, "serving")
    plan = make_plan(ledgers + concepts, today=TODAY, date=DATE, minutes_per_day=8)
    assert not plan.fits
    assert [cut.topic for cut in plan.leave_out] == ["moe"]
    assert plan.leave_out[0].cards == 40 and plan.leave_out[0].minutes_saved > 0


def test_leaving_out_most_of_the_track_is_never_the_advice():
    topics = ["moe", "serving", "ddp", "gemm", "fusion", "numerics"]
    cards = [card for topic in topics for card in unseen(10, topic)]
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=5)  # one topic alone would fit
    assert not plan.fits
    assert len(plan.leave_out) <= len(topics) // 2


def test_too_close_to_the_date_to_introduce_every_card():
    plan = make_plan(unseen(300), today=TODAY, date=TODAY + dt.timedelta(days=2), minutes_per_day=30)
    assert not plan.fits
    assert any("not all introduced" in r for r in plan.reasons)


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


def early_today(cards, day, target=0.9, uncertainty=None):
    """The cards the plan brings up early on `day` (the queue's early reviews), with room for all of them."""
    plan = make_plan(cards, today=day, date=DATE, minutes_per_day=600, target=target, uncertainty=uncertainty)
    return plan.today_cards.early


def test_a_card_below_target_on_the_date_comes_up_early_in_the_last_days_only():
    # reviewed 10 days ago with 10 days of stability: recall 0.9 today, lower on the date
    card = seen("weak", 10.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5))
    first = early_review_day("weak", DATE)
    assert DATE - dt.timedelta(days=EARLY_REVIEW_DAYS) <= first < DATE
    assert early_today([card], first - dt.timedelta(days=1)) == ()
    assert early_today([card], first) == ("weak",)
    assert early_today([card], DATE - dt.timedelta(days=1)) == ("weak",)


def test_early_reviews_leave_out_cards_due_anyway_strong_cards_and_unseen_ones_lowest_first():
    day = DATE - dt.timedelta(days=1)
    cards = [
        seen("weak", 10.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5)),
        seen("weaker", 3.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5)),
        seen("strong", 200.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=90)),
        seen("due", 3.0, DATE - dt.timedelta(days=12), day),
        TrackCard("new", "serving", "concept"),
    ]
    assert early_today(cards, day) == ("weaker", "weak")
    sure = Uncertainty(0.0, 0.0, 0.0)  # a learner the log has shown to be the model's
    assert early_today(cards, day, target=0.85, uncertainty=sure) == ("weaker",)  # recall on the date 0.78 and 0.89


def test_while_the_log_says_little_early_reviews_assume_the_pessimistic_end_of_the_learners_factor():
    day = DATE - dt.timedelta(days=1)
    cards = [seen("weak", 10.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=5))]  # 0.89 on the date
    assert early_today(cards, day, target=0.85, uncertainty=Uncertainty(0.0, 0.0, 0.0)) == ()
    thin = Uncertainty(0.0, PRIOR_LOG_SCALE_SD, 0.0)  # no review yet: the prior's width
    assert thin.cautious_factor < 0.7
    assert early_today(cards, day, target=0.85, uncertainty=thin) == ("weak",)  # 0.85 at the factor's 10th percentile
    assert Uncertainty(0.0, 0.05, 0.0).cautious_factor > 0.9  # many reviews: close to the mean


def test_a_learner_who_forgets_faster_gets_more_early_reviews():
    day = DATE - dt.timedelta(days=1)
    card = seen("fine", 40.0, DATE - dt.timedelta(days=12), DATE + dt.timedelta(days=20))  # 0.96 on the date
    assert early_today([card], day) == ()
    assert early_today([card], day, uncertainty=Uncertainty(-1.5, 0.1, 0.0)) == ("fine",)  # 0.87 for them


def test_the_plan_counts_the_early_reviews_and_they_lift_recall_on_the_date():
    weak = seen("weak", 10.0, TODAY - dt.timedelta(days=1), DATE + dt.timedelta(days=30))
    plan = make_plan([weak], today=TODAY, date=DATE, minutes_per_day=30)
    assert sum(d.early_reviews for d in plan.days) >= 1  # more when a hard answer leaves it below target
    assert all(d.early_reviews == 0 for d in plan.days if d.day < early_review_day("weak", DATE))
    stop = MemoryModel().recall(weak.memory, DATE)
    assert plan.now.overall == pytest.approx(stop) and stop < 0.9
    assert plan.planned.overall > 0.9


# The top-up of the last days -------------------------------------------------

SURE = Uncertainty(0.0, 0.0, 0.0)  # a learner the log has shown to be the model's: recall on the date is the model's


def weak_cards(n, last_review, stability=6.0):
    """Cards below the target on the date for the model (about 0.82 to 0.85 twelve days after `last_review`), the
    lowest first."""
    return [
        seen(f"w{i:02d}", stability + 0.1 * i, last_review, DATE + dt.timedelta(days=40), topic="serving")
        for i in range(n)
    ]


def test_the_minutes_left_in_the_last_days_top_up_cards_not_due_lowest_recall_first():
    day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)  # the first early day: a card's own comes later for most
    strong = seen("strong", 200.0, day - dt.timedelta(days=7), DATE + dt.timedelta(days=90))  # 0.99 on the date
    cards = [strong, *weak_cards(30, day - dt.timedelta(days=7))]
    plan = make_plan(cards, today=day, date=DATE, minutes_per_day=15, uncertainty=SURE)  # about 14 cards fit
    today = plan.today_cards
    assert all(early_review_day(card_id, DATE) == day for card_id in today.early)
    assert 3 <= len(today.top_up) and len(today.early) + len(today.top_up) < 30
    assert all(early_review_day(card_id, DATE) > day for card_id in today.top_up)  # not yet their early day
    assert list(today.top_up) == sorted(today.top_up)  # the lowest stability first
    assert today.seconds <= 15 * 60
    assert plan.days[0].top_up == len(today.top_up) and plan.days[0].reviews == len(today.cards)
    roomy = make_plan(cards, today=day, date=DATE, minutes_per_day=600, uncertainty=SURE)
    assert set(roomy.today_cards.ahead) == {card.card_id for card in cards[1:]}  # far above the target: left alone


def test_no_top_up_before_the_last_days_nor_for_a_card_asked_yesterday():
    cards = weak_cards(30, TODAY - dt.timedelta(days=1), stability=10.0)
    early_on = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=10, uncertainty=SURE)
    assert early_on.today_cards.top_up == ()
    first_top_up_day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)
    assert all(d.top_up == 0 for d in early_on.days if d.day < first_top_up_day)
    assert sum(d.top_up for d in early_on.days if d.day >= first_top_up_day) > 0
    day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)
    asked = [*weak_cards(3, day - dt.timedelta(days=1)), *weak_cards(30, day - dt.timedelta(days=7))[3:]]
    plan = make_plan(asked, today=day, date=DATE, minutes_per_day=600, uncertainty=SURE)
    assert plan.today_cards.top_up and not {"w00", "w01", "w02"} & set(plan.today_cards.top_up)


def test_with_no_minutes_to_spare_there_is_no_top_up():
    day = DATE - dt.timedelta(days=EARLY_REVIEW_DAYS)
    due = [seen(f"d{i}", 5.0, day - dt.timedelta(days=5), day, topic="moe") for i in range(20)]
    cards = [*due, *weak_cards(10, day - dt.timedelta(days=7))]
    plan = make_plan(cards, today=day, date=DATE, minutes_per_day=10, uncertainty=SURE)
    assert plan.today_cards.left_over and plan.today_cards.top_up == ()


# What the plan learns from the log -----------------------------------------


def test_the_pace_moves_from_the_prior_to_the_learners_own_views():
    kinds = {f"c{i}": "concept" for i in range(40)} | {"d0": "diagnosis"}
    empty = learned_pace([], kinds)
    assert empty.kind_seconds("concept") == pytest.approx(DEFAULT_SECONDS_BY_KIND["concept"])
    log = [LoggedReview(i, f"c{i}", TODAY, 4, "review", duration_ms=20_000) for i in range(40)]
    log.append(LoggedReview(99, "d0", TODAY, 4, "mock", duration_ms=1_000))  # a mock's seconds say nothing
    pace = learned_pace(log, kinds)
    assert 20 < pace.kind_seconds("concept") < 30  # forty views of 20 s against five of the prior's 60
    assert pace.kind_seconds("diagnosis") == pytest.approx(DEFAULT_SECONDS_BY_KIND["diagnosis"])
    slow = log + [LoggedReview(100 + i, "c0", TODAY, 4, "repeat", duration_ms=200_000) for i in range(5)]
    by_card = learned_pace(slow, kinds)
    assert by_card.seconds("c0", "concept") > 3 * by_card.seconds("c1", "concept")


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


def test_when_the_minutes_bind_the_quickest_cards_come_first_and_more_are_kept():
    # each topic's kernel card first in the queue's order: 30 minutes hold one kernel card or a dozen concepts
    cards = []
    for topic in ("serving", "moe", "ddp", "profiling", "memory"):
        cards += [*unseen(1, topic, "kernel", f"{topic}-k"), *unseen(8, topic)]
    plan = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=30, suggest=False)
    compared = dict(plan.compared)
    assert plan.policy == "as many as fit, quickest first"
    assert compared[plan.policy] > compared["as many as fit"]
    assert plan.today_cards.new and not any(card_id.endswith("-k-0") for card_id in plan.today_cards.new)
    assert plan.days[0].new_cards == plan.today_cards.new
    later = [card_id for day in plan.days[1:] for card_id in day.new_cards]
    assert len(set(later) | set(plan.today_cards.new)) == len(later) + len(plan.today_cards.new)  # none dealt twice


# How sure the forecast is ---------------------------------------------------------------


def test_parameter_uncertainty_widens_the_interval_and_skipped_days_lower_the_forecast():
    cards = unseen(60)
    sure = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=40, uncertainty=Uncertainty(0.0, 0.0, 0.0))
    unsure = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=40, uncertainty=Uncertainty(0.0, 0.6, 0.0))
    assert unsure.forecast.high - unsure.forecast.low > 2 * (sure.forecast.high - sure.forecast.low)
    tight = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=15, uncertainty=Uncertainty(0.0, 0.0, 0.0))
    skipping = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=15, uncertainty=Uncertainty(0.0, 0.0, 0.4))
    assert skipping.forecast.mean < tight.forecast.mean - 0.02


def test_a_learner_who_forgets_faster_than_predicted_gets_a_lower_factor():
    decay = -0.1542
    short = Tally.of(Outcome(0.9, i % 10 < 6, elapsed_days=5, review_number=3) for i in range(400))
    faster = learner_uncertainty(short, decay, [], TODAY)
    assert faster.log_scale_mean < -0.3 and faster.log_scale_sd < PRIOR_LOG_SCALE_SD
    honest = learner_uncertainty(
        Tally.of(Outcome(0.9, i % 10 < 9, elapsed_days=5, review_number=3) for i in range(400)), decay, [], TODAY
    )
    assert abs(honest.log_scale_mean) < 0.1
    empty = learner_uncertainty(Tally(), decay, [], TODAY)
    assert empty.log_scale_mean == pytest.approx(0.0, abs=1e-9)
    assert empty.log_scale_sd == pytest.approx(PRIOR_LOG_SCALE_SD, rel=0.05)
    worse = make_plan(unseen(40), today=TODAY, date=DATE, minutes_per_day=60, uncertainty=faster)
    plain = make_plan(unseen(40), today=TODAY, date=DATE, minutes_per_day=60, uncertainty=honest)
    assert worse.forecast.mean < plain.forecast.mean


def test_reviews_after_longer_gaps_weigh_more_in_the_learners_factor():
    decay = -0.1542
    # the first days' short gaps as the model predicts; the longer gaps since fall short of it
    short = [Outcome(0.9, i % 10 < 9, elapsed_days=1, review_number=2) for i in range(600)]
    long = [Outcome(0.9, i % 10 < 7, elapsed_days=10, review_number=5) for i in range(100)]
    mixed = learner_uncertainty(Tally.of(short + long), decay, [], TODAY)
    only_long = learner_uncertainty(Tally.of(long), decay, [], TODAY)
    pooled = Tally.of(Outcome(0.9, i % 700 < 610, elapsed_days=1, review_number=2) for i in range(700))
    unweighed = learner_uncertainty(pooled, decay, [], TODAY)  # the same recalls, all as one group
    assert mixed.log_scale_mean < unweighed.log_scale_mean - 0.1
    assert only_long.log_scale_mean < mixed.log_scale_mean < 0
    assert mixed.reviews == 700


def test_the_skip_rate_counts_days_without_a_review_since_the_first():
    days = [TODAY + dt.timedelta(days=i) for i in range(0, 28, 2)]  # every other day for four weeks
    rate = skip_rate(days, TODAY + dt.timedelta(days=28))
    assert 0.4 < rate < 0.5  # half the days, drawn a little toward the prior
    assert skip_rate([], TODAY) == skip_rate(days, TODAY)  # nothing before today: the prior
