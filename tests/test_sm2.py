import datetime as dt

import pytest

from drill.sm2 import SM2State, next_ef, review

DAY = dt.date(2026, 1, 1)


@pytest.mark.parametrize(
    "grade, ef",
    [(5, 2.6), (4, 2.5), (3, 2.36), (2, 2.18), (1, 1.96), (0, 1.7)],
)
def test_ef_update_from_the_published_formula(grade, ef):
    assert next_ef(2.5, grade) == pytest.approx(ef)


def test_ef_never_falls_below_1_3():
    s = SM2State(ef=1.35)
    assert review(s, 0, DAY).ef == 1.3
    assert review(SM2State(ef=1.3), 3, DAY).ef == 1.3


@pytest.mark.parametrize(
    "before, grade, after",
    [
        (SM2State(), 4, SM2State(1, 2.5, 1, DAY + dt.timedelta(1))),
        (SM2State(1, 2.5, 1), 5, SM2State(2, 2.6, 6, DAY + dt.timedelta(6))),
        # third success: ceil(6 * 2.6) = ceil(15.6) = 16
        (SM2State(2, 2.5, 6), 5, SM2State(3, 2.6, 16, DAY + dt.timedelta(16))),
        # ceil rounding with the new ef: 16 * 2.36 = 37.76 -> 38
        (SM2State(3, 2.5, 16), 3, SM2State(4, 2.36, 38, DAY + dt.timedelta(38))),
        # an exact product is not rounded up: 10 * 2.5 = 25
        (SM2State(3, 2.5, 10), 4, SM2State(4, 2.5, 25, DAY + dt.timedelta(25))),
        # failure restarts repetitions, interval 1, ef still updated
        (SM2State(5, 2.5, 40), 2, SM2State(0, 2.18, 1, DAY + dt.timedelta(1))),
        (SM2State(5, 1.4, 40), 0, SM2State(0, 1.3, 1, DAY + dt.timedelta(1))),
    ],
)
def test_transitions(before, grade, after):
    got = review(before, grade, DAY)
    assert got.repetitions == after.repetitions
    assert got.ef == pytest.approx(after.ef)
    assert got.interval == after.interval
    assert got.due == after.due


def test_review_is_pure():
    s = SM2State()
    review(s, 5, DAY)
    assert s == SM2State()
    assert review(s, 5, DAY) == review(s, 5, DAY)


@pytest.mark.parametrize("grade", [-1, 6, 2.5, None, True])
def test_bad_grade_rejected(grade):
    with pytest.raises(ValueError):
        review(SM2State(), grade, DAY)
