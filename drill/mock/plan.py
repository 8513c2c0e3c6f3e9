"""Choosing a mock interview's questions: a time budget, kind minimums, weighted toward weak topics.

A plan holds at least one numeric card (memory_ledger), one diagnosis and one
shape trace when the chosen topics have them and the minutes allow, and one
kernel card when the judge can run. The rest are drawn topic by topic with
probability proportional to the topic's weakness (plus a floor, so a strong
topic still comes up), never repeating a card; within a topic, a card not
reviewed in the last RECENT_DAYS days is preferred. The minutes of the planned
questions add up to at most the mock's length less FOLLOW_UP_SHARE of it, kept
for follow-ups (from FOLLOW_UPS_FROM_MINUTES minutes up: a shorter mock has no
room for one).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from drill.cards.model import Card
from drill.cards.scenario import is_stage_card
from drill.study.records import CardState
from drill.study.standing import UNSEEN_WEAKNESS, ranked_topics
from drill.study.tracks import load_tracks as load_tracks  # its home was here; the mock screens read it from here
from drill.words import counted

# Minutes an interviewer would give each kind of question.
MINUTES_BY_KIND: dict[str, int] = {"concept": 4, "shape_trace": 4, "memory_ledger": 5, "diagnosis": 5, "kernel": 15}
REQUIRED_KINDS = ("memory_ledger", "diagnosis", "shape_trace")
DEFAULT_MINUTES = 45
WEIGHT_FLOOR = 0.05
COLLECTIVE_MIN_GPUS = 2
# A mock over every topic this long or longer asks each of the weakest topics at least once: weighting alone
# let a 45-minute plan miss both of them.
WEAKEST_ASKED_FROM_MINUTES = 30
WEAKEST_ASKED = 2
# The share of a mock's minutes kept for follow-ups (a plan answered at its budgets' pace still gets them).
FOLLOW_UP_SHARE = 0.25
FOLLOW_UPS_FROM_MINUTES = 10
# A card reviewed this recently is asked in a mock only when its topic has no other.
RECENT_DAYS = 7


@dataclass(frozen=True)
class PlannedQuestion:
    card_id: str
    topic: str
    kind: str
    minutes: int

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class MockPlan:
    minutes: int
    questions: tuple[PlannedQuestion, ...]

    @property
    def planned_minutes(self) -> int:
        return sum(q.minutes for q in self.questions)

    def as_json(self) -> dict[str, object]:
        return {"minutes": self.minutes, "questions": [q.as_json() for q in self.questions]}


class PlanError(ValueError):
    """A plan cannot be made from what was asked (unknown topic or track, no cards, no time)."""


def judge_can_run() -> bool:
    """Whether kernel cards can be judged here: an NVIDIA GPU's device node is present."""
    return Path("/dev/nvidiactl").exists() or Path("/dev/nvidia0").exists()


def gpu_count() -> int:
    """NVIDIA GPUs here, counted by their device nodes (/dev/nvidia0, /dev/nvidia1, ...)."""
    return sum(1 for node in Path("/dev").glob("nvidia*") if node.name.removeprefix("nvidia").isdigit())


def needs_gpus(card: Card) -> int:
    """GPUs here a mock needs to ask this card: a collective card runs one rank per GPU, and NCCL wants two at
    least; any other card none beyond what `judge_available` says."""
    return COLLECTIVE_MIN_GPUS if card.kind == "kernel" and card.fields.get("language") == "collective" else 0


def minutes_for(card: Card) -> int:
    """Minutes an interviewer gives `card`: a round's stage its own, any other card its kind's."""
    own = card.fields.get("minutes") if is_stage_card(card) else None
    if isinstance(own, int) and not isinstance(own, bool):
        return own
    return MINUTES_BY_KIND.get(card.kind, 5)


def follow_up_reserve(minutes: int) -> int:
    """Minutes of a mock of `minutes` kept for follow-ups: none are planned into them."""
    if minutes < FOLLOW_UPS_FROM_MINUTES:
        return 0
    return int(minutes * FOLLOW_UP_SHARE)


def reviewed_within(states: Iterable[CardState], today: dt.date, days: int = RECENT_DAYS) -> frozenset[str]:
    """The cards reviewed in the last `days` days, today included."""
    since = today - dt.timedelta(days=days - 1)
    return frozenset(s.card_id for s in states if s.last_review_day is not None and s.last_review_day >= since)


def _fresh_first(options: list[Card], recent: Collection[str]) -> list[Card]:
    """The cards of `options` not reviewed lately, or all of them when every one was."""
    return [c for c in options if c.id not in recent] or options


def make_plan(
    cards: Mapping[str, Card],
    weakness: Mapping[str, float],
    *,
    minutes: int = DEFAULT_MINUTES,
    topics: Sequence[str] = (),
    questions: int | None = None,
    judge_available: bool = False,
    seed: int | None = None,
    exclude: Iterable[str] = (),
    gpus: int | None = None,
    recent: Collection[str] = (),
) -> MockPlan:
    """A plan for a mock of `minutes` minutes over `topics` (all topics when empty).

    `weakness` maps topic -> weakness score (drill.study.standing); a topic missing
    from it counts as unseen (the prior). `questions` caps the count.
    `exclude` names cards to leave out (suspended ones, say). `gpus`: the GPUs the
    judge has (None: count this machine's); a collective card needs two.
    `recent`: cards reviewed lately (`reviewed_within`), asked only where their topic has no other.
    """
    if minutes < 1:
        raise PlanError("a mock needs at least 1 minute")
    if questions is not None and questions < 1:
        raise PlanError("a mock needs at least 1 question")
    known = {c.topic for c in cards.values()}
    unknown = [t for t in topics if t not in known]
    if unknown:
        raise PlanError(f"no cards in topic {', '.join(unknown)}")
    wanted = set(topics) or known
    skip = set(exclude)
    # a scenario is a round of its own (drill.mock.rounds), never one question of a quick mock
    pool = [c for c in cards.values() if c.topic in wanted and c.id not in skip and c.kind != "scenario"]
    if not judge_available:
        pool = [c for c in pool if c.kind != "kernel"]
    else:
        here = gpu_count() if gpus is None else gpus
        pool = [c for c in pool if needs_gpus(c) <= here]
    if not pool:
        raise PlanError("no cards to ask in the chosen topics")
    rng = random.Random(seed)
    pool.sort(key=lambda c: c.id)
    by_topic_all: dict[str, list[Card]] = {}
    for c in pool:
        by_topic_all.setdefault(c.topic, []).append(c)
    chosen: list[Card] = []
    chosen_ids: set[str] = set()
    budget = minutes - follow_up_reserve(minutes)
    limit = questions if questions is not None else len(pool)

    def weight(topic: str) -> float:
        return (max(0.0, weakness.get(topic, UNSEEN_WEAKNESS)) + WEIGHT_FLOOR) ** 2  # squared: a weak topic stands out

    def take(kind: str | None) -> bool:
        """Add one card (of `kind`, or any kind) that fits the minutes left; False when none does."""
        nonlocal budget
        if len(chosen) >= limit:
            return False
        options: dict[str, list[Card]] = {}
        for topic, cards_of_topic in by_topic_all.items():
            fitting = [
                c
                for c in cards_of_topic
                if (kind is None or c.kind == kind) and c.id not in chosen_ids and minutes_for(c) <= budget
            ]
            if fitting:
                options[topic] = fitting
        if not options:
            return False
        names = sorted(options)
        topic = rng.choices(names, weights=[weight(t) for t in names])[0]
        card = rng.choice(_fresh_first(options[topic], recent))
        chosen.append(card)
        chosen_ids.add(card.id)
        budget -= minutes_for(card)
        return True

    def take_from(topic: str) -> None:
        """Add one card of `topic`, of a required kind not yet planned where it has one."""
        nonlocal budget
        missing = [k for k in REQUIRED_KINDS if all(c.kind != k for c in chosen)]
        fitting = [c for c in by_topic_all[topic] if c.id not in chosen_ids and minutes_for(c) <= budget]
        preferred = [c for c in fitting if c.kind in missing] or fitting
        if preferred and len(chosen) < limit:
            card = rng.choice(_fresh_first(preferred, recent))
            chosen.append(card)
            chosen_ids.add(card.id)
            budget -= minutes_for(card)

    if not topics and minutes >= WEAKEST_ASKED_FROM_MINUTES:
        for topic in weakest_topics(by_topic_all, weakness, rng):
            take_from(topic)
    kinds = (*REQUIRED_KINDS, "kernel") if judge_available else REQUIRED_KINDS
    for kind in kinds:
        if all(c.kind != kind for c in chosen):
            take(kind)
    while take(None):
        pass
    if not chosen:
        kept = follow_up_reserve(minutes)
        room = f" ({kept} of them kept for follow-ups)" if kept else ""
        raise PlanError(f"no question fits in {counted(minutes, 'minute')}{room}")
    rng.shuffle(chosen)
    return MockPlan(minutes, tuple(PlannedQuestion(c.id, c.topic, c.kind, minutes_for(c)) for c in chosen))


def weakest_topics(
    by_topic: Mapping[str, Sequence[Card]], weakness: Mapping[str, float], rng: random.Random
) -> list[str]:
    """The first WEAKEST_ASKED topics with cards here in the stats' weakest-topics ranking (ranked_topics: a
    topic missing from `weakness` is not practised yet); those not practised yet are drawn in a random order,
    so a new learner's mocks do not all start from the same topics."""
    ranked = ranked_topics(by_topic, weakness)
    practised = [t for t in ranked if t in weakness]
    rest = [t for t in ranked if t not in weakness]
    rng.shuffle(rest)
    return (practised + rest)[:WEAKEST_ASKED]


def chosen_topics(topics: str | None, track: str | None, known: set[str] | None = None) -> list[str]:
    """The topics of `--topics a,b` and of `--track T` (only those with cards, when `known` is given)."""
    chosen = [t.strip() for t in (topics or "").split(",") if t.strip()]
    if track:
        tracks = load_tracks()
        if track not in tracks:
            raise PlanError(f"unknown track {track!r} (choose from {', '.join(tracks)})")
        chosen += [t for t in tracks[track]["topics"] if (known is None or t in known) and t not in chosen]
    return chosen
