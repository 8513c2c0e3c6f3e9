"""The schedulers, SM-2 (the default) and FSRS, behind one interface, and switching between them by replaying the log.

Both schedule in study days: a grade moves the card's one due date (`CardState.due`,
the date the queue reads). SM-2's repetitions, ease and interval are kept under either
scheduler, so lapses, leeches and cram's hardest-first order mean the same under both;
FSRS adds its stability, difficulty and state (`CardState.fsrs`), which SM-2 leaves None.

Neither schedules a card further out than the maximum interval (`max_interval`, in days;
sm2.DEFAULT_MAX_INTERVAL unless the settings file says otherwise), live or in a replay, and
no due date passes the last date the calendar holds.

The review log holds what either needs: each grade, the study day it counted for and
its mode. Switching rebuilds every reviewed card's schedule from the log with the other
scheduler (`switch_scheduler`); the log is only read, so switching and back gives the
same states again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Protocol

from drill.study import sm2
from drill.study.records import CardState, FSRSState, LoggedReview

if TYPE_CHECKING:
    import fsrs

SCHEDULERS = ("sm2", "fsrs")
DEFAULT_SCHEDULER = "sm2"
SETTING = "scheduler"  # the key in the saved settings
# The saved setting holding FSRS parameters fitted to the learner (`drill fsrs fit`), a JSON list;
# absent, FSRS uses the fsrs package's defaults. It lives in the database beside the log it was fitted to.
PARAMETERS_SETTING = "fsrs_parameters"
PARAMETER_COUNT = 21  # FSRS-6's parameters (fsrs.scheduler.DEFAULT_PARAMETERS)
LEECH_LAPSES = 8
EARLY = (
    "early"  # the review log's mode of a review brought forward for the interview date (session.ReviewSession.early)
)
MOCK_PASS = 0.6  # a mock answer scoring at or above this passes; below it, its card is due tomorrow

# The FSRS rating for each 0-5 grade.
#
#   grade  meaning (sm2.GRADE_MEANINGS)     FSRS rating
#   0      blackout                         Again
#   1      wrong, familiar                  Again
#   2      wrong, easy recall ("almost")    Again
#   3      right, hard                      Hard
#   4      right, hesitant ("good")         Good
#   5      perfect                          Easy
#
# FSRS's Hard is a recall that succeeded with effort; it grows the card's stability.
# A 2 is an answer that was wrong, however easy it looked once shown: the recall did
# not happen, so it is Again. The line between Again and the rest is SM-2's pass line
# (grade 3), so a lapse, retention and "passed" in the stats mean the same under both.
GRADE_RATINGS: dict[int, str] = {0: "Again", 1: "Again", 2: "Again", 3: "Hard", 4: "Good", 5: "Easy"}


class Scheduler(Protocol):
    """What a session and a switch need of a scheduler."""

    name: str
    max_interval: int  # days: no interval is longer

    def review(self, state: CardState, grade: int, today: dt.date) -> CardState:
        """The card after its first review of the study day `today`, graded 0-5. No clock, no I/O."""
        ...

    def replay(self, log: Iterable[LoggedReview], current: Mapping[str, CardState]) -> dict[str, CardState]:
        """Every card with logged reviews, its schedule rebuilt from the log alone."""
        ...


class _Replaying:
    """Replay, the same for every scheduler: each logged grade applied as the session applied it."""

    name: str

    def __init__(
        self, max_interval: int = sm2.DEFAULT_MAX_INTERVAL, parameters: tuple[float, ...] | None = None
    ) -> None:
        self.max_interval = sm2.check_max_interval(max_interval)
        self.parameters = parameters  # FSRS's, fitted to the learner; None: the defaults (SM-2 has none)

    def review(self, state: CardState, grade: int, today: dt.date) -> CardState:
        raise NotImplementedError

    def replay(self, log: Iterable[LoggedReview], current: Mapping[str, CardState]) -> dict[str, CardState]:
        """Every card with logged reviews, its schedule rebuilt from the log in the order the reviews happened.

        What the log does not hold (suspended, buried, a changed text) is kept from `current`.
        A logged grade that is not 0-5 raises ValueError naming the review.
        """
        by_card: dict[str, list[LoggedReview]] = {}
        for row in sorted(log, key=lambda r: (r.day, r.id)):
            by_card.setdefault(row.card_id, []).append(row)
        out: dict[str, CardState] = {}
        for card_id, rows in by_card.items():
            now = current.get(card_id) or CardState(card_id)
            state = CardState(
                card_id,
                suspended=now.suspended,
                buried_until=now.buried_until,
                changed=now.changed,
                content_hash=now.content_hash,
            )
            for row in rows:
                try:
                    state = after_grade(self, state, row.grade, row.day, row.mode, row.answer)
                except ValueError as exc:
                    raise ValueError(f"review {row.id} ({card_id}): {exc}") from None
            out[card_id] = state
        return out


class SM2Scheduler(_Replaying):
    """SM-2 as drill.study.sm2 computes it: the card is due its interval after the review."""

    name = "sm2"

    def review(self, state: CardState, grade: int, today: dt.date) -> CardState:
        after = _counted(state, grade, today, self.max_interval)
        after.due = sm2.days_after(today, after.sm2.interval)
        after.fsrs = None
        return after


class FSRSScheduler(_Replaying):
    """FSRS (the `fsrs` package) with the parameters fitted to the learner, else its defaults, for 90% retention, in whole study days.

    The queue counts in days and the session itself brings a failed card back a few
    cards later (session.REPEAT_GAP), so FSRS's minute-long steps are replaced: a new
    card goes straight to FSRS's day intervals, and a lapse (Again on a card already
    scheduled in days) brings the card back the next study day, as SM-2 does, before
    FSRS spaces it again. Fuzz is off, so a replay of the same log gives the same dates.
    The maximum interval is FSRS's own `maximum_interval`.
    """

    name = "fsrs"

    def review(self, state: CardState, grade: int, today: dt.date) -> CardState:
        after = _counted(state, grade, today, self.max_interval)
        memory, due = fsrs_review(state.fsrs, grade, today, self.max_interval, self.parameters)
        after.fsrs = memory
        after.due = due
        return after


def _counted(state: CardState, grade: int, today: dt.date, max_interval: int) -> CardState:
    """SM-2's figures, lapses, the leech flag and the day the card was introduced, after a review."""
    after = replace(state, sm2=sm2.review(state.sm2, grade, today, max_interval))
    if grade < sm2.PASSING and state.sm2.repetitions > 0:
        after.lapses = state.lapses + 1
    after.leech = state.leech or after.lapses >= LEECH_LAPSES
    if state.introduced_on is None:
        after.introduced_on = today
    return after


@cache
def _fsrs(maximum_interval: int, parameters: tuple[float, ...] | None = None) -> "fsrs.Scheduler":
    import fsrs
    from fsrs.scheduler import DEFAULT_PARAMETERS

    return fsrs.Scheduler(
        parameters=DEFAULT_PARAMETERS if parameters is None else parameters,
        learning_steps=(),
        relearning_steps=(dt.timedelta(days=1),),
        maximum_interval=maximum_interval,
        enable_fuzzing=False,
    )


def rating_for(grade: int) -> "fsrs.Rating":
    """The FSRS rating of a 0-5 grade (see GRADE_RATINGS)."""
    import fsrs

    if not isinstance(grade, int) or isinstance(grade, bool) or grade not in GRADE_RATINGS:
        raise ValueError(f"grade must be an integer 0-5, got {grade!r}")
    return fsrs.Rating[GRADE_RATINGS[grade]]


def fsrs_time(day: dt.date) -> dt.datetime:
    """Midnight UTC of a study day: the time FSRS is told a review on that day happened, so it counts whole
    study days between reviews."""
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


def fsrs_card(memory: FSRSState | None, at: dt.datetime, last_review: dt.datetime) -> "fsrs.Card":
    """FSRS's Card for drill's memory of a card, due at `at` and last reviewed at `last_review` (the times a
    caller has put on FSRS's clock); a card never reviewed when there is no memory."""
    import fsrs

    if memory is None:
        return fsrs.Card(card_id=0, due=at)
    return fsrs.Card(
        card_id=0,
        state=fsrs.State(memory.state),
        step=None if memory.state == fsrs.State.Review else 0,
        stability=memory.stability,
        difficulty=memory.difficulty,
        due=at,
        last_review=last_review,
    )


def fsrs_review(
    memory: FSRSState | None,
    grade: int,
    day: dt.date,
    max_interval: int = sm2.DEFAULT_MAX_INTERVAL,
    parameters: tuple[float, ...] | None = None,
) -> tuple[FSRSState, dt.date]:
    """FSRS's memory of a card and its due day after a review graded `grade` on study day `day`.

    FSRS is told the review happened at 00:00 UTC of the study day, so the days it counts
    between reviews are study days, as the queue counts them: a review at 23:00 and the
    next at 05:00 of the next study day are a day apart, not a few hours.

    FSRS counts only the days between reviews, so a review within `max_interval` days of
    the calendar's end (9999-12-31) is given to it that many days earlier, where its due
    date can still be written, and the interval it gives is added back with sm2.days_after.
    """
    rating = rating_for(grade)
    sm2.check_max_interval(max_interval)
    shift = dt.timedelta(days=max(0, max_interval + 2 - (dt.date.max - day).days))
    at = fsrs_time(day - shift)
    # the last review shifted too, but never before the calendar's first day (only a log spanning millennia gets there)
    last_review = at if memory is None else fsrs_time(max(memory.last_review, dt.date.min + shift) - shift)
    card = fsrs_card(memory, at, last_review)
    card, _ = _fsrs(max_interval, parameters).review_card(card, rating, review_datetime=at)
    assert card.stability is not None and card.difficulty is not None
    interval = (card.due - at).days
    return FSRSState(card.stability, card.difficulty, int(card.state), day), sm2.days_after(day, interval)


def after_grade(
    scheduler: Scheduler,
    before: CardState,
    grade: int,
    day: dt.date,
    mode: str,
    answer: Mapping[str, object] | None = None,
) -> CardState:
    """The card after a grade logged with `mode` on study day `day`: what the session stores, and a replay redoes.

    cram    nothing changes
    early   a review brought forward for the interview date (drill.study.day_cards, the plan's early group): scheduled
            as any review, and counted for retention
    repeat  a same-day repeat: only the day and whether it comes back again are noted
    mock    a failed mock answer (its logged score below MOCK_PASS) makes the card due tomorrow
            unless it is due sooner, as drill.mock.run.schedule_after does
    other   a review the scheduler schedules (the day's first grade of the card)
    """
    if mode == "cram":
        return replace(before)
    if mode == "mock":
        score = (answer or {}).get("score")
        if isinstance(score, (int, float)):
            failed = score < MOCK_PASS
        else:
            failed = grade < sm2.PASSING
        tomorrow = sm2.days_after(day, 1)
        due_by_tomorrow = before.due is not None and before.due <= tomorrow
        if not failed or due_by_tomorrow:
            return replace(before)
        return replace(before, due=tomorrow, introduced_on=before.introduced_on or day)
    after = replace(before) if mode == "repeat" else scheduler.review(before, grade, day)
    after.last_review_day = day
    after.repeat_pending = grade < sm2.SAME_DAY_REPEAT_BELOW
    return after


_SCHEDULERS: dict[str, Callable[[int, tuple[float, ...] | None], Scheduler]] = {
    "sm2": SM2Scheduler,
    "fsrs": FSRSScheduler,
}


def scheduler_named(
    name: str, max_interval: int = sm2.DEFAULT_MAX_INTERVAL, parameters: tuple[float, ...] | None = None
) -> Scheduler:
    """The scheduler called `name` (sm2 or fsrs, any case), no interval longer than `max_interval` days.

    `parameters` are FSRS's (fitted to the learner; None: the defaults); SM-2 has none.
    ValueError names the choices.
    """
    key = name.strip().lower()
    if key not in _SCHEDULERS:
        raise ValueError(f"unknown scheduler {name!r} (choose from {', '.join(SCHEDULERS)})")
    return _SCHEDULERS[key](max_interval, parameters)


def saved_parameters(settings: Mapping[str, str]) -> tuple[float, ...] | None:
    """The fitted FSRS parameters in the saved settings; None (the defaults) when none, or not 21 finite numbers."""
    import json
    import math

    try:
        values = json.loads(settings.get(PARAMETERS_SETTING) or "null")
    except ValueError:
        return None
    if not isinstance(values, list) or len(values) != PARAMETER_COUNT:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return None
    return tuple(float(v) for v in values)


def parameters_text(parameters: tuple[float, ...]) -> str:
    """Fitted parameters as the saved setting keeps them (what saved_parameters reads)."""
    import json

    return json.dumps(list(parameters))


def saved_scheduler(settings: Mapping[str, str]) -> str:
    """The active scheduler's name in the saved settings; the default when none (or an unknown one) is saved."""
    value = (settings.get(SETTING) or "").strip().lower()
    return value if value in SCHEDULERS else DEFAULT_SCHEDULER


class ScheduleStore(Protocol):
    """What a switch needs of the store (drill.store.store.Store)."""

    def get_setting(self, key: str, default: str | None = None) -> str | None: ...
    def replay_log(
        self,
        rebuild: Callable[[list[LoggedReview], dict[str, CardState]], Mapping[str, CardState]],
        settings: Mapping[str, str | None],
    ) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Switched:
    """What a switch did."""

    previous: str
    active: str
    cards: int  # cards whose schedule was rebuilt
    reviews: int  # logged reviews replayed


def switch_scheduler(
    store: ScheduleStore,
    name: str,
    max_interval: int = sm2.DEFAULT_MAX_INTERVAL,
    parameters: tuple[float, ...] | None | str = "saved",
) -> Switched:
    """Make `name` the active scheduler: every reviewed card rescheduled by replaying the log, and the setting saved.

    Both happen in one transaction; no review is changed, added or removed. Switching
    to the scheduler already active replays too (and changes nothing unless the maximum
    interval or the parameters did). FSRS uses the saved fitted parameters unless
    `parameters` gives others (None: the defaults), and those are saved with it. An
    unknown name, or a logged grade outside 0-5, raises ValueError with a one-line message.
    """
    settings: dict[str, str | None] = {}
    if isinstance(parameters, str):
        parameters = saved_parameters({PARAMETERS_SETTING: store.get_setting(PARAMETERS_SETTING) or ""})
    else:
        settings[PARAMETERS_SETTING] = None if parameters is None else parameters_text(parameters)
    scheduler = scheduler_named(name, max_interval, parameters)
    previous = saved_scheduler({SETTING: store.get_setting(SETTING) or ""})
    settings[SETTING] = scheduler.name
    cards, reviews = store.replay_log(scheduler.replay, settings)
    return Switched(previous, scheduler.name, cards, reviews)
