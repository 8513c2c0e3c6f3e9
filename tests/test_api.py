"""drill.api: a script opens a data folder, sets the day, reads the plan, takes the day's queue, grades, reads the forecast."""

import dataclasses
import datetime as dt
import typing

from drill import api, paths
from tests.readiness_world import START, make_world

DATE = START + dt.timedelta(days=14)


def learner(tmp_path, monkeypatch):
    data = make_world(tmp_path, monkeypatch)
    return api.open(data, [paths.cards_dir()], read_config=False)


def test_without_a_plan_the_day_is_the_fixed_queue_served_until_the_minutes_given(tmp_path, monkeypatch):
    me = learner(tmp_path, monkeypatch)
    me.set_day(START)
    assert len(me.cards()) == 36 and me.plan() is None and me.forecast() is None
    day = me.start_day(budget_minutes=3)
    assert len(day.left) == 10  # ten new cards a day
    served = []
    while day.current is not None:
        served.append(day.grade(4, seconds=50.0).card_id)
    assert len(served) == 4  # 200 s: the fourth card took the day past its three minutes
    assert len(day.held_back) == 6 and day.spent_minutes == 200 / 60
    again = me.start_day(budget_minutes=3)  # the same day later: the minutes already spent count
    assert again.budget_minutes == 0 and again.current is None and len(again.held_back) == 6
    me.close()


def test_with_a_plan_the_queue_is_the_plans_day_and_the_forecast_has_an_interval(tmp_path, monkeypatch):
    me = learner(tmp_path, monkeypatch)
    me.set_day(START)
    me.set_interview(DATE, track="kernels", minutes_per_day=15)
    plan = me.plan()
    assert plan is not None and plan.date == DATE and plan.minutes_per_day == 15
    assert plan.today_new and plan.today_minutes <= 15
    day = me.start_day()
    assert day.budget_minutes == 15
    assert list(day.left) == list(plan.today_new)  # a new user: nothing due, the plan's new cards in its order
    while (card := day.current) is not None:
        assert card.topic in ("gpu-arch", "fusion")  # the kernels track's topics of this deck
        day.grade(4, seconds=30.0)
    assert list(day.introduced) == list(plan.today_new)
    forecast = me.forecast()
    assert forecast is not None and forecast.on == DATE
    assert 0 <= forecast.low <= forecast.mean <= forecast.high <= 1
    assert forecast.stop_now > 0 and forecast.week_reviews == 0 and not forecast.week_outside
    me.set_day(START + dt.timedelta(days=1))
    tomorrow = me.plan()
    assert tomorrow is not None and set(tomorrow.today_new).isdisjoint(plan.today_new)
    assert me.pace_seconds()["concept"] < 60  # thirty seconds a view moves the default toward the learner's
    assert me.calibration().reviews == 0  # no review has been predicted yet: each card was seen once
    me.close()


def test_the_records_are_typed():
    for record in (api.CardInfo, api.PlanSummary, api.Forecast, api.Calibration, api.GradeResult):
        assert dataclasses.is_dataclass(record)
        for hint in typing.get_type_hints(record).values():
            assert "dict" not in str(hint) and "Any" not in str(hint)
