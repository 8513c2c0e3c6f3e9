"""Readiness for the interview date on the screens: the days left on the review screen's top bar, the
readiness chart and the forecast's calibration on the stats screen."""

import datetime as dt
from typing import Any

import pytest

from drill.config.settings import Settings
from drill.start import AppOptions
from drill.study.calibration import Calibration, CalibrationBin
from drill.study.forecast import Readiness, TopicReadiness
from drill.study.plan import PlanDay, StudyPlan, TopicCut
from drill.study.plan_runs import Forecast
from drill.study.readiness import Interview, ReadinessFigures, TopicLine
from drill.ui.app import DrillApp, make_app
from drill.ui.markdown_view import MarkdownView
from drill.ui.mock_report_screen import MockReportScreen
from drill.ui.mock_screen import MockScreen
from drill.ui.readiness_view import (
    ENOUGH_REVIEWS,
    TARGET_MARK,
    CalibrationChart,
    ReadinessChart,
    by_gap,
    calibration_bar,
    calibration_rows,
    mock_line,
    readiness_bar,
    today_line,
    what_would_fit,
)
from drill.ui.review_words import interview_countdown
from drill.ui.stats_screen import StatsScreen
from tests.conftest import FixedClock, settle, type_keys
from tests.ui import test_mock, test_stats
from tests.ui.test_review import top_text
from tests.ui.test_stats import open_stats

NOW = dt.datetime(2026, 5, 10, 12, 0)
TODAY = NOW.date()
seeded = test_stats.seeded  # the fixture: eight weeks of reviews, a mock and kernel runs


def readiness_figures(
    topics: dict[str, tuple[float, float]] | None = None,
    *,
    date: dt.date = dt.date(2026, 5, 27),
    target: float = 0.9,
    minutes: int = 30,
    fits: bool = True,
    track: str | None = "inference",
) -> ReadinessFigures:
    """Readiness as the workspace hands it to the stats screen: `topics` maps each topic to (stop now, with the plan)."""
    topics = topics or {"serving": (0.3, 0.92), "gpu-arch": (0.75, 0.95), "collectives": (0.5, 0.9)}
    stop_now = sum(v[0] for v in topics.values()) / len(topics)
    with_plan = sum(v[1] for v in topics.values()) / len(topics)
    now = Readiness(date, stop_now, 10 * len(topics), tuple(TopicReadiness(t, 10, v[0]) for t, v in topics.items()))
    planned = Readiness(
        date, with_plan, 10 * len(topics), tuple(TopicReadiness(t, 10, v[1]) for t, v in topics.items())
    )
    days = tuple(
        PlanDay(
            day=TODAY + dt.timedelta(days=i),
            new_cards=tuple(f"new-{i}-{n}" for n in range(4)),
            reviews=10 + i,
            early_reviews=0,
            minutes=20 + i,
            mock=i == 7,
        )
        for i in range((date - TODAY).days)
    )
    plan = StudyPlan(
        today=TODAY,
        date=date,
        minutes_per_day=minutes,
        target=target,
        new_per_day=4,
        days=days,
        fits=fits,
        reasons=() if fits else ("the busiest day needs 62 minutes, more than the 30 given",),
        minutes_needed=None if fits else 62,
        leave_out=() if fits else (TopicCut("collectives", 10, 30.0),),
        mocks=tuple(day.day for day in days if day.mock),
        now=now,
        planned=planned,
        forecast=Forecast(with_plan, with_plan - 0.1, min(1.0, with_plan + 0.05), 0.6, 0.5),
    )
    titles = {t: t.title() for t in topics}
    return ReadinessFigures(Interview(date, track, target, minutes), TODAY, now, plan, titles)


def plan_day(new: int, reviews: float, early: float, minutes: float) -> PlanDay:
    """Today's share of a plan: `new` cards to introduce, reviews (early ones among them) and minutes."""
    return PlanDay(TODAY, tuple(f"new-{n}" for n in range(new)), reviews, early, minutes, mock=False)


def calibration(reviews: int = 512) -> Calibration:
    """Predicted recall against what happened, as the workspace hands it to the stats screen."""
    bins = (
        CalibrationBin(0.5, 0.6, 12, 0.55, 0.5),
        CalibrationBin(0.8, 0.9, 40, 0.85, 0.82),
        CalibrationBin(0.9, 1.0, 300, 0.95, 0.96),
    )
    return Calibration(reviews, bins, 0.41, 0.05)


# -- the pieces, as pure functions ----------------------------------------------------------------
@pytest.mark.parametrize(
    "date, words",
    [
        (dt.date(2026, 5, 22), "12 days to the interview"),
        (dt.date(2026, 5, 11), "1 day to the interview"),
        (TODAY, "interview today"),
        (dt.date(2026, 5, 9), ""),  # it has passed
        (None, ""),
    ],
)
def test_the_days_left_in_words(date, words):
    assert interview_countdown(date, TODAY) == words


def test_a_readiness_bar_shows_now_then_what_the_plan_adds_and_marks_the_target():
    assert readiness_bar(0.3, 0.8, 0.9, 10) == "███▒▒▒▒▒·│"  # a bar that reaches the target ends at its mark
    assert readiness_bar(0.5, 0.4, 0.9, 10) == "█████····│"  # a lower plan takes nothing from now
    assert readiness_bar(1.0, 1.0, 0.9, 10) == "█████████│"


def test_a_calibration_bar_fills_to_the_pass_rate_and_marks_the_prediction():
    assert calibration_bar(0.85, 0.5, 10) == "█████···│·"
    assert calibration_bar(0.0, 0.0, 4) == "│···"


def test_empty_bins_are_left_out_and_the_rest_ordered_by_prediction():
    bins = (
        CalibrationBin(0.9, 1.0, 30, 0.95, 0.9),
        CalibrationBin(0.5, 0.6, 0, None, None),
        CalibrationBin(0.4, 0.5, 4, 0.45, 0.5),
    )
    assert calibration_rows(Calibration(34, bins, None, None)) == [(0.45, 0.5, 4), (0.95, 0.9, 30)]


def test_topics_furthest_from_the_target_come_first():
    topics = [TopicLine(name, name, 10, 0.9 - gap, 0.9) for name, gap in [("a", 0.1), ("b", 0.6), ("c", 0.1)]]
    assert [t.topic for t in by_gap(topics, 0.9)] == ["b", "a", "c"]


def test_todays_plan_and_the_next_mock_in_words():
    plan = readiness_figures().plan
    assert plan is not None
    assert today_line(plan_day(1, 12.4, 3.2, 27.6), 30) == (
        "Today: 1 new card and 12 reviews (3 early), about 28 of your 30 minutes"
    )
    assert mock_line(plan, TODAY) == "Next mock interview: Sun 17 May"
    assert mock_line(plan, dt.date(2026, 5, 17)).startswith("A mock interview today")
    assert mock_line(plan, dt.date(2026, 5, 18)) == ""  # the plan's only mock is behind


def test_what_would_fit_names_the_minutes_and_the_topics_by_title():
    plan = readiness_figures(fits=False).plan
    fitting = readiness_figures().plan
    assert plan is not None and fitting is not None
    titles = {"collectives": "Collectives (NCCL)"}.get
    assert what_would_fit(plan, lambda t: titles(t) or t) == (
        "It would fit with 62 minutes a day or leaving out Collectives (NCCL)."
    )
    assert what_would_fit(fitting, str) == ""


# -- the review screen's top bar -----------------------------------------------------------------
@pytest.mark.parametrize(
    "now, shown",
    [
        (dt.datetime(2026, 5, 10, 12, 0), "12 days to the interview"),
        (dt.datetime(2026, 5, 22, 3, 0), "1 day to the interview"),  # before 4 AM: still the study day before
        (dt.datetime(2026, 5, 22, 9, 0), "interview today"),
        (dt.datetime(2026, 5, 23, 9, 0), None),
    ],
    ids=["12 days", "the night before", "the day", "after"],
)
async def test_the_top_bar_counts_the_days_to_the_interview(tmp_path, concept_deck, now, shown):
    settings = Settings(interview_date=dt.date(2026, 5, 22))
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(now), settings=settings))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        top = top_text(app)
        assert top.startswith("done 0 · left ")
        if shown is None:
            assert "interview" not in top
        else:
            assert shown in top


async def test_the_days_left_stay_beside_the_grades_saved(tmp_path, concept_deck):
    settings = Settings(interview_date=dt.date(2026, 5, 22))
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW), settings=settings))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "4")  # a grade redraws the bar
        await settle(pilot)
        assert "saved · 12 days to the interview │" in top_text(app)  # after the count of grades saved


async def test_without_an_interview_date_the_top_bar_is_as_before(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert top_text(app).startswith("done 0 · left 2 │ concept")


# -- the stats screen ----------------------------------------------------------------------------
INTERVIEW = dt.date(2026, 5, 27)


def app_with_a_date(deck, data, **settings: Any) -> DrillApp:
    chosen = Settings(interview_date=INTERVIEW, **settings)
    return make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1, settings=chosen))


def chart_rows(text: str) -> list[str]:
    """The names of the readiness chart's rows, overall first, as shown."""
    lines = text.splitlines()
    legend = next(i for i, line in enumerate(lines) if TARGET_MARK in line)
    return [line.split("  ")[0].strip() for line in lines[legend + 1 :] if "→" in line]


async def test_the_stats_screen_shows_readiness_furthest_from_the_target_first(seeded):
    deck, data, _ = seeded
    app = app_with_a_date(deck, data)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_stats(pilot)
        figures = app.workspace.readiness(TODAY)
        assert figures is not None
        expected = figures.as_json()
        text = screen.query_one("#stready", ReadinessChart).render().plain
        assert text.startswith("Interview Wed 27 May · 17 days left · every topic")
        rows = chart_rows(text)
        assert rows[0] == "overall"
        shown = [next(t for t in expected["topics"] if t["title"].startswith(row.rstrip("…"))) for row in rows[1:]]
        assert sorted(t["topic"] for t in shown) == sorted(t["topic"] for t in expected["topics"])
        gaps = [t["gap"] for t in shown]
        assert gaps == sorted(gaps, reverse=True) and rows[1] == "Transformer shapes"  # failed most, furthest
        overall = next(line for line in text.splitlines() if line.startswith("overall"))
        now, plan = expected["overall"]["stop_now"], expected["overall"]["with_plan"]
        assert f"{now * 100:.0f}% →  {plan * 100:.0f}%" in overall
        assert "Today: " in text and "Next mock interview: Mon 11 May" in text
        # the readiness comes first: it is what a learner with a date set opened the screen for
        assert screen.query_one("#stready").region.y < screen.query_one("#sttopics").region.y


async def test_the_stats_screen_shows_how_the_forecast_matched_the_record(seeded):
    deck, data, _ = seeded
    app = make_app(
        AppOptions(data, [deck], clock=FixedClock(NOW), seed=1)
    )  # no date: calibration is shown all the same
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        assert not screen.query("#stready")
        expected = app.workspace.calibration().as_json()
        text = screen.query_one("#stcalibration", CalibrationChart).render().plain
        lines = text.splitlines()
        assert lines[0] == f"How the forecast matched your record · {expected['reviews']} reviews"
        assert lines[1] == (
            f"log loss {expected['log_loss']:.2f} · RMSE(bins) {expected['rmse_bins']:.3f} (lower is better)"
        )
        rows = [line.split()[:3] for line in lines[3:]]
        assert rows == [
            [f"{b['predicted'] * 100:.0f}%", f"{b['actual'] * 100:.0f}%", str(b["count"])]
            for b in sorted(expected["bins"], key=lambda b: b["predicted"])
        ]
        assert all(len(line) <= 78 for line in lines)  # the bars fit the 80 columns beside the scrollbar


async def test_a_short_record_needs_more_reviews(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(3)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_stats(pilot)
        text = screen.query_one("#stcalibration", CalibrationChart).render().plain
        assert (
            text
            == f"How the forecast matched your record · needs more reviews: 0 of the {ENOUGH_REVIEWS} that make a fair check"
        )


async def test_a_plan_that_cannot_fit_says_what_would(seeded):
    deck, data, report = seeded
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = StatsScreen(report, {"collectives": "Collectives"}, readiness_figures(fits=False), calibration())
        await app.push_screen(screen)
        await settle(pilot)
        lines = screen.query_one("#stready").render().plain.splitlines()
        # the week's check of the forecast closes the chart, after what the plan says
        assert lines[-1] == "Forecast vs what happened (7 days): no predicted review yet"
        assert lines[-3:-1] == [
            "The plan cannot fit: the busiest day needs 62 minutes, more than the 30 given.",
            "It would fit with 62 minutes a day or leaving out Collectives.",
        ]


def test_a_day_the_plan_makes_longer_than_the_minutes_given_says_so():
    assert (
        today_line(plan_day(17, 4, 0, 53), 30)
        == "Today: 17 new cards and 4 reviews, about 53 minutes, more than your 30"
    )
    assert today_line(plan_day(0, 0, 0, 0), 30) == "Today: nothing new and nothing due"


# -- the mock report -----------------------------------------------------------------------------
@pytest.mark.parametrize("date", [INTERVIEW, None], ids=["a date set", "no date"])
async def test_a_mocks_report_carries_readiness_on_the_date(tmp_path, write_deck, date):
    deck = write_deck(test_mock.DECK + test_mock.MORE)
    data = tmp_path / "d"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=4, settings=Settings(interview_date=date)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await test_mock.open_mock(pilot, app)
        for _ in range(10):
            if not isinstance(app.screen, MockScreen):
                break
            await test_mock.answer_current(pilot, screen)
        assert isinstance(app.screen, MockReportScreen)
        shown = app.screen.query_one("#rtext", MarkdownView).source
        if date is None:
            assert app.screen.report.readiness is None and "Readiness on" not in shown
            return
        figures = app.workspace.readiness(TODAY)  # read after the mock: its answers count
        assert figures is not None
        line = figures.summary_line()
        assert line.startswith("Readiness on 2026-05-27 (17 days left): ")
        assert app.screen.report.readiness == line and line in shown
