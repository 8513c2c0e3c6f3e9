"""Predicted recall: each card's chance of being recalled on a given day, and readiness per topic.

The memory model is FSRS (the `fsrs` package): a card's memory is its stability and
difficulty after its last review, and its predicted recall on a day is the package's own
retrievability, `Scheduler.get_card_retrievability`, which by FSRS's definition of
stability is 0.9 when the days since the last review equal the stability.

The memory is replayed from the review log whichever scheduler is active: the log
holds every grade, and `scheduling.after_grade` decides (for both schedulers) which
logged grades reach the scheduler -- a cram, a same-day repeat and a mock answer do
not. With the default parameters each grade goes through `scheduling.fsrs_review`, the
very function the FSRS scheduler uses; with fitted parameters (drill.study.fitting) the
same settings are built around the fitted ones.

A card never reviewed has no memory, and counts as UNSEEN_RECALL.

Readiness is the mean predicted recall of a set of cards on a day: of each topic, and of
them all. `stop_now` is readiness if no review happens before the day; the plan's
projection (drill.study.plan) is readiness if the plan is followed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from drill.study import scheduling, sm2
from drill.study.calibration import Outcome, Tally
from drill.study.log_digest import LogDigest
from drill.study.records import CardState, FSRSState, LoggedReview

if TYPE_CHECKING:
    import fsrs

# A card the learner has never been asked is counted as not known. drill holds no evidence
# about it, FSRS itself gives a card without a review a retrievability of 0
# (Scheduler.get_card_retrievability), and readiness should be earned by reviews rather
# than assumed: a track nobody studied reads 0 %, not a comforting guess.
UNSEEN_RECALL = 0.0

# The retention drill's FSRS scheduler aims for (fsrs.Scheduler's default desired_retention):
# the plan counts reviews at the intervals that retention gives.
SCHEDULED_RETENTION = 0.9


@dataclass(frozen=True)
class MemoryModel:
    """FSRS as drill schedules with it: whole study days, no learning steps, a lapse back the next day, no fuzz.

    `parameters` None means the fsrs package's defaults; fitted ones are 21 numbers.
    """

    parameters: tuple[float, ...] | None = None
    max_interval: int = sm2.DEFAULT_MAX_INTERVAL

    def recall(self, memory: FSRSState | None, on: dt.date) -> float:
        """The predicted probability of recalling the card on study day `on` (UNSEEN_RECALL without a memory)."""
        if memory is None:
            return UNSEEN_RECALL
        import fsrs

        card = fsrs.Card(
            card_id=0,
            state=fsrs.State.Review,
            stability=memory.stability,
            last_review=scheduling.fsrs_time(memory.last_review),
        )
        return float(
            _scheduler(self.parameters, self.max_interval).get_card_retrievability(card, scheduling.fsrs_time(on))
        )

    def review(self, memory: FSRSState | None, grade: int, day: dt.date) -> tuple[FSRSState, dt.date]:
        """The memory after a review graded 0-5 on study day `day`, and the day FSRS would ask the card again."""
        if self.parameters is None:
            return scheduling.fsrs_review(memory, grade, day, self.max_interval)
        return _fitted_review(_scheduler(self.parameters, self.max_interval), memory, grade, day)


@dataclass(frozen=True)
class CardMemory:
    """What the log tells FSRS about one card."""

    memory: FSRSState
    reviews: int  # reviews that reached FSRS
    lapses: int  # of those, failed ones after the first


@dataclass
class Replayed:
    """The log replayed through the memory model: each card's memory, and each prediction the model made."""

    cards: dict[str, CardMemory] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    predicted: list[LoggedReview] = field(default_factory=list)  # the review of each outcome, in the same order
    scheduled: list[LoggedReview] = field(default_factory=list)  # every review that reached FSRS, in order


def replay(log: Iterable[LoggedReview], model: MemoryModel | None = None) -> Replayed:
    """Every logged card's FSRS memory, and the recall predicted before each review that reached FSRS.

    Reviews are taken in the order the schedulers replay them (study day, then log id).
    A review on the same study day as the card's previous one makes no prediction, as in
    the open spaced-repetition benchmark. A grade outside 0-5 raises ValueError naming
    the review.
    """
    out = Replayed()
    state = ReplayState()
    for row, outcome in state.steps(sorted(log, key=replay_order), model or MemoryModel()):
        out.scheduled.append(row)
        if outcome is not None:
            out.outcomes.append(outcome)
            out.predicted.append(row)
    out.cards = state.cards
    return out


def replay_order(row: LoggedReview) -> tuple[dt.date, int]:
    """The order the schedulers replay the log in: study day, then log id."""
    return row.day, row.id


@dataclass
class ReplayState:
    """A replay of the log stopped after some rows, to go on with later ones to the same result as one replay.

    It keeps what the replay carries from row to row (each card's state as scheduling.after_grade
    leaves it, its FSRS memory with its reviews and lapses) and the calibration's running sums
    instead of each outcome, and the digest of every row the plan reads (drill.study.log_digest). `last`
    is the (day, id) of the last row replayed: a row may only come after it.
    """

    states: dict[str, CardState] = field(default_factory=dict)
    cards: dict[str, CardMemory] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    last: tuple[dt.date, int] | None = None
    digest: LogDigest = field(default_factory=LogDigest)

    def copy(self) -> "ReplayState":
        """A state to go on from without changing this one (the per-card records are never changed in place)."""
        return ReplayState(dict(self.states), dict(self.cards), self.tally.copy(), self.last, self.digest.copy())

    def advance(self, rows: Iterable[LoggedReview], model: MemoryModel) -> None:
        """Replay `rows` (in replay_order, each after `last`) on top of this state; ValueError as `replay` raises."""
        for row, outcome in self.steps(rows, model):
            if outcome is not None:
                self.tally.add(outcome)
                self.digest.add_outcome(row.day, outcome)

    def steps(self, rows: Iterable[LoggedReview], model: MemoryModel) -> Iterator[tuple[LoggedReview, Outcome | None]]:
        """Replay `rows` one by one, yielding each that reached FSRS with the outcome it was predicted (if any)."""
        remembering = _MemoryOnly(model)
        for row in rows:
            if self.last is not None and replay_order(row) <= self.last:
                raise ValueError(f"review {row.id} comes before the replay's last one, review {self.last[1]}")
            self.last = replay_order(row)
            self.digest.add(row)
            before = self.states.get(row.card_id) or CardState(row.card_id)
            try:
                after = scheduling.after_grade(remembering, before, row.grade, row.day, row.mode, row.answer)
            except ValueError as exc:
                raise ValueError(f"review {row.id} ({row.card_id}): {exc}") from None
            self.states[row.card_id] = after
            if after.fsrs is before.fsrs or after.fsrs is None:  # this grade did not reach the scheduler
                continue
            known = self.cards.get(row.card_id)
            if known is None:
                self.cards[row.card_id] = CardMemory(after.fsrs, reviews=1, lapses=0)
                yield row, None
                continue
            failed = row.grade < sm2.PASSING
            elapsed = (row.day - known.memory.last_review).days
            outcome = None
            if elapsed > 0:
                predicted = model.recall(known.memory, row.day)
                outcome = Outcome(predicted, not failed, elapsed, known.reviews + 1, known.lapses)
            lapses = known.lapses + (1 if failed and elapsed > 0 else 0)
            self.cards[row.card_id] = CardMemory(after.fsrs, known.reviews + 1, lapses)
            yield row, outcome


@dataclass(frozen=True)
class DayReplay:
    """The log replayed as it stood at the start of a study day (the rows of earlier days), and whole.

    `replayed` counts the rows replayed to get them (a cache of the replay, drill.store.replay_cache,
    replays only what it has not seen).
    """

    at_start: ReplayState
    now: ReplayState
    replayed: int
    today: tuple[LoggedReview, ...] = ()  # the rows of the study day itself (and any later), in replay order


def replay_day(log: Iterable[LoggedReview], today: dt.date, model: MemoryModel | None = None) -> DayReplay:
    """The whole log replayed, stopping once at the start of `today`: `replay`'s memories and figures, both ways."""
    return continue_day(ReplayState(), sorted(log, key=replay_order), today, model or MemoryModel())


def continue_day(start: ReplayState, rows: Iterable[LoggedReview], today: dt.date, model: MemoryModel) -> DayReplay:
    """`start` (changed in place) taken on with `rows`, in replay order: to the start of `today`, then to the end.

    `rows` are read once, as they come (a whole log streamed from the database is never held)."""
    later: list[LoggedReview] = []
    count = 0

    def before_today() -> Iterator[LoggedReview]:
        nonlocal count
        for row in rows:
            count += 1
            if row.day < today:
                yield row
            else:  # in replay order, every row after it is of today or later too
                later.append(row)

    start.advance(before_today(), model)
    now = start.copy()
    now.advance(later, model)
    return DayReplay(start, now, count, tuple(later))


@dataclass(frozen=True)
class TrackCard:
    """A card of the track as the forecast and the plan see it."""

    card_id: str
    topic: str
    kind: str
    memory: FSRSState | None = None  # None: never reviewed
    due: dt.date | None = None  # the day the queue asks it next (the active scheduler's); None when unseen


@dataclass(frozen=True)
class TopicReadiness:
    topic: str
    cards: int
    readiness: float  # mean predicted recall

    def as_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "cards": self.cards, "readiness": self.readiness}


@dataclass(frozen=True)
class Readiness:
    """Mean predicted recall on `on`: overall and per topic (weakest first)."""

    on: dt.date
    overall: float
    cards: int
    topics: tuple[TopicReadiness, ...]

    def topic(self, name: str) -> TopicReadiness | None:
        return next((t for t in self.topics if t.topic == name), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "on": self.on.isoformat(),
            "overall": self.overall,
            "cards": self.cards,
            "topics": [t.as_json() for t in self.topics],
        }


def readiness(recalls: Mapping[str, float], topic_of: Mapping[str, str], on: dt.date) -> Readiness:
    """Readiness from each card's predicted recall; `topic_of` names every card's topic."""
    by_topic: dict[str, list[float]] = {}
    for card_id, recall in recalls.items():
        by_topic.setdefault(topic_of[card_id], []).append(recall)
    topics = [TopicReadiness(name, len(values), sum(values) / len(values)) for name, values in by_topic.items()]
    topics.sort(key=lambda t: (t.readiness, t.topic))
    overall = sum(recalls.values()) / len(recalls) if recalls else UNSEEN_RECALL
    return Readiness(on, overall, len(recalls), tuple(topics))


def stop_now(cards: Sequence[TrackCard], on: dt.date, model: MemoryModel | None = None) -> Readiness:
    """Readiness on `on` if the learner stops now: no review between today and then."""
    model = model or MemoryModel()
    recall = _recall_on(model, on)
    recalls = {card.card_id: recall(card.memory) for card in cards}
    return readiness(recalls, {card.card_id: card.topic for card in cards}, on)


def _recall_on(model: MemoryModel, on: dt.date) -> Callable[[FSRSState | None], float]:
    """`model.recall(memory, on)` for many memories: FSRS's retrievability with its decay and factor worked out
    once, not an fsrs.Card and a clock per card (10,000 cards a `drill stats`). The same operations in the same
    order as Scheduler.get_card_retrievability, so the very same floats (tests/study/test_stop_now.py holds it)."""
    scheduler = _scheduler(model.parameters, model.max_interval)
    decay = -scheduler.parameters[20]
    factor = 0.9 ** (1 / decay) - 1

    def recall(memory: FSRSState | None) -> float:
        if memory is None:
            return UNSEEN_RECALL
        elapsed_days = max(0, (on - memory.last_review).days)
        return float((1 + factor * elapsed_days / memory.stability) ** decay)

    return recall


def track_cards(
    cards: Iterable[tuple[str, str, str]],
    memories: Mapping[str, CardMemory],
    due: Mapping[str, dt.date | None],
) -> list[TrackCard]:
    """The track's cards, (id, topic, kind) each, with the memory the log gave them and the queue's due day."""
    out = []
    for card_id, topic, kind in cards:
        known = memories.get(card_id)
        memory = known.memory if known else None
        out.append(TrackCard(card_id, topic, kind, memory, due.get(card_id) if memory else None))
    return out


class _MemoryOnly:
    """A scheduler for scheduling.after_grade that moves only the card's FSRS memory.

    Going through after_grade keeps one definition of which logged grades a scheduler
    sees; the SM-2 figures it would also move are not needed here.
    """

    name = "fsrs"

    def __init__(self, model: MemoryModel) -> None:
        self.model = model
        self.max_interval = model.max_interval

    def review(self, state: CardState, grade: int, today: dt.date) -> CardState:
        memory, _ = self.model.review(state.fsrs, grade, today)
        return replace(state, fsrs=memory)

    def replay(self, log: Iterable[LoggedReview], current: Mapping[str, CardState]) -> dict[str, CardState]:
        raise NotImplementedError("the memory is replayed by drill.study.forecast.replay")


@cache
def _scheduler(parameters: tuple[float, ...] | None, max_interval: int) -> "fsrs.Scheduler":
    """fsrs.Scheduler with drill's settings (scheduling.FSRSScheduler's) and these parameters."""
    import fsrs
    from fsrs.scheduler import DEFAULT_PARAMETERS

    return fsrs.Scheduler(
        parameters=DEFAULT_PARAMETERS if parameters is None else parameters,
        desired_retention=SCHEDULED_RETENTION,
        learning_steps=(),
        relearning_steps=(dt.timedelta(days=1),),
        maximum_interval=max_interval,
        enable_fuzzing=False,
    )


# A fixed day to review at: memory depends only on the days between reviews, and a day far
# from both ends of the calendar leaves room for any interval (the calendar-end shift that
# scheduling.fsrs_review does is not needed).
_REFERENCE_DAY = dt.date(5000, 1, 1)
_LONGEST_GAP = 1_000_000  # days; the elapsed days a card's last review is put back, at most


def _fitted_review(
    scheduler: "fsrs.Scheduler", memory: FSRSState | None, grade: int, day: dt.date
) -> tuple[FSRSState, dt.date]:
    """scheduling.fsrs_review with other parameters: the same Card and rating, reviewed at a reference day."""
    rating = scheduling.rating_for(grade)
    at = scheduling.fsrs_time(_REFERENCE_DAY)
    gap = 0 if memory is None else min(max((day - memory.last_review).days, 0), _LONGEST_GAP)
    card = scheduling.fsrs_card(memory, at, at - dt.timedelta(days=gap))
    card, _ = scheduler.review_card(card, rating, review_datetime=at)
    assert card.stability is not None and card.difficulty is not None
    interval = (card.due - at).days
    return FSRSState(card.stability, card.difficulty, int(card.state), day), sm2.days_after(day, interval)
