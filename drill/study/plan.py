"""The plan to an interview date: new cards a day, expected review minutes, early reviews at the end, mocks.

Given the track's cards (seen ones with their FSRS memory and the day the queue asks
them next, unseen ones), today, the interview date, the minutes the learner gives each
day and a target recall, the plan

- introduces every unseen card by INTRO_LEAD_DAYS before the date, as many each day
  (give or take one, the slowest kinds dealt first so each day's minutes are even) over
  as many days as fit the minutes: over all the days up to then when they fit, over fewer
  (more a day, finishing sooner) when the last days would be too busy;
- counts the reviews the queue would ask for: each card's due day (the active
  scheduler's for a seen card, then the intervals drill's FSRS scheduler gives), with
  the learner's answers drawn SAMPLES times -- recalled with the model's predicted recall,
  graded by the learner's own mix of grades (`grade_mix`), a forgotten card due the
  next day -- and averaged, so that "if you follow the plan" includes what is forgotten;
- in the last EARLY_REVIEW_DAYS days before the date, brings up a card whose predicted
  recall on the date is below the target (plus EARLY_REVIEW_MARGIN) even if it is not due (`early_reviews`: the
  queue's rule, the same one the plan counts), each card from its own one of those days
  on (`early_review_day`), so the extra reviews spread over them;
- costs each view at the learner's own seconds per card of its kind
  (`seconds_per_card`): a review, and its same-day repeat when graded below 4;
- suggests a mock interview every MOCK_EVERY_DAYS days, the last one LAST_MOCK_DAYS_BEFORE
  days before the date.

It fits when no day needs more than the minutes given, every card is introduced in time
and readiness on the date (mean predicted recall if the plan is followed) reaches the
target. When it does not, it says what would: the minutes a day that would fit, and the
topics to leave out, the one that saves the most minutes first.

Pure: no clock, no I/O; today is an argument.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import statistics
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drill.study import scheduling, sm2
from drill.study.forecast import UNSEEN_RECALL, MemoryModel, Readiness, TrackCard, readiness, stop_now
from drill.study.records import FSRSState, LoggedReview
from drill.study.targets import DEFAULT_TARGET

INTRO_LEAD_DAYS = 3  # every card is introduced at least this many days before the date
EARLY_REVIEW_DAYS = 5  # the days before the date in which a card below target comes up early
# Until its parameters are fitted to the learner, the model's recall can be a few points off
# for one learner (bench/readiness.py's learners, whose memory is not the defaults, show it):
# a card comes up early when its predicted recall on the date is below the target plus this.
EARLY_REVIEW_MARGIN = 0.03
MOCK_EVERY_DAYS = 7
LAST_MOCK_DAYS_BEFORE = 2  # the last mock leaves a day to review what it showed, and a rested day
SAMPLES = 32  # runs of each card's answers the plan averages (seeded: the same inputs give the same plan)
FORGOTTEN_GRADE = 1  # a forgotten review's grade: "wrong, familiar", FSRS's Again

# How the learner grades, until their log holds MIN_GRADED of each: the first answer to a
# new card (often missed: drill asks before it shows), and a recalled review (mostly good).
DEFAULT_FIRST_GRADES: tuple[tuple[int, float], ...] = ((1, 0.3), (3, 0.2), (4, 0.4), (5, 0.1))
DEFAULT_RECALLED_GRADES: tuple[tuple[int, float], ...] = ((3, 0.15), (4, 0.75), (5, 0.1))
MIN_GRADED = 30

# Seconds one review of a card takes, by kind, until the learner's own log has MIN_TIMED of
# that kind: reading and answering a concept out loud, filling a shape trace, working a
# ledger's numbers, reading profiler evidence; a kernel card is an edit-and-run loop (the
# mock gives it 15 minutes, drill.mock.plan.MINUTES_BY_KIND).
DEFAULT_SECONDS_BY_KIND: dict[str, float] = {
    "concept": 60.0,
    "shape_trace": 90.0,
    "memory_ledger": 150.0,
    "diagnosis": 120.0,
    "kernel": 900.0,
}
DEFAULT_SECONDS = 90.0  # a kind not listed above
MIN_TIMED = 5  # timed reviews of a kind before the learner's median replaces the default


def seconds_per_card(timed: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Seconds per review by kind: the median of the learner's own (kind, seconds) timings, else the default.

    Timings of zero or less (a review logged without a duration) are left out.
    """
    by_kind: dict[str, list[float]] = {}
    for kind, seconds in timed:
        if seconds > 0:
            by_kind.setdefault(kind, []).append(seconds)
    out = dict(DEFAULT_SECONDS_BY_KIND)
    for kind, values in by_kind.items():
        if len(values) >= MIN_TIMED:
            out[kind] = statistics.median(values)
    return out


@dataclass(frozen=True)
class GradeMix:
    """How the learner grades: (grade, probability) pairs for a new card's first answer and for a recalled review."""

    first: tuple[tuple[int, float], ...] = DEFAULT_FIRST_GRADES
    recalled: tuple[tuple[int, float], ...] = DEFAULT_RECALLED_GRADES


def grade_mix(log: Iterable[LoggedReview]) -> GradeMix:
    """The learner's own grade mix from the reviews that reach the scheduler (mode review or early); defaults where too few."""
    first: dict[int, int] = {}
    recalled: dict[int, int] = {}
    seen: set[str] = set()
    for row in sorted(log, key=lambda r: (r.day, r.id)):
        if row.mode not in ("review", scheduling.EARLY):
            continue
        if row.card_id not in seen:
            seen.add(row.card_id)
            first[row.grade] = first.get(row.grade, 0) + 1
        elif row.grade >= sm2.PASSING:
            recalled[row.grade] = recalled.get(row.grade, 0) + 1
    mix = GradeMix()
    if sum(first.values()) >= MIN_GRADED:
        mix = GradeMix(_shares(first), mix.recalled)
    if sum(recalled.values()) >= MIN_GRADED:
        mix = GradeMix(mix.first, _shares(recalled))
    return mix


@dataclass(frozen=True)
class PlanDay:
    day: dt.date
    new_cards: tuple[str, ...]  # the ids of the cards to introduce that day
    reviews: float  # expected reviews of cards already introduced, early ones included
    early_reviews: float  # of those, cards brought up before they are due
    minutes: float  # expected, same-day repeats included
    mock: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "new_cards": len(self.new_cards),
            "reviews": round(self.reviews, 1),
            "early_reviews": round(self.early_reviews, 1),
            "minutes": round(self.minutes, 1),
            "mock": self.mock,
        }


@dataclass(frozen=True)
class TopicCut:
    """A topic the plan could leave out, and the minutes on the busiest day that saves."""

    topic: str
    cards: int
    minutes_saved: float

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "cards": self.cards, "minutes_saved": round(self.minutes_saved, 1)}


@dataclass(frozen=True)
class StudyPlan:
    today: dt.date
    date: dt.date
    minutes_per_day: float
    target: float
    new_per_day: int
    days: tuple[PlanDay, ...]
    fits: bool
    reasons: tuple[str, ...]  # why it does not fit; empty when it does
    minutes_needed: int | None  # the minutes a day that would fit (None when no minutes would)
    leave_out: tuple[TopicCut, ...]  # topics whose leaving out makes it fit, the largest saving first
    mocks: tuple[dt.date, ...]
    now: Readiness  # if the learner stops now
    planned: Readiness  # if the plan is followed
    projected: Mapping[str, float] = field(default_factory=dict)  # each card's predicted recall on the date, planned

    @property
    def peak_minutes(self) -> float:
        return max((d.minutes for d in self.days), default=0.0)

    def as_json(self) -> dict[str, Any]:
        return {
            "today": self.today.isoformat(),
            "date": self.date.isoformat(),
            "minutes_per_day": self.minutes_per_day,
            "target": self.target,
            "new_per_day": self.new_per_day,
            "fits": self.fits,
            "reasons": list(self.reasons),
            "minutes_needed": self.minutes_needed,
            "leave_out": [c.as_json() for c in self.leave_out],
            "mocks": [d.isoformat() for d in self.mocks],
            "readiness_now": self.now.as_json(),
            "readiness_planned": self.planned.as_json(),
            "days": [d.as_json() for d in self.days],
        }


def early_reviews(
    cards: Sequence[TrackCard],
    today: dt.date,
    date: dt.date,
    target: float = DEFAULT_TARGET,
    model: MemoryModel | None = None,
) -> list[str]:
    """Cards to review today although not due: in the last EARLY_REVIEW_DAYS before the date, those below target.

    A card counts when its predicted recall on the date is below `target` plus
    EARLY_REVIEW_MARGIN, from its own
    first day in those days on (`early_review_day`); the lowest come first. Before then,
    for cards never seen and for cards due anyway, nothing.
    """
    model = model or MemoryModel()
    if not today < date:
        return []
    below = []
    for card in cards:
        if card.memory is None or (card.due is not None and card.due <= today):
            continue  # unseen, or due anyway
        if today < early_review_day(card.card_id, date):
            continue
        recall = model.recall(card.memory, date)
        if recall < target + EARLY_REVIEW_MARGIN:
            below.append((recall, card.card_id))
    return [card_id for _, card_id in sorted(below)]


def make_plan(
    cards: Sequence[TrackCard],
    *,
    today: dt.date,
    date: dt.date,
    minutes_per_day: float,
    target: float = DEFAULT_TARGET,
    seconds_by_kind: Mapping[str, float] | None = None,
    model: MemoryModel | None = None,
    grades: GradeMix | None = None,
    suggest: bool = True,
) -> StudyPlan:
    """The plan from `today` to the interview on `date` (see the module docstring).

    `suggest` False skips the topics-to-leave-out search when the plan does not fit.
    ValueError (one line) when the date is not after today, the minutes are not positive
    or the target is not between 0 and 1.
    """
    if date <= today:
        raise ValueError(f"the interview date {date.isoformat()} is not after today ({today.isoformat()})")
    if not minutes_per_day > 0:
        raise ValueError(f"minutes per day must be more than 0, got {minutes_per_day!r}")
    if not 0 < target < 1:
        raise ValueError(f"the target recall must be between 0 and 1, got {target!r}")
    model = model or MemoryModel()
    grades = grades or GradeMix()
    seconds = dict(seconds_by_kind) if seconds_by_kind is not None else dict(DEFAULT_SECONDS_BY_KIND)
    planner = _Planner(model, today, date, target, minutes_per_day, seconds, grades)
    schedule, planned, reasons = planner.verdict(cards)
    minutes_needed = None
    leave_out: tuple[TopicCut, ...] = ()
    if reasons:
        minutes_needed = _minutes_needed(schedule, planned, target)
        if suggest:
            leave_out = planner.topics_to_leave_out(cards, schedule)
    mocks = mock_days(today, date)
    days = tuple(
        PlanDay(
            day=today + dt.timedelta(days=i),
            new_cards=tuple(schedule.new_ids[i]),
            reviews=schedule.reviews[i],
            early_reviews=schedule.early[i],
            minutes=schedule.minutes[i],
            mock=today + dt.timedelta(days=i) in mocks,
        )
        for i in range(len(schedule.minutes))
    )
    return StudyPlan(
        today=today,
        date=date,
        minutes_per_day=minutes_per_day,
        target=target,
        new_per_day=max((len(ids) for ids in schedule.new_ids), default=0),
        days=days,
        fits=not reasons,
        reasons=tuple(reasons),
        minutes_needed=minutes_needed,
        leave_out=leave_out,
        mocks=tuple(sorted(mocks)),
        now=stop_now(cards, date, model),
        planned=planned,
        projected=schedule.projected,
    )


def mock_days(today: dt.date, date: dt.date) -> set[dt.date]:
    """A mock every MOCK_EVERY_DAYS days counted back from LAST_MOCK_DAYS_BEFORE days before the date, none before today."""
    out = set()
    day = date - dt.timedelta(days=LAST_MOCK_DAYS_BEFORE)
    while day >= today:
        out.add(day)
        day -= dt.timedelta(days=MOCK_EVERY_DAYS)
    return out


@dataclass
class _Path:
    """One card followed through the plan's days, averaged over SAMPLES: each day's expected cost and reviews."""

    views: list[float]  # expected views per day: a review plus its same-day repeat when forgotten
    reviews: list[float]  # expected reviews per day (not the day it is introduced)
    early: list[float]  # expected reviews per day before the card is due
    recall: float  # expected predicted recall on the date


@dataclass
class _Schedule:
    new_ids: list[list[str]]
    reviews: list[float]
    early: list[float]
    minutes: list[float]
    projected: dict[str, float]
    introduced_all: bool
    unseen: int


class _Planner:
    """Follows cards through the days from today to the day before the date; each card's path is worked out once.

    Reviews and predictions are remembered by their inputs: the sampled runs of many cards
    pass through the same memories, and the topics-to-leave-out search plans the same
    cards again.
    """

    def __init__(
        self,
        model: MemoryModel,
        today: dt.date,
        date: dt.date,
        target: float,
        budget: float,
        seconds: Mapping[str, float],
        grades: GradeMix,
    ) -> None:
        self.model = model
        self.today = today
        self.date = date
        self.span = (date - today).days
        self.target = target
        self.early_below = target + EARLY_REVIEW_MARGIN
        self.budget = budget
        self.seconds = seconds
        self.grades = grades
        self._paths: dict[tuple[str, int | None, dt.date], _Path] = {}
        self._reviews: dict[tuple[FSRSState | None, int, dt.date], tuple[FSRSState, dt.date]] = {}
        self._recalls: dict[tuple[FSRSState, dt.date], float] = {}

    def minutes_each(self, card: TrackCard) -> float:
        return self.seconds.get(card.kind, DEFAULT_SECONDS) / 60

    def path(self, card: TrackCard, intro: int | None) -> _Path:
        """A seen card from its memory (`intro` None), or an unseen one introduced on day `intro`."""
        early_from = early_review_day(card.card_id, self.date)
        if card.memory is None:
            # an unseen card's path depends only on its first day and its first day for early reviews
            key: tuple[str, int | None, dt.date] = ("", intro, early_from)
            seed = intro or 0
        else:
            key = (card.card_id, None, early_from)
            seed = zlib.crc32(card.card_id.encode())
        if key not in self._paths:
            self._paths[key] = self._follow(card.memory, card.due, intro, early_from, seed)
        return self._paths[key]

    def _follow(
        self, memory: FSRSState | None, due: dt.date | None, intro: int | None, early_from: dt.date, seed: int
    ) -> _Path:
        """Each of SAMPLES runs draws the learner's answers: recalled with the model's predicted recall, graded by their mix."""
        path = _Path([0.0] * self.span, [0.0] * self.span, [0.0] * self.span, 0.0)
        rng = random.Random(seed)
        start = (memory, due)
        for _ in range(SAMPLES):
            memory, due = start
            for i in range(self.span):
                day = self.today + dt.timedelta(days=i)
                if memory is None:
                    if i != intro:
                        continue
                    grade = _draw(rng, self.grades.first)
                else:
                    is_due = due is not None and due <= day
                    early = not is_due and day >= early_from and self._recall(memory, self.date) < self.early_below
                    if not (is_due or early):
                        continue
                    recalled = rng.random() < self._recall(memory, day)
                    grade = _draw(rng, self.grades.recalled) if recalled else FORGOTTEN_GRADE
                    path.reviews[i] += 1 / SAMPLES
                    path.early[i] += int(early) / SAMPLES
                path.views[i] += (1 if grade >= sm2.SAME_DAY_REPEAT_BELOW else 2) / SAMPLES
                memory, due = self._review(memory, grade, day)
            path.recall += (UNSEEN_RECALL if memory is None else self._recall(memory, self.date)) / SAMPLES
        return path

    def _review(self, memory: FSRSState | None, grade: int, day: dt.date) -> tuple[FSRSState, dt.date]:
        key = (memory, grade, day)
        if key not in self._reviews:
            self._reviews[key] = self.model.review(memory, grade, day)
        return self._reviews[key]

    def _recall(self, memory: FSRSState, day: dt.date) -> float:
        key = (memory, day)
        if key not in self._recalls:
            self._recalls[key] = self.model.recall(memory, day)
        return self._recalls[key]

    def schedule(self, cards: Sequence[TrackCard]) -> _Schedule:
        """The gentlest even introduction that fits the budget (or, when none does, the one with the lightest busiest day)."""
        base_minutes = [0.0] * self.span
        base_reviews = [0.0] * self.span
        base_early = [0.0] * self.span
        projected: dict[str, float] = {}
        unseen: list[TrackCard] = []
        for card in cards:
            if card.memory is None:
                unseen.append(card)
                continue
            path = self.path(card, None)
            cost = self.minutes_each(card)
            for i in range(self.span):
                base_minutes[i] += path.views[i] * cost
                base_reviews[i] += path.reviews[i]
                base_early[i] += path.early[i]
            projected[card.card_id] = path.recall

        intro_days = max(0, self.span - INTRO_LEAD_DAYS + 1)
        if not unseen or intro_days == 0:
            for card in unseen:
                projected[card.card_id] = UNSEEN_RECALL
            no_new: list[list[str]] = [[] for _ in range(self.span)]
            return _Schedule(no_new, base_reviews, base_early, base_minutes, projected, not unseen, len(unseen))

        best: tuple[float, list[list[TrackCard]], list[float]] | None = None
        for spread in range(intro_days, 0, -1):  # introducing over fewer days front-loads the new cards
            blocks = _deal(unseen, spread, self.seconds)
            minutes = list(base_minutes)
            for block, members in enumerate(blocks):
                # the cards of a day that share a path share its views: add their minutes once
                cost_by_path: dict[int, tuple[_Path, float]] = {}
                for card in members:
                    path = self.path(card, block)
                    _, cost = cost_by_path.get(id(path), (path, 0.0))
                    cost_by_path[id(path)] = (path, cost + self.minutes_each(card))
                for path, cost in cost_by_path.values():
                    for i in range(self.span):
                        minutes[i] += path.views[i] * cost
            peak = max(minutes)
            if best is None or peak < best[0] or peak <= self.budget:
                best = (peak, blocks, minutes)
            if peak <= self.budget:
                break
        assert best is not None
        _, blocks, minutes = best
        new_ids: list[list[str]] = [[] for _ in range(self.span)]
        reviews = list(base_reviews)
        early = list(base_early)
        for block, members in enumerate(blocks):
            new_ids[block] = [card.card_id for card in members]
            for card in members:
                path = self.path(card, block)
                for i in range(self.span):
                    reviews[i] += path.reviews[i]
                    early[i] += path.early[i]
                projected[card.card_id] = path.recall
        return _Schedule(new_ids, reviews, early, minutes, projected, True, len(unseen))

    def verdict(self, cards: Sequence[TrackCard]) -> tuple[_Schedule, Readiness, list[str]]:
        """The schedule, readiness on the date if it is followed, and why it does not fit (empty when it does)."""
        schedule = self.schedule(cards)
        planned = readiness(schedule.projected, {c.card_id: c.topic for c in cards}, self.date)
        return schedule, planned, _reasons(schedule, planned, self.budget, self.target, self.date, self.today)

    def topics_to_leave_out(self, cards: Sequence[TrackCard], full: _Schedule) -> tuple[TopicCut, ...]:
        """The topics whose leaving out makes the plan fit, the one saving the most minutes on the busiest day first.

        Each topic's saving is measured alone; they are then left out in that order until
        the plan fits. Empty when leaving out topics does not make it fit.
        """
        topics: dict[str, list[TrackCard]] = {}
        for card in cards:
            topics.setdefault(card.topic, []).append(card)
        if len(topics) < 2:
            return ()
        peak = max(full.minutes, default=0.0)
        cuts = []
        for topic, members in topics.items():
            without = self.schedule([c for c in cards if c.topic != topic])
            cuts.append(TopicCut(topic, len(members), peak - max(without.minutes, default=0.0)))
        cuts.sort(key=lambda c: (-c.minutes_saved, c.topic))
        left_out: list[TopicCut] = []
        for cut in cuts[:-1]:  # leaving every topic out is no plan
            left_out.append(cut)
            dropped = {c.topic for c in left_out}
            _, _, reasons = self.verdict([c for c in cards if c.topic not in dropped])
            if not reasons:
                return tuple(left_out)
        return ()


def _reasons(
    schedule: _Schedule, planned: Readiness, budget: float, target: float, date: dt.date, today: dt.date
) -> list[str]:
    reasons = []
    if not schedule.introduced_all:
        span = (date - today).days
        reasons.append(
            f"{schedule.unseen} new cards cannot be introduced {INTRO_LEAD_DAYS} days before the date: "
            f"{span} day{'s' if span != 1 else ''} left"
        )
    peak = max(schedule.minutes, default=0.0)
    if peak > budget:
        reasons.append(f"the busiest day needs {math.ceil(peak)} minutes, more than the {budget:g} given")
    if planned.overall < target:
        reasons.append(f"readiness on the date would be {planned.overall:.0%}, below the target {target:.0%}")
    return reasons


def _minutes_needed(schedule: _Schedule, planned: Readiness, target: float) -> int | None:
    """The minutes a day that fit the gentlest plan that exists; None when minutes are not what is missing."""
    if not schedule.introduced_all or planned.overall < target:
        return None
    return math.ceil(max(schedule.minutes, default=0.0))


def _deal(cards: Sequence[TrackCard], days: int, seconds: Mapping[str, float]) -> list[list[TrackCard]]:
    """The cards dealt over `days` days in the queue's order (a day opens with the cards the queue asks first,
    and a topic's kernel card comes after its other cards), each day taking an even share of the new cards'
    expected seconds: a card goes to the day its middle second falls in."""
    blocks: list[list[TrackCard]] = [[] for _ in range(min(days, len(cards)))]
    costs = [_seconds(seconds, card.kind) for card in cards]
    total = sum(costs)
    spent = 0.0
    for card, cost in zip(cards, costs):
        day = int((spent + cost / 2) / total * len(blocks)) if total > 0 else 0
        blocks[min(day, len(blocks) - 1)].append(card)
        spent += cost
    return blocks


def early_review_day(card_id: str, date: dt.date) -> dt.date:
    """The first day a card below target may come up early: one of the last EARLY_REVIEW_DAYS days, by its id.

    Spreading the cards over those days (a stable hash of the id, the same in every run)
    keeps the extra reviews from landing on one day, and leaves a card that comes up on
    the first of them a day or two to be asked again if it is forgotten.
    """
    return date - dt.timedelta(days=EARLY_REVIEW_DAYS - zlib.crc32(card_id.encode()) % EARLY_REVIEW_DAYS)


def _draw(rng: random.Random, mix: tuple[tuple[int, float], ...]) -> int:
    return rng.choices([grade for grade, _ in mix], weights=[share for _, share in mix])[0]


def _shares(counts: Mapping[int, int]) -> tuple[tuple[int, float], ...]:
    total = sum(counts.values())
    return tuple((grade, count / total) for grade, count in sorted(counts.items()))


def _seconds(seconds: Mapping[str, float], kind: str) -> float:
    return seconds.get(kind, DEFAULT_SECONDS)
