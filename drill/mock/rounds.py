"""Planning a mock round: one problem asked in stages for 35-45 minutes, its twists kept as follow-ups.

A round of `serving`, `training` or `debug` asks one scenario card of that round (`mixed`: of any round),
preferring one not asked in the last RECENT_DAYS days. One draw of its parameters is made for the whole round;
each stage before the twists is a planned question (drill.cards.scenario.stage_card), its minutes scaled so the
stages fill the round less the FOLLOW_UP_SHARE kept for follow-ups. The twists are not planned: after a strong
answer the next twist is the follow-up (drill.mock.follow_ups finds it among the stage's `follow_ups`), after a
weak one a narrower question with a hint.

A `kernel` round asks one kernel card (correctness and, on a GPU, its timing) and then a free-text stage, "what
would you optimise next", graded by the kernel card's rubric. Without a GPU the kernel is judged on the CPU path
and the round's report says what was not timed.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from drill.cards.model import Card
from drill.cards.scenario import (
    Dimension,
    Stage,
    StageType,
    core_stages,
    stage_card,
    stage_id,
    stages_of,
    twists,
)
from drill.mock.plan import MockPlan, PlanError, PlannedQuestion, follow_up_reserve, needs_gpus

DEFAULT_ROUND_MINUTES = 40
MIN_ROUND_MINUTES = 35
MAX_ROUND_MINUTES = 45
# Minutes a kernel round gives the kernel and the stage after it, before they are scaled to the round.
KERNEL_MINUTES = 25
OPTIMISE_NEXT_MINUTES = 8
NOT_TIMED = (
    "judged on the CPU path (no GPU here): correctness only; its bandwidth, its share of the copy ceiling and "
    "its ratio to PyTorch were not timed"
)


class RoundKind(enum.Enum):
    """What `drill mock --round` asks: one scenario of a round, any round's (`mixed`), or a kernel."""

    SERVING = "serving"
    TRAINING = "training"
    DEBUG = "debug"
    KERNEL = "kernel"
    MIXED = "mixed"


ROUND_WORDS: dict[RoundKind, str] = {
    RoundKind.SERVING: "serving design: one system sized, laid out and probed",
    RoundKind.TRAINING: "training estimates: memory and time of one training job",
    RoundKind.DEBUG: "profile debugging: one slow job read from its evidence",
    RoundKind.KERNEL: "a live kernel: correctness, then what you would optimise next",
    RoundKind.MIXED: "any scenario, serving, training, debugging or topology",
}


@dataclass(frozen=True)
class RoundStage:
    """A stage of the round as planned: the card it is asked as, its type and dimension, and whether it is a
    twist (a follow-up, asked only when earned)."""

    card_id: str
    number: int
    type: StageType
    dimension: Dimension
    twist: bool
    minutes: int
    what: str = ""  # what the stage asks, in a word, where its type does not say it (a kernel)

    @property
    def label(self) -> str:
        return self.what or self.type.value

    def as_json(self) -> dict[str, object]:
        return {
            "card_id": self.card_id,
            "number": self.number,
            "type": self.label,
            "dimension": self.dimension.value,
            "twist": self.twist,
            "minutes": self.minutes,
        }


@dataclass(frozen=True)
class RoundPlan:
    """One round: the problem asked (`source_id`, a scenario or a kernel card), its one draw, the plan of its
    stages, every stage card the run asks from (twists included) and whether a kernel is timed on a GPU."""

    kind: RoundKind
    source_id: str
    title: str
    draw: Mapping[str, object]
    plan: MockPlan
    stages: tuple[RoundStage, ...]
    cards: Mapping[str, Card]
    timed: bool = True

    @property
    def minutes(self) -> int:
        return self.plan.minutes

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "source_id": self.source_id,
            "title": self.title,
            "draw": dict(self.draw),
            "stages": [s.as_json() for s in self.stages],
            "timed": self.timed,
        }


def round_kind(text: str) -> RoundKind:
    try:
        return RoundKind(text)
    except ValueError:
        raise PlanError(f"unknown round {text!r} (choose from {', '.join(k.value for k in RoundKind)})") from None


def round_minutes(minutes: int | None) -> int:
    """A round's length: DEFAULT_ROUND_MINUTES, or the minutes asked if they are MIN to MAX_ROUND_MINUTES."""
    if minutes is None:
        return DEFAULT_ROUND_MINUTES
    if not MIN_ROUND_MINUTES <= minutes <= MAX_ROUND_MINUTES:
        raise PlanError(f"a round runs {MIN_ROUND_MINUTES} to {MAX_ROUND_MINUTES} minutes (got {minutes})")
    return minutes


def scaled_minutes(minutes: Sequence[int], budget: int) -> list[int]:
    """`minutes` scaled to add up to `budget` (each at least 1), the rounding's remainder given to the longest."""
    total = sum(minutes)
    scaled = [max(1, m * budget // total) for m in minutes]
    longest = max(range(len(minutes)), key=lambda i: minutes[i])
    scaled[longest] += budget - sum(scaled)
    return scaled


def scenarios_for(cards: Mapping[str, Card], kind: RoundKind) -> list[Card]:
    """The scenario cards a round of `kind` may ask, by id."""
    found = [c for c in cards.values() if c.kind == "scenario"]
    if kind is not RoundKind.MIXED:
        found = [c for c in found if c.fields.get("round") == kind.value]
    return sorted(found, key=lambda c: c.id)


def make_round(
    cards: Mapping[str, Card],
    kind: RoundKind,
    *,
    minutes: int | None = None,
    seed: int | None = None,
    recent: Collection[str] = (),
    exclude: Collection[str] = (),
    judge_available: bool = False,
    gpus: int = 0,
) -> RoundPlan:
    """A round of `kind` from `cards`; `recent`: cards asked in the last days (another is preferred), `exclude`:
    cards never asked (suspended ones). Raises PlanError when the decks hold nothing to ask."""
    length = round_minutes(minutes)
    rng = random.Random(seed)
    if kind is RoundKind.KERNEL:
        return _kernel_round(cards, length, rng, recent, exclude, judge_available, gpus)
    pool = [c for c in scenarios_for(cards, kind) if c.id not in exclude]
    if not pool:
        raise PlanError(f"no scenario for a {kind.value} round in the decks")
    fresh = [c for c in pool if c.id not in recent] or pool
    scenario = rng.choice(fresh)
    return scenario_round(scenario, kind, length, rng)


def scenario_round(scenario: Card, kind: RoundKind, minutes: int, rng: random.Random) -> RoundPlan:
    """The round asking `scenario` with one draw of its parameters."""
    from drill.cards.param_specs import draw_params

    stages = stages_of(scenario)
    draw = draw_params(scenario, rng)
    core = core_stages(stages)
    later = twists(stages)
    budget = minutes - follow_up_reserve(minutes)
    fitted = scaled_minutes([s.minutes for s in core], budget)
    twist_ids = tuple(stage_id(scenario.id, s.number) for s in later)
    asked: dict[str, Card] = {}
    planned: list[RoundStage] = []
    for stage, stage_minutes in zip(core, fitted):
        # a twist follows a strong answer from the first estimate or design on, never a clarifying question
        follow_ups = () if stage.type is StageType.CLARIFY else twist_ids
        card = _headed(stage_card(scenario, stage, draw), stage, len(core))
        asked[card.id] = replace(card, follow_ups=follow_ups, fields={**card.fields, "minutes": stage_minutes})
        planned.append(RoundStage(card.id, stage.number, stage.type, stage.dimension, False, stage_minutes))
    for stage in later:
        card = _headed(stage_card(scenario, stage, draw), stage, len(core))
        asked[card.id] = card
        planned.append(RoundStage(card.id, stage.number, stage.type, stage.dimension, True, stage.minutes))
    questions = tuple(
        PlannedQuestion(s.card_id, scenario.topic, asked[s.card_id].kind, s.minutes) for s in planned if not s.twist
    )
    title = scenario_title(scenario)
    return RoundPlan(kind, scenario.id, title, draw, MockPlan(minutes, questions), tuple(planned), asked)


def scenario_title(card: Card) -> str:
    """A scenario named in a few words: its id without the `scenario-` every one starts with."""
    return card.id.removeprefix("scenario-").replace("-", " ")


def _headed(card: Card, stage: Stage, core: int) -> Card:
    """The stage card with a line above its prompt saying where in the round it is."""
    where = "a twist on the same problem" if stage.twist else f"stage {stage.number} of {core} · {stage.label}"
    return replace(card, prompt=f"*Round: {where}*\n\n{card.prompt}")


def _kernel_round(
    cards: Mapping[str, Card],
    minutes: int,
    rng: random.Random,
    recent: Collection[str],
    exclude: Collection[str],
    judge_available: bool,
    gpus: int,
) -> RoundPlan:
    pool = sorted(
        (c for c in cards.values() if c.kind == "kernel" and c.id not in exclude and needs_gpus(c) <= gpus),
        key=lambda c: c.id,
    )
    if not judge_available:  # the CPU path runs Triton under its interpreter; a CUDA card only compiles
        pool = [c for c in pool if c.fields.get("language") == "triton"] or pool
    if not pool:
        raise PlanError("no kernel card for a kernel round in the decks")
    kernel = rng.choice([c for c in pool if c.id not in recent] or pool)
    budget = minutes - follow_up_reserve(minutes)
    kernel_minutes, next_minutes = scaled_minutes([KERNEL_MINUTES, OPTIMISE_NEXT_MINUTES], budget)
    optimise = optimise_next_card(kernel, next_minutes, timed=judge_available)
    stages = (
        RoundStage(kernel.id, 1, StageType.DESIGN, Dimension.DESIGN, False, kernel_minutes, "kernel"),
        RoundStage(optimise.id, 2, StageType.DESIGN, Dimension.COMMUNICATION, False, next_minutes, "optimise next"),
    )
    questions = (
        PlannedQuestion(kernel.id, kernel.topic, "kernel", kernel_minutes),
        PlannedQuestion(optimise.id, kernel.topic, optimise.kind, next_minutes),
    )
    plan = MockPlan(minutes, questions)
    where = "*Round: stage 1 of 2 · kernel*"
    if not judge_available:  # said before the learner starts, not only in the report
        where += f"\n\n**This kernel will be {NOT_TIMED}.**"
    asked = {kernel.id: replace(kernel, prompt=f"{where}\n\n{kernel.prompt}"), optimise.id: optimise}
    title = f"kernel {kernel.id} ({kernel.fields.get('language')})"
    return RoundPlan(RoundKind.KERNEL, kernel.id, title, {}, plan, stages, asked, timed=judge_available)


def optimise_next_card(kernel: Card, minutes: int, *, timed: bool) -> Card:
    """The stage after a kernel: what the learner would optimise next, graded by the kernel card's rubric."""
    measured = "its figures" if timed else "what the CPU path checked (nothing was timed)"
    prompt = (
        f"*Round: stage 2 of 2 · what would you optimise next*\n\n"
        f"You have run **{kernel.id}** and seen {measured}. As you would tell an interviewer: what bounds this "
        "kernel, what would you optimise next and in what order, and how would you measure that each step helped?"
    )
    fields = {"stage": StageType.DESIGN.value, "dimension": Dimension.COMMUNICATION.value, "minutes": minutes}
    return replace(
        kernel,
        id=stage_id(kernel.id, 2),
        kind="concept",
        prompt=prompt,
        answer=_writeup(kernel),
        follow_ups=(),
        fields=fields,
    )


def _writeup(kernel: Card) -> str:
    """The kernel card's write-up of why its solution is fast (the stage's expected answer), or where it lives."""
    from drill import paths

    name = str(kernel.fields.get("writeup") or "")
    try:
        return (paths.answers_dir() / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return f"The reference write-up: answers/{name}"


def round_share_on_scenarios(plan: RoundPlan) -> float:
    """The share of the round's minutes spent on its problem: its planned stages and the minutes kept for the
    twists, which are follow-ups on the same problem."""
    staged = sum(s.minutes for s in plan.stages if not s.twist)
    kept = follow_up_reserve(plan.minutes) if any(s.twist for s in plan.stages) else 0
    return (staged + kept) / plan.minutes
