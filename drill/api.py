"""drill as a library: open a data folder, set the day, read the plan, take the day's queue, grade, read the forecast.

The calls are the app's own: the plan is drill.workspace.Workspace.readiness, the day's queue is
Workspace.review_session (with an interview date, the plan's list for the day, served until the
minutes given are spent), a grade is ReviewSession.grade written through the Store. Records are
frozen dataclasses; nothing here returns a dict. README "Scripting drill" shows a session.

    from drill import api

    learner = api.open("/tmp/learner")
    learner.set_day(datetime.date(2026, 3, 2))
    learner.set_interview(datetime.date(2026, 3, 30), track="inference", minutes_per_day=30)
    day = learner.start_day()
    while (card := day.current) is not None:
        day.grade(4, seconds=55.0)
    print(learner.forecast())
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path

from drill.config.settings import Settings, config_path, load_settings
from drill.study.pace import learned_pace
from drill.study.session import DEFAULT_NEW_PER_DAY, Graded, ReviewSession
from drill.workspace import Workspace, studied

STUDY_HOUR = dt.time(12, 0)  # the time of day a scripted review is stamped with (inside any study day)


@dataclass(frozen=True)
class CardInfo:
    """A card as a script sees it."""

    id: str
    topic: str
    kind: str


@dataclass(frozen=True)
class PlanSummary:
    """The plan to the interview date as it stands today."""

    date: dt.date
    minutes_per_day: float
    policy: str  # which way of dealing new cards the planner chose
    fits: bool
    reasons: tuple[str, ...]
    minutes_needed: int | None  # minutes a day the target needs
    today_new: tuple[str, ...]  # today's new cards, as the queue serves them
    today_reviews: int
    today_minutes: float  # expected
    ready_share: float  # expected share of the track at the target on the date


@dataclass(frozen=True)
class Forecast:
    """Predicted recall of the track on the interview date, with the plan followed, and the last week's check."""

    on: dt.date
    mean: float
    low: float  # the interval over the plan's runs (10th and 90th percentiles)
    high: float
    ready_share: float
    stop_now: float  # mean recall on the date if no review happens before it
    week_reviews: int
    week_predicted: float | None
    week_recalled: float | None
    week_outside: bool  # the last week's recalls fell outside the forecast: the app says so
    week_line: str


@dataclass(frozen=True)
class Calibration:
    """Predicted recall against what happened over the learner's whole log."""

    reviews: int
    log_loss: float | None
    rmse_bins: float | None


@dataclass(frozen=True)
class GradeResult:
    card_id: str
    mode: str  # review, early, repeat, cram
    again: bool  # graded below 4: it comes back later today


class Day:
    """The day's queue: `current` is the card to answer, `grade` answers it. Served until the budget is spent."""

    def __init__(self, learner: "Learner", session: ReviewSession) -> None:
        self._learner = learner
        self._session = session

    @property
    def current(self) -> CardInfo | None:
        card = self._session.current
        if card is None:
            return None
        return CardInfo(card.id, card.topic, card.kind)

    @property
    def left(self) -> tuple[str, ...]:
        return tuple(self._session.queue)

    @property
    def held_back(self) -> tuple[str, ...]:
        """Cards the budget left for tomorrow."""
        return tuple(self._session.held_back)

    @property
    def budget_minutes(self) -> float | None:
        budget = self._session.budget_seconds
        return None if budget is None else budget / 60

    @property
    def spent_minutes(self) -> float:
        return self._session.spent_seconds / 60

    @property
    def introduced(self) -> tuple[str, ...]:
        """The cards introduced in this day's session."""
        return tuple(
            g.card_id for g in self._session.history if isinstance(g, Graded) and g.before.introduced_on is None
        )

    def grade(self, grade: int, seconds: float) -> GradeResult:
        """Grade the current card 0-5, having taken `seconds` over it (the plan learns the learner's pace from it)."""
        store = self._learner.workspace.writes()
        now = dt.datetime.combine(self._session.today, STUDY_HOUR)
        graded = self._session.grade(store, grade, now=now, duration_ms=round(seconds * 1000))
        return GradeResult(graded.card_id, graded.mode, graded.repeat_scheduled)


class Learner:
    """One data folder, on the day `set_day` names (the study day of now until then)."""

    def __init__(self, data_dir: Path, decks: list[Path] | None = None, settings: Settings | None = None) -> None:
        self.day = dt.date.today()
        # the settings file of this data folder (or DRILL_CONFIG), as every command finds it for --data-dir
        self.settings = settings if settings is not None else load_settings(config_path(data_dir))
        self.workspace = Workspace(Path(data_dir), decks, settings=self.settings, clock=self._now)
        self.new_per_day = DEFAULT_NEW_PER_DAY

    def _now(self) -> dt.datetime:
        return dt.datetime.combine(self.day, STUDY_HOUR)

    def set_day(self, day: dt.date) -> None:
        self.day = day

    def set_interview(
        self, date: dt.date | None, *, track: str | None = None, minutes_per_day: int = 60, target: float = 0.9
    ) -> None:
        """Plan to `date` over `track` (None: every card) in `minutes_per_day`; None for `date` drops the plan.

        Kept for this Learner only (the app's settings file is `drill plan`'s to write).
        """
        self.settings = replace(
            self.settings,
            interview_date=date,
            interview_track=track or "",
            minutes_per_day=minutes_per_day,
            readiness_target=target,
        )
        self.workspace.settings = self.settings

    def use_scheduler(self, name: str) -> None:
        """Schedule with "sm2" or "fsrs" from now on (a new data folder only: switching replays the log)."""
        from drill.study.scheduling import SETTING

        self.workspace.writes().set_setting(SETTING, name)

    def cards(self, track: str | None = None) -> tuple[CardInfo, ...]:
        """The cards the plan and the day's queue count (a scenario is asked only in a mock round), or one track's."""
        topics = None
        if track is not None:
            from drill.study.tracks import track_topics

            topics = track_topics(track)
        return tuple(
            CardInfo(c.id, c.topic, c.kind)
            for c in studied(self.workspace.summary.cards).values()
            if topics is None or c.topic in topics
        )

    def plan(self) -> PlanSummary | None:
        """The plan as `drill plan` shows it today; None without an interview date (or on the day itself)."""
        figures = self.workspace.readiness(self.day, new_order=self.settings.new_order)
        if figures is None or figures.plan is None:
            return None
        plan = figures.plan
        return PlanSummary(
            date=plan.date,
            minutes_per_day=plan.minutes_per_day,
            policy=plan.policy,
            fits=plan.fits,
            reasons=plan.reasons,
            minutes_needed=plan.minutes_needed,
            today_new=plan.today_cards.new,
            today_reviews=plan.today_cards.reviews,
            today_minutes=plan.today_cards.seconds / 60,
            ready_share=plan.forecast.ready_share,
        )

    def forecast(self) -> Forecast | None:
        """Recall on the interview date with the plan followed, its interval, and the last week's check."""
        figures = self.workspace.readiness(self.day, new_order=self.settings.new_order, suggest=False)
        if figures is None:
            return None
        week = figures.week
        if figures.plan is None:
            mean = figures.now.overall
            low = high = mean
            ready = 0.0
        else:
            mean = figures.plan.forecast.mean
            low = figures.plan.forecast.low
            high = figures.plan.forecast.high
            ready = figures.plan.forecast.ready_share
        return Forecast(
            on=figures.interview.date,
            mean=mean,
            low=low,
            high=high,
            ready_share=ready,
            stop_now=figures.now.overall,
            week_reviews=week.reviews,
            week_predicted=week.predicted,
            week_recalled=week.recalled,
            week_outside=week.outside,
            week_line=week.line(),
        )

    def start_day(self, budget_minutes: float | None = None) -> Day:
        """The day's queue as the app builds it: with an interview date, the plan's cards within its minutes.

        `budget_minutes` caps a day without a plan too (the fixed new-cards-a-day queue, served
        until the minutes are spent); with a plan, the plan's minutes a day are the budget.
        """
        session = self.workspace.review_session(
            self.day, new_per_day=self.new_per_day, new_order=self.settings.new_order
        )
        if session.budget_seconds is None and budget_minutes is not None:
            spent = self.spent_today_seconds()
            session.budget_seconds = max(0.0, budget_minutes * 60 - spent)
            session.hold_back_past_budget()
        return Day(self, session)

    def spent_today_seconds(self) -> float:
        """Seconds of timed views logged on the day."""
        from drill.study.pace import TIMED_MODES

        return (
            sum(r.duration_ms for r in self.workspace.review_log() if r.day == self.day and r.mode in TIMED_MODES)
            / 1000
        )

    def pace_seconds(self) -> dict[str, float]:
        """Seconds per view by kind, as the plan counts them from this learner's log."""
        kinds = {c.id: c.kind for c in self.workspace.summary.cards.values()}
        return learned_pace(self.workspace.review_log(), kinds).by_kind()

    def calibration(self) -> Calibration:
        """The stats screen's calibration: predictions over the learner's own log against what happened."""
        result = self.workspace.calibration().result
        return Calibration(result.reviews, result.log_loss, result.rmse_bins)

    def close(self) -> None:
        self.workspace.close()


def open(data_dir: Path | str, decks: list[Path] | None = None, *, read_config: bool = True) -> Learner:
    """A learner's data folder (made on the first grade); `decks` None: the bundled decks.

    `read_config` False leaves the settings file out: drill's defaults, whatever the machine's file says.
    """
    return Learner(Path(data_dir), decks, None if read_config else Settings())
