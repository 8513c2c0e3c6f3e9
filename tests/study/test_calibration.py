"""Calibration of predicted recall: ten bins, log loss and srs-benchmark's RMSE(bins), on constructed histories."""

import math

import pytest

from drill.study.calibration import Outcome, benchmark_bin, calibrate, log_loss, rmse_bins, value_bins


def test_log_loss_of_a_known_case():
    # -(ln 0.8 + ln 0.2) / 2: one confident pass and one confident miss
    outcomes = [Outcome(0.8, True), Outcome(0.8, False)]
    assert log_loss(outcomes) == pytest.approx((-math.log(0.8) - math.log(0.2)) / 2)
    assert log_loss(outcomes) == pytest.approx(0.9163, abs=1e-4)


def test_log_loss_of_a_coin_is_ln_2():
    assert log_loss([Outcome(0.5, True), Outcome(0.5, False)]) == pytest.approx(math.log(2))


def test_a_certain_miss_is_a_large_loss_not_an_infinite_one():
    loss = log_loss([Outcome(1.0, False)])
    assert loss is not None and math.isfinite(loss) and loss > 30


def test_ten_value_bins_on_a_constructed_history():
    outcomes = [Outcome(0.95, i < 9) for i in range(10)]  # predicted 95 %, 9 of 10 recalled
    outcomes += [Outcome(0.05, False), Outcome(0.05, False), Outcome(1.0, True), Outcome(0.5, True)]
    bins = value_bins(outcomes)
    assert len(bins) == 10
    assert [b.reviews for b in bins] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 11]
    top = bins[9]
    assert (top.low, top.high) == (0.9, 1.0)
    assert top.predicted == pytest.approx((0.95 * 10 + 1.0) / 11)
    assert top.actual == pytest.approx(10 / 11)
    assert bins[0].actual == 0.0 and bins[5].actual == 1.0
    assert bins[1].predicted is None and bins[1].actual is None


@pytest.mark.parametrize(
    "outcome, group",
    [
        # srs-benchmark's bins: 2.48 * 3.62^k days, round(1.99 * 1.89^k) reviews, round(1.65 * 1.73^k) lapses
        (Outcome(0.9, True, elapsed_days=1, review_number=2, lapses=0), (2.48, 4.0, 0.0)),
        (Outcome(0.9, True, elapsed_days=3, review_number=3, lapses=1), (2.48, 4.0, 2.0)),
        (Outcome(0.9, True, elapsed_days=4, review_number=4, lapses=2), (8.98, 7.0, 3.0)),
        (Outcome(0.9, True, elapsed_days=30, review_number=10, lapses=5), (32.5, 13.0, 5.0)),
    ],
)
def test_benchmark_bins(outcome, group):
    assert benchmark_bin(outcome) == pytest.approx(group)


def test_rmse_bins_weights_each_group_by_its_size():
    # group A: 3 reviews a day after, predicted 0.9, all recalled (gap 0.1);
    # group B: 1 review 30 days after, predicted 0.5, forgotten (gap 0.5)
    outcomes = [Outcome(0.9, True, 1, 2, 0)] * 3 + [Outcome(0.5, False, 30, 2, 0)]
    assert rmse_bins(outcomes) == pytest.approx(math.sqrt((3 * 0.1**2 + 0.5**2) / 4))


def test_rmse_bins_compares_means_within_a_group_not_each_review():
    # one group: mean prediction 0.8 against a pass rate of 0.8 is perfectly calibrated
    outcomes = [Outcome(0.8, i < 8, 2, 2, 0) for i in range(10)]
    assert rmse_bins(outcomes) == pytest.approx(0.0)
    assert log_loss(outcomes) == pytest.approx(-(0.8 * math.log(0.8) + 0.2 * math.log(0.2)))


def test_no_reviews_no_figures():
    calibration = calibrate([])
    assert (calibration.reviews, calibration.log_loss, calibration.rmse_bins) == (0, None, None)
    assert all(b.reviews == 0 for b in calibration.bins)
    assert calibration.as_json()["bins"][0] == {
        "low": 0.0,
        "high": 0.1,
        "reviews": 0,
        "predicted": None,
        "actual": None,
    }


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_a_prediction_outside_0_1_is_refused(bad):
    with pytest.raises(ValueError, match="between 0 and 1"):
        calibrate([Outcome(bad, True)])


def test_the_weeks_check_says_when_recalls_fall_outside_the_forecast():
    from drill.study.calibration import MIN_WEEK_REVIEWS, week_check

    honest = week_check(Outcome(0.9, i % 10 != 0) for i in range(100))
    assert honest.reviews == 100 and not honest.outside and "within the forecast" in honest.line()
    short = week_check(Outcome(0.9, i % 10 < 6) for i in range(100))  # 60 % recalled of 90 % predicted
    assert short.outside and "drill fsrs fit" in short.line()
    few = week_check(Outcome(0.9, False) for i in range(MIN_WEEK_REVIEWS - 1))
    assert not few.outside and "too few to judge" in few.line()
    assert week_check([]).line().endswith("no predicted review yet")
