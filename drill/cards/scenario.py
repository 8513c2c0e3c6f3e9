"""Scenario cards: one interview problem in stages sharing one parameter draw, and the card each stage is asked as.

A scenario's stages are read into `Stage` records; `stage_card` turns a stage and the scenario's draw into an
ordinary card the mock already asks and grades: a numeric stage becomes a memory_ledger card whose parameters are
pinned to the draw (a twist's changed ones to their new values), a free-text stage a concept card with its rubric
(a clarify stage's rubric is its expected asks). Stage cards have ids `<scenario id>#<stage number>`, which no
deck card can have, so a stage's answer is logged against its scenario.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from drill.cards.field_values import items, mappings, texts
from drill.cards.model import Card

STAGE_MARK = "#"


class StageType(enum.Enum):
    """What a stage asks: the numbers to ask for, an estimate, a design, a diagnosis, or a twist on one of them."""

    CLARIFY = "clarify"
    ESTIMATE = "estimate"
    DESIGN = "design"
    DIAGNOSE = "diagnose"
    TWIST = "twist"


class Dimension(enum.Enum):
    """What an interviewer's report rates a candidate on; each stage is evidence for one."""

    CLARIFYING = "clarifying"
    ESTIMATION = "estimation"
    DESIGN = "design"
    DEBUGGING = "debugging"
    COMMUNICATION = "communication"


class RoundType(enum.Enum):
    """The kind of interview round a scenario belongs to (`drill mock --round`; topology ones come in `mixed`)."""

    SERVING = "serving"
    TRAINING = "training"
    DEBUG = "debug"
    TOPOLOGY = "topology"


# The keys of a stage by type: (required, optional). `answer`, `minutes` and `dimension` go with any type.
COMMON_STAGE_KEYS = ("type", "prompt", "answer", "minutes", "dimension")
STAGE_KEYS: dict[StageType, tuple[tuple[str, ...], tuple[str, ...]]] = {
    StageType.CLARIFY: (("asks",), ()),
    StageType.ESTIMATE: (("answers",), ("ledger",)),
    StageType.DESIGN: (("rubric",), ()),
    StageType.DIAGNOSE: (("rubric",), ()),
    StageType.TWIST: ((), ("set", "answers", "ledger", "rubric")),
}
DEFAULT_MINUTES: dict[StageType, int] = {
    StageType.CLARIFY: 4,
    StageType.ESTIMATE: 8,
    StageType.DESIGN: 10,
    StageType.DIAGNOSE: 10,
    StageType.TWIST: 5,
}
MAX_STAGE_MINUTES = 30
DEFAULT_DIMENSION: dict[StageType, Dimension] = {
    StageType.CLARIFY: Dimension.CLARIFYING,
    StageType.ESTIMATE: Dimension.ESTIMATION,
    StageType.DESIGN: Dimension.DESIGN,
    StageType.DIAGNOSE: Dimension.DEBUGGING,
}
# The fewest stages a scenario asks before its twists: a round is one problem probed in stages.
MIN_CORE_STAGES = 3
# The minutes its stages before the twists may give in all: a round scales them to the 26-34 minutes it has
# for them, and a card's own figures far from that would be bent out of their proportions.
CORE_MINUTES = (15, 40)


@dataclass(frozen=True)
class Stage:
    """One stage of a scenario, as its deck wrote it (templates not yet rendered). `number` counts from 1."""

    number: int
    type: StageType
    prompt: str
    minutes: int
    dimension: Dimension
    answer: str = ""
    asks: tuple[str, ...] = ()
    answers: tuple[Mapping[str, object], ...] = ()
    ledger: tuple[Mapping[str, object], ...] = ()
    rubric: tuple[str, ...] = ()
    changes: Mapping[str, object] = field(default_factory=dict)  # a twist's changed parameters and their new values

    @property
    def numeric(self) -> bool:
        """Whether the stage is answered with numbers (checked with a tolerance and step credit)."""
        return bool(self.answers)

    @property
    def twist(self) -> bool:
        return self.type is StageType.TWIST

    @property
    def label(self) -> str:
        return self.type.value


def stage_id(scenario_id: str, number: int) -> str:
    return f"{scenario_id}{STAGE_MARK}{number}"


def scenario_of(card_id: str) -> str:
    """The deck card an id belongs to: a stage card's scenario, any other card itself."""
    return card_id.partition(STAGE_MARK)[0]


def is_stage_card(card: Card) -> bool:
    return STAGE_MARK in card.id


def stage_type_of(card: Card) -> StageType | None:
    """The type of the stage a stage card asks (None for a deck card)."""
    value = card.fields.get("stage")
    return StageType(value) if isinstance(value, str) and value in {t.value for t in StageType} else None


def is_clarify(card: Card) -> bool:
    return stage_type_of(card) is StageType.CLARIFY


def _twist_dimension(raw: Mapping[str, object]) -> Dimension:
    return Dimension.ESTIMATION if raw.get("answers") else Dimension.DESIGN


def read_stage(number: int, raw: Mapping[str, object]) -> Stage:
    """One stage from its YAML mapping; raises ValueError where the deck check would refuse it."""
    try:
        kind = StageType(raw.get("type"))
    except ValueError:
        known = ", ".join(t.value for t in StageType)
        raise ValueError(f"`type` must be one of {known} (got {raw.get('type')!r})") from None
    minutes = raw.get("minutes", DEFAULT_MINUTES[kind])
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_STAGE_MINUTES:
        raise ValueError(f"`minutes` must be a whole number 1 to {MAX_STAGE_MINUTES} (got {minutes!r})")
    default = DEFAULT_DIMENSION.get(kind) or _twist_dimension(raw)
    try:
        dimension = Dimension(raw.get("dimension", default.value))
    except ValueError:
        known = ", ".join(d.value for d in Dimension)
        raise ValueError(f"`dimension` must be one of {known} (got {raw.get('dimension')!r})") from None
    changes = raw.get("set") or {}
    return Stage(
        number=number,
        type=kind,
        prompt=str(raw.get("prompt") or ""),
        minutes=minutes,
        dimension=dimension,
        answer=str(raw.get("answer") or ""),
        asks=tuple(texts(raw.get("asks"))),
        answers=tuple(mappings(raw.get("answers"))),
        ledger=tuple(mappings(raw.get("ledger"))),
        rubric=tuple(texts(raw.get("rubric"))),
        changes=dict(changes) if isinstance(changes, dict) else {},
    )


def stages_of(card: Card) -> tuple[Stage, ...]:
    """The scenario's stages in deck order; raises ValueError on the first that cannot be read."""
    stages = []
    for number, entry in enumerate(items(card.fields.get("stages")), 1):
        if not isinstance(entry, dict):
            raise ValueError(f"stages[{number - 1}]: a stage is a mapping with `type` and `prompt`")
        try:
            stages.append(read_stage(number, entry))
        except ValueError as exc:
            raise ValueError(f"stages[{number - 1}]: {exc}") from None
    return tuple(stages)


def core_stages(stages: Sequence[Stage]) -> tuple[Stage, ...]:
    """The stages every round asks, in order; the twists are its follow-ups."""
    return tuple(s for s in stages if not s.twist)


def twists(stages: Sequence[Stage]) -> tuple[Stage, ...]:
    return tuple(s for s in stages if s.twist)


def _pinned(card: Card, draw: Mapping[str, object]) -> dict[str, dict[str, list[object]]]:
    """The scenario's parameter specs with each pinned to its value in `draw`: every draw of them is that one."""
    from drill.cards.param_specs import PARAM_KINDS, card_params

    pinned = {}
    for name, spec in card_params(card).items():
        kind = next(k for k in PARAM_KINDS if k in spec)
        held = "choices" if kind == "range" else kind
        pinned[name] = {held: [draw[name]]}
    return pinned


def stage_draw(stage: Stage, draw: Mapping[str, object]) -> dict[str, object]:
    """The parameters a stage is asked with: the scenario's draw, a twist's changes applied."""
    return {**draw, **stage.changes}


def stage_prompt_source(card: Card, stage: Stage) -> str:
    """The template a stage is asked with: the scenario, then the stage's question. A clarifying stage has the
    scenario's `opening` (the problem as an interviewer first puts it, before any number is given); every other
    stage its `prompt` (the problem with the numbers the interviewer gives when asked)."""
    scenario = str(card.fields.get("opening") or card.prompt) if stage.type is StageType.CLARIFY else card.prompt
    return f"{scenario.rstrip()}\n\n{stage.prompt.strip()}\n"


def stage_card(
    card: Card, stage: Stage, draw: Mapping[str, object], *, params: Mapping[str, object] | None = None
) -> Card:
    """The card stage `stage` of scenario `card` is asked as, with the scenario's `draw` (a twist's changes applied).

    A numeric stage is a memory_ledger card (its templates rendered by its form, as any numeric card's); a free-text
    stage a concept card with its text rendered here. `params` replaces the pinned parameter specs (the deck check
    passes the scenario's own, to render many draws)."""
    asked = stage_draw(stage, draw)
    specs = dict(params) if params is not None else _pinned(card, asked)
    fields: dict[str, object] = {
        "stage": stage.type.value,
        "dimension": stage.dimension.value,
        "scenario": card.id,
        "minutes": stage.minutes,
    }
    base = replace(card, id=stage_id(card.id, stage.number), rubric=(), follow_ups=(), sources=card.sources)
    answer = stage.answer or card.answer
    if stage.numeric:
        ledger_fields = {"params": specs, "answers": list(stage.answers), "ledger": list(stage.ledger)}
        return replace(
            base,
            kind="memory_ledger",
            prompt=stage_prompt_source(card, stage),
            answer=answer,
            fields={**fields, **ledger_fields},
        )
    rubric = stage.asks if stage.type is StageType.CLARIFY else stage.rubric
    if stage.type is StageType.CLARIFY and not stage.answer:
        answer = "An interviewer expects you to ask for:\n\n" + "\n".join(f"- {a}" for a in stage.asks)
    prompt = render_stage_text(card, specs, asked, stage_prompt_source(card, stage), "prompt")
    shown_answer = render_stage_text(card, specs, asked, answer, "answer")
    return replace(base, kind="concept", prompt=prompt, answer=shown_answer, rubric=rubric, fields=fields)


def render_stage_text(
    card: Card, specs: Mapping[str, object], draw: Mapping[str, object], source: str, where: str
) -> str:
    """A free-text stage's template rendered in the card sandbox with one draw (raises TemplateProblem)."""
    from drill.cards.evaluation import Scope, render_text
    from drill.cards.rendering import card_scope, load_catalogue

    holder = replace(card, fields={"params": dict(specs)})
    scope = Scope(card_scope(holder, draw, load_catalogue(None, None, None)))
    return render_text(source, scope, where)


def scenario_preview(card: Card) -> str:
    """A scenario as the card browser shows it: its problem with one draw fixed by its id, then its stages."""
    import random

    from drill.cards.param_specs import card_params, draw_params
    from drill.cards.template_records import TemplateProblem

    try:
        draw = draw_params(card, random.Random(card.id))
        problem = render_stage_text(card, card_params(card), draw, card.prompt, "prompt")
        stages = stages_of(card)
    except (TemplateProblem, ValueError) as exc:
        return f"(this scenario could not be drawn: {exc})"
    listed = "\n".join(f"{s.number}. {s.label} ({s.dimension.value}, {s.minutes} min)" for s in stages)
    return f"{problem.rstrip()}\n\n**Asked in a mock round (`drill mock --round`), in stages:**\n\n{listed}\n"
