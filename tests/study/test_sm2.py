import datetime as dt

import pytest

from drill.study.sm2 import DEFAULT_MAX_INTERVAL, SM2State, days_after, next_ef, review

DAY = dt.date(2026, 1, 1)


@pytest.mark.parametrize(
    "grade, ef",
    [(5, 2.6), (4, 2.5), (3, 2.36), (2, 2.18), (1, 1.96), (0, 1.7)],
)
def test_ef_update_from_the_published_formula(grade, ef):
    assert next_ef(2.5, grade) == pytest.approx(ef)


def test_ef_never_falls_below_1_3():
    assert review(SM2State(ef=1.35), 3, DAY).ef == 1.3  # 1.35 - 0.14
    assert review(SM2State(ef=1.3), 3, DAY).ef == 1.3


@pytest.mark.parametrize("grade", [0, 1, 2])
def test_a_failing_grade_restarts_the_repetitions_without_changing_the_ef(grade):
    """SuperMemo 1990, step 6: "start repetitions for the item from the beginning without changing the E-Factor"."""
    after = review(SM2State(5, 1.35, 40), grade, DAY)
    assert (after, days_after(DAY, after.interval)) == (SM2State(0, 1.35, 1), DAY + dt.timedelta(1))


def test_grades_4_0_4_4_4_4_give_the_published_intervals():
    """With EF 2.5 kept through the lapse: 1, 1, then 1, 6, 6 x 2.5 = 15, 15 x 2.5 = 37.5 -> 38 (rounded up).

    drill's earlier variant lowered the EF to 1.7 on the 0 and gave 1, 1, 1, 6, 11, 19.
    """
    state, day, intervals = SM2State(), DAY, []
    for grade in (4, 0, 4, 4, 4, 4):
        state = review(state, grade, day)
        intervals.append(state.interval)
        day = days_after(day, state.interval)
    assert intervals == [1, 1, 1, 6, 15, 38]
    assert state.ef == 2.5


@pytest.mark.parametrize(
    "before, grade, after, due",
    [
        (SM2State(), 4, SM2State(1, 2.5, 1), DAY + dt.timedelta(1)),
        (SM2State(1, 2.5, 1), 5, SM2State(2, 2.6, 6), DAY + dt.timedelta(6)),
        # third success: ceil(6 * 2.6) = ceil(15.6) = 16
        (SM2State(2, 2.5, 6), 5, SM2State(3, 2.6, 16), DAY + dt.timedelta(16)),
        # ceil rounding with the new ef: 16 * 2.36 = 37.76 -> 38
        (SM2State(3, 2.5, 16), 3, SM2State(4, 2.36, 38), DAY + dt.timedelta(38)),
        # an exact product is not rounded up: 10 * 2.5 = 25
        (SM2State(3, 2.5, 10), 4, SM2State(4, 2.5, 25), DAY + dt.timedelta(25)),
        # failure restarts repetitions, interval 1, ef as it was (the published rule)
        (SM2State(5, 2.5, 40), 2, SM2State(0, 2.5, 1), DAY + dt.timedelta(1)),
        (SM2State(5, 1.4, 40), 0, SM2State(0, 1.4, 1), DAY + dt.timedelta(1)),
    ],
)
def test_transitions(before, grade, after, due):
    got = review(before, grade, DAY)
    assert got.repetitions == after.repetitions
    assert got.ef == pytest.approx(after.ef)
    assert got.interval == after.interval
    assert days_after(DAY, got.interval) == due


def test_review_is_pure():
    s = SM2State()
    review(s, 5, DAY)
    assert s == SM2State()
    assert review(s, 5, DAY) == review(s, 5, DAY)


@pytest.mark.parametrize("grade", [-1, 6, 2.5, None, True])
def test_bad_grade_rejected(grade):
    with pytest.raises(ValueError):
        review(SM2State(), grade, DAY)


# The maximum interval -----------------------------------------------------------------


def test_thirteen_perfect_grades_stop_at_the_maximum_interval():
    """Uncapped, the 10th interval would be 58,443 days and the 13th 2,958,156, past the calendar's last date."""
    state, day, intervals = SM2State(), DAY, []
    for _ in range(14):
        state = review(state, 5, day)
        intervals.append(state.interval)
        day = days_after(day, state.interval)
    assert intervals == [1, 6, 17, 50, 150, 465, 1488, 4911, 16698] + [36500] * 5
    assert DEFAULT_MAX_INTERVAL == 36500


@pytest.mark.parametrize("cap", [1, 5, 6, 30, 365])
def test_a_lower_maximum_caps_every_step(cap):
    state, day = SM2State(), DAY
    for _ in range(12):
        state = review(state, 5, day, max_interval=cap)
        assert 1 <= state.interval <= cap and days_after(day, state.interval) == day + dt.timedelta(state.interval)
        day = days_after(day, state.interval)
    assert state.interval == cap


def test_an_interval_too_large_for_a_float_is_capped_before_it_is_multiplied():
    """A state imported from elsewhere may hold any whole number; 10**400 * 2.5 would raise OverflowError."""
    after = review(SM2State(7, 2.5, 10**400), 4, DAY)
    assert after.interval == DEFAULT_MAX_INTERVAL


def test_a_due_date_past_the_calendar_is_its_last_day():
    near_the_end = dt.date(9990, 1, 1)
    after = review(SM2State(12, 2.5, 36500), 5, near_the_end)
    assert (after.interval, days_after(near_the_end, after.interval)) == (36500, dt.date.max)
    again = review(after, 5, dt.date.max)
    assert (again.interval, days_after(dt.date.max, again.interval)) == (36500, dt.date.max)
    assert days_after(dt.date(2026, 1, 1), 31) == dt.date(2026, 2, 1)
    assert days_after(dt.date.max - dt.timedelta(3), 3) == dt.date.max
    assert days_after(dt.date.max - dt.timedelta(3), 4) == dt.date.max


@pytest.mark.parametrize("cap", [0, -1, 2.5, None, True])
def test_a_maximum_interval_below_one_day_is_refused(cap):
    with pytest.raises(ValueError, match="maximum interval"):
        review(SM2State(), 5, DAY, max_interval=cap)
