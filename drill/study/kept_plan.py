"""The plan of a study day kept as derived data: its key, its stored form, and the plan read back or made.

A plan is a pure function of what it is made of (drill.study.plan.PlanInputs), all of it as it
stood at the start of the study day: the track's cards with their memories and due days, the
seen cards outside the track, the learner's pace, grade mix and uncertainty, the memory model,
the minutes a day, the date, the target and today (drill.study.readiness says why the plan is the
same all day). `plan_key` is the digest of a canonical encoding of them and PLANNER_VERSION, so
an import, a settings change or a deck change makes another key, and a grade given today does
not: the memories, pace, grades and uncertainty are the log's before today, and a card graded
today counts as due today (drill.study.readiness), as a card due or overdue already did (the plan
reads a due day before today as today: drill.study.plan_runs.PlanWorld).

`plan_kept` reads the plan kept under the key from a `PlanKeeper` (drill.store.plan_cache keeps it
beside the database), or makes it and hands it back to be kept; what would fit (the minutes needed,
the topics to leave out) is worked out the first time it is asked for, and kept with the plan.
Pure: the keeper does the reading and writing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from drill.study.day_cards import DayCards
from drill.study.forecast import Readiness, TopicReadiness, TrackCard
from drill.study.plan import PlanDay, PlanInputs, StudyPlan, TopicCut, plan_of, with_suggestions
from drill.study.plan_runs import Forecast, plan_due_day
from drill.study.uncertainty import Uncertainty

# the planner's rules and the stored form: bump it when either changes what a kept plan would hold
PLANNER_VERSION = 2


class PlanKeeper(Protocol):
    """Where a study day's plan is kept: the plan kept under a key, and a plan to keep under one."""

    def kept(self, key: str) -> StudyPlan | None: ...

    def keep(self, key: str, plan: StudyPlan) -> None: ...


def plan_kept(inputs: PlanInputs, *, suggest: bool, keeper: PlanKeeper) -> StudyPlan:
    """The plan of `inputs` (drill.study.plan.plan_of), read from `keeper` when it holds it; made, and handed to
    `keeper`, when it does not, or when `suggest` asks for what would fit and the kept plan was made without it."""
    key = plan_key(inputs)
    plan = keeper.kept(key)
    if plan is None:
        plan = plan_of(inputs, suggest=suggest)
    elif suggest and not plan.suggested:
        plan = with_suggestions(plan, inputs)
    else:
        return plan
    keeper.keep(key, plan)
    return plan


def plan_key(inputs: PlanInputs) -> str:
    """The digest of everything the plan of `inputs` is made of (see the module docstring)."""
    head = [
        PLANNER_VERSION,
        inputs.today.isoformat(),
        inputs.date.isoformat(),
        inputs.minutes_per_day,
        inputs.target,
        inputs.model,
        inputs.pace,
        inputs.grades,
        inputs.uncertainty,
    ]
    # records, mappings and dates through `_canonical`; keys sorted, so equal records encode alike
    digest = hashlib.sha256(json.dumps(head, sort_keys=True, default=_canonical).encode("utf-8"))
    for group in (inputs.cards, inputs.others):
        digest.update(b"\x1e")  # the track's cards end here, the others' begin: moving a card between them tells
        digest.update("".join(_card_line(card, inputs.today) for card in group).encode("utf-8"))
    return digest.hexdigest()


def _card_line(card: TrackCard, today: dt.date) -> str:
    """One card as the plan reads it: id, topic, kind, and its memory and due day when it was ever seen."""
    memory = card.memory
    if memory is None:
        return f"{card.card_id}\x1f{card.topic}\x1f{card.kind}\n"
    # as the plan reads it: an overdue card graded today (now due today) is the same card
    due = plan_due_day(card.due, today)
    return (
        f"{card.card_id}\x1f{card.topic}\x1f{card.kind}\x1f{memory.stability!r}\x1f{memory.difficulty!r}"
        f"\x1f{memory.state}\x1f{memory.last_review.isoformat()}\x1f{due}\n"
    )


def _canonical(value: Any) -> Any:
    """`json.dumps`'s `default`: a record as its fields by name, a mapping as a dict, a date as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"a plan's input JSON cannot hold: {value!r}")


# -- the stored form --------------------------------------------------------------------------------------
def plan_json(plan: StudyPlan) -> dict[str, Any]:
    """Everything `plan` holds, as JSON (read back whole by `plan_from_json`; `StudyPlan.as_json` is what is shown)."""
    return {
        "today": plan.today.isoformat(),
        "date": plan.date.isoformat(),
        "minutes_per_day": plan.minutes_per_day,
        "target": plan.target,
        "new_per_day": plan.new_per_day,
        "days": [
            [
                d.day.isoformat(),
                list(d.new_cards),
                d.reviews,
                d.early_reviews,
                d.minutes,
                d.mock,
                d.minutes_p90,
                d.top_up,
            ]
            for d in plan.days
        ],
        "fits": plan.fits,
        "reasons": list(plan.reasons),
        "minutes_needed": plan.minutes_needed,
        "leave_out": [[cut.topic, cut.cards, cut.minutes_saved] for cut in plan.leave_out],
        "mocks": [day.isoformat() for day in plan.mocks],
        "now": _readiness_json(plan.now),
        "planned": _readiness_json(plan.planned),
        "projected": dict(plan.projected),
        "today_cards": _day_cards_json(plan.today_cards),
        "forecast": dataclasses.asdict(plan.forecast),
        "policy": plan.policy,
        "compared": [[name, share] for name, share in plan.compared],
        "needed_reaches": plan.needed_reaches,
        "uncertainty": dataclasses.asdict(plan.uncertainty),
        "suggested": plan.suggested,
    }


def plan_from_json(data: Any) -> StudyPlan:
    """The plan `plan_json` wrote; KeyError, TypeError or ValueError when `data` is not one."""
    needed = data["minutes_needed"]
    reaches = data["needed_reaches"]
    return StudyPlan(
        today=dt.date.fromisoformat(data["today"]),
        date=dt.date.fromisoformat(data["date"]),
        minutes_per_day=_number(data["minutes_per_day"]),
        target=_number(data["target"]),
        new_per_day=int(data["new_per_day"]),
        days=tuple(_day(row) for row in data["days"]),
        fits=bool(data["fits"]),
        reasons=tuple(str(reason) for reason in data["reasons"]),
        minutes_needed=None if needed is None else int(needed),
        leave_out=tuple(TopicCut(str(topic), int(cards), _number(saved)) for topic, cards, saved in data["leave_out"]),
        mocks=tuple(dt.date.fromisoformat(day) for day in data["mocks"]),
        now=_readiness(data["now"]),
        planned=_readiness(data["planned"]),
        projected={str(card_id): _number(recall) for card_id, recall in data["projected"].items()},
        today_cards=_day_cards(data["today_cards"]),
        forecast=Forecast(**data["forecast"]),
        policy=str(data["policy"]),
        compared=tuple((str(name), _number(share)) for name, share in data["compared"]),
        needed_reaches=None if reaches is None else _number(reaches),
        uncertainty=Uncertainty(**data["uncertainty"]),
        suggested=bool(data["suggested"]),
    )


def _day(row: Sequence[Any]) -> PlanDay:
    day, new_cards, reviews, early, minutes, mock, minutes_p90, top_up = row
    return PlanDay(
        dt.date.fromisoformat(day),
        tuple(str(card_id) for card_id in new_cards),
        _number(reviews),
        _number(early),
        _number(minutes),
        bool(mock),
        minutes_p90=_number(minutes_p90),
        top_up=_number(top_up),
    )


def _readiness_json(readiness: Readiness) -> dict[str, Any]:
    return {
        "on": readiness.on.isoformat(),
        "overall": readiness.overall,
        "cards": readiness.cards,
        "topics": [[topic.topic, topic.cards, topic.readiness] for topic in readiness.topics],
    }


def _readiness(data: Any) -> Readiness:
    topics = tuple(TopicReadiness(str(topic), int(cards), _number(mean)) for topic, cards, mean in data["topics"])
    return Readiness(dt.date.fromisoformat(data["on"]), _number(data["overall"]), int(data["cards"]), topics)


_DAY_GROUPS = ("due", "early", "new", "other_due", "top_up", "left_over")


def _day_cards_json(cards: DayCards[str]) -> dict[str, Any]:
    out: dict[str, Any] = {group: list(getattr(cards, group)) for group in _DAY_GROUPS}
    out["seconds"] = cards.seconds
    return out


def _day_cards(data: Any) -> DayCards[str]:
    due, early, new, other_due, top_up, left_over = (
        tuple(str(card_id) for card_id in data[group]) for group in _DAY_GROUPS
    )
    return DayCards(due, early, new, other_due, top_up, left_over, _number(data["seconds"]))


def _number(value: Any) -> float:
    """A number as it was written (an int stays an int, as in the plan made), TypeError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    return value
