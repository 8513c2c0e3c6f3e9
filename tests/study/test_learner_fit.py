"""How far the model fits one learner: the log's misfit, the wider forecast it makes, and the warning it gives."""

import datetime as dt

import pytest

from drill.study.calibration import Outcome, Tally, WeekCheck, week_check
from drill.study.forecast import TrackCard
from drill.study.plan import make_plan
from drill.study.uncertainty import (
    MIN_GROUP_REVIEWS,
    Uncertainty,
    chi_square_quantile,
    learner_uncertainty,
    shape_fit,
)

TODAY = dt.date(2026, 6, 1)
DATE = TODAY + dt.timedelta(days=20)
DECAY = -0.1542


def outcomes(predicted, recalled_share, count, elapsed_days, review_number=3):
    """`count` reviews predicted at `predicted`, the first `recalled_share` of each ten recalled."""
    tenths = round(recalled_share * 10)
    return [
        Outcome(predicted, i % 10 < tenths, elapsed_days=elapsed_days, review_number=review_number)
        for i in range(count)
    ]


# The chi-square and the misfit it shows ---------------------------------------------------------


@pytest.mark.parametrize(("freedom", "exact"), [(1, 10.83), (2, 13.82), (5, 20.52), (10, 29.59), (30, 59.70)])
def test_the_chi_square_quantile_is_close_to_the_tables(freedom, exact):
    assert chi_square_quantile(0.999, freedom) == pytest.approx(exact, rel=0.04)


def test_a_learner_the_model_fits_is_not_told_otherwise_and_keeps_the_factors_spread():
    fitting = Tally.of(
        outcomes(0.9, 0.9, 200, 1) + outcomes(0.9, 0.9, 200, 5) + outcomes(0.9, 0.9, 200, 20, review_number=6)
    )
    fit = shape_fit(fitting, 1.0, DECAY)
    assert fit.freedom == 2 and fit.chi_square == pytest.approx(0.0, abs=1e-9)
    assert not fit.poor
    learner = learner_uncertainty(fitting, DECAY, [], TODAY)
    assert not learner.fits_poorly and learner.dispersion == pytest.approx(0.0, abs=0.05)
    assert learner.run_log_sd == pytest.approx(learner.log_scale_sd)


def test_a_forgetting_curve_of_another_shape_is_said_to_fit_poorly_and_widens_the_factor():
    # short gaps recalled better than predicted, long gaps much worse: no one factor on stability does both
    bent = Tally.of(
        outcomes(0.9, 1.0, 300, 1) + outcomes(0.9, 0.9, 300, 5) + outcomes(0.9, 0.5, 300, 20, review_number=6)
    )
    level = Tally.of(
        outcomes(0.9, 0.8, 300, 1) + outcomes(0.9, 0.8, 300, 5) + outcomes(0.9, 0.8, 300, 20, review_number=6)
    )
    poor = learner_uncertainty(bent, DECAY, [], TODAY)
    plain = learner_uncertainty(level, DECAY, [], TODAY)  # as many reviews, the same shortfall at every gap
    assert poor.fits_poorly and poor.dispersion > 10
    assert not plain.fits_poorly
    assert poor.run_log_sd > 2 * plain.run_log_sd
    assert poor.run_log_sd > 2 * poor.log_scale_sd  # the early reviews keep the posterior's own spread
    assert plain.run_log_sd == pytest.approx(plain.log_scale_sd, rel=0.1)


def test_groups_too_small_to_judge_by_are_left_out_of_the_misfit():
    small = Tally.of(
        outcomes(0.9, 0.0, MIN_GROUP_REVIEWS - 1, 1)
        + outcomes(0.9, 0.0, MIN_GROUP_REVIEWS - 1, 5)
        + outcomes(0.9, 0.0, MIN_GROUP_REVIEWS - 1, 20)
    )
    fit = shape_fit(small, 1.0, DECAY)
    assert fit.freedom == -1 and not fit.poor
    assert not learner_uncertainty(Tally(), DECAY, [], TODAY).fits_poorly


def test_the_weeks_check_says_when_the_whole_log_shows_a_poor_fit_even_in_a_quiet_week():
    quiet = week_check(outcomes(0.9, 0.9, 5, 1))
    assert not quiet.outside and "too few to judge" in quiet.line()
    told = quiet.with_model_fit(True)
    assert told.outside and not told.week_outside
    assert "fits you poorly" in told.line() and "drill fsrs fit" in told.line()
    assert told.as_json()["model_fits_poorly"] is True
    assert WeekCheck(0, None, None).with_model_fit(True).outside
    assert "fits you poorly" in WeekCheck(0, None, None, True).line()


def test_a_poor_fit_widens_the_forecasts_interval_but_not_the_early_reviews():
    cards = [TrackCard(f"c{i}", "serving", "concept") for i in range(60)]
    fitting = Uncertainty(0.0, 0.1, 0.0)
    poor = Uncertainty(0.0, 0.1, 0.0, dispersion=26.0, misfit_log_sd=0.5, fits_poorly=True)
    assert poor.cautious_factor == fitting.cautious_factor
    narrow = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=40, uncertainty=fitting)
    wide = make_plan(cards, today=TODAY, date=DATE, minutes_per_day=40, uncertainty=poor)
    assert wide.forecast.high - wide.forecast.low > 1.5 * (narrow.forecast.high - narrow.forecast.low)


def test_the_app_tells_a_learner_whose_log_the_model_does_not_fit(tmp_path, monkeypatch):
    # a learner who keeps every card for a day or two and loses every one after longer: no one factor on FSRS's
    # stabilities says that, and their own log shows it
    from drill import api, paths
    from tests.readiness_world import START, make_world

    me = api.open(make_world(tmp_path, monkeypatch), [paths.cards_dir()], read_config=False)
    me.use_scheduler("fsrs")
    me.set_interview(START + dt.timedelta(days=40), track="kernels", minutes_per_day=120)
    last: dict[str, dt.date] = {}
    for offset in range(24):
        day = START + dt.timedelta(days=offset)
        me.set_day(day)
        session = me.start_day()
        graded_today: set[str] = set()
        while (card := session.current) is not None:
            kept = card.id not in last or card.id in graded_today or (day - last[card.id]).days <= 2
            session.grade(4 if kept else 1, seconds=20.0)
            graded_today.add(card.id)
            last[card.id] = day
    forecast = me.forecast()
    figures = me.workspace.readiness(me.day, new_order=me.settings.new_order, suggest=False)
    me.close()
    assert figures is not None and figures.plan is not None
    assert figures.plan.uncertainty.fits_poorly and figures.week.model_fits_poorly
    assert forecast is not None and forecast.week_outside and "drill fsrs fit" in forecast.week_line
