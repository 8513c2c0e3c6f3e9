"""The study day's plan kept: read back it is the plan made afresh, its key moves with what the plan is made of
and not with a grade given today, and what would fit is worked out once, where it is asked for."""

import dataclasses
import datetime as dt
import json
import math

import pytest

from drill.study import kept_plan
from drill.study.forecast import TrackCard
from drill.study.kept_plan import plan_from_json, plan_json, plan_kept, plan_key
from drill.study.plan import PlanInputs, StudyPlan, plan_of, with_suggestions
from drill.study.readiness import Interview, readiness_figures
from drill.study.records import CardState, FSRSState, LoggedReview
from drill.study.uncertainty import Uncertainty

TODAY = dt.date(2026, 6, 1)
DATE = TODAY + dt.timedelta(days=20)


@dataclasses.dataclass
class Shelf:
    """A PlanKeeper in memory that says what it was asked."""

    plans: dict[str, StudyPlan] = dataclasses.field(default_factory=dict)
    asked: list[str] = dataclasses.field(default_factory=list)
    kept_keys: list[str] = dataclasses.field(default_factory=list)

    def kept(self, key: str) -> StudyPlan | None:
        self.asked.append(key)
        return self.plans.get(key)

    def keep(self, key: str, plan: StudyPlan) -> None:
        self.kept_keys.append(key)
        self.plans[key] = plan


@dataclasses.dataclass(frozen=True)
class Fact:
    id: str
    topic: str
    kind: str = "concept"
    fields: dict[str, object] = dataclasses.field(default_factory=dict)


def short_of_minutes() -> PlanInputs:
    """A track that does not fit in 8 minutes a day (the slow ledgers would): seen cards, unseen ones of two
    topics, and a seen card outside the track."""
    seen = [
        TrackCard(f"seen-{i}", "serving", "concept", FSRSState(3.0 + i, 5.0, 2, TODAY - dt.timedelta(days=4)), TODAY)
        for i in range(4)
    ]
    ledgers = [TrackCard(f"m-{i}", "moe", "memory_ledger") for i in range(40)]
    unseen = [TrackCard(f"s-{i}", "serving", "concept") for i in range(10)]
    outside = [TrackCard("other", "gemm", "concept", FSRSState(2.0, 6.0, 2, TODAY - dt.timedelta(days=3)), TODAY)]
    return PlanInputs(seen + ledgers + unseen, outside, TODAY, DATE, 8, 0.9, uncertainty=Uncertainty(skip_rate=0.1))


def test_a_plan_read_back_from_its_stored_form_is_the_plan_made():
    plan = plan_of(short_of_minutes())
    assert plan.minutes_needed is not None and plan.leave_out and plan.suggested  # every field has something
    again = plan_from_json(json.loads(json.dumps(plan_json(plan))))
    assert again == plan
    assert again.as_json() == plan.as_json()
    assert json.dumps(again.as_json()) == json.dumps(plan.as_json())  # 8 minutes stay 8, not 8.0


def test_the_kept_plan_is_read_and_not_made_again(monkeypatch):
    inputs = short_of_minutes()
    shelf = Shelf()
    made = plan_kept(inputs, suggest=True, keeper=shelf)
    assert shelf.kept_keys == [plan_key(inputs)]

    def not_again(*args: object, **kwargs: object) -> StudyPlan:
        raise AssertionError("the kept plan was made again")

    monkeypatch.setattr(kept_plan, "plan_of", not_again)
    monkeypatch.setattr(kept_plan, "with_suggestions", not_again)
    assert plan_kept(inputs, suggest=True, keeper=shelf) == made
    assert plan_kept(inputs, suggest=False, keeper=shelf) == made  # the start reads the plan stats made
    assert shelf.kept_keys == [plan_key(inputs)]


def test_what_would_fit_is_worked_out_where_it_is_asked_for_and_kept_with_the_plan():
    inputs = short_of_minutes()
    shelf = Shelf()
    at_start = plan_kept(inputs, suggest=False, keeper=shelf)
    assert not at_start.suggested and at_start.minutes_needed is None and at_start.leave_out == ()
    shown = plan_kept(inputs, suggest=True, keeper=shelf)
    assert shown == plan_of(inputs, suggest=True)  # the very figures of a plan made with them
    assert shown.suggested and shown.minutes_needed is not None and shown.leave_out
    assert shelf.plans[plan_key(inputs)] == shown
    assert with_suggestions(shown, inputs) is shown


def test_the_key_moves_with_each_input():
    inputs = short_of_minutes()
    key = plan_key(inputs)
    assert plan_key(dataclasses.replace(inputs)) == key
    cards = list(inputs.cards)
    changed = [
        dataclasses.replace(inputs, minutes_per_day=9),
        dataclasses.replace(inputs, target=0.85),
        dataclasses.replace(inputs, today=TODAY + dt.timedelta(days=1)),
        dataclasses.replace(inputs, date=DATE + dt.timedelta(days=1)),
        dataclasses.replace(inputs, uncertainty=Uncertainty(skip_rate=0.2)),
        dataclasses.replace(inputs, cards=cards[:-1]),  # a card left the decks
        dataclasses.replace(inputs, cards=[*cards[1:], cards[0]]),  # another order of new cards
        dataclasses.replace(inputs, cards=cards[1:], others=[*inputs.others, cards[0]]),  # out of the track
        dataclasses.replace(
            inputs, cards=[dataclasses.replace(cards[0], due=TODAY + dt.timedelta(days=2)), *cards[1:]]
        ),
        dataclasses.replace(inputs, cards=[dataclasses.replace(cards[0], topic="moe"), *cards[1:]]),
    ]
    memory = cards[0].memory
    assert memory is not None
    stronger = dataclasses.replace(memory, stability=math.nextafter(memory.stability, math.inf))
    changed.append(dataclasses.replace(inputs, cards=[dataclasses.replace(cards[0], memory=stronger), *cards[1:]]))
    keys = [plan_key(other) for other in changed]
    assert key not in keys and len(set(keys)) == len(keys)


# Through readiness: the plan of the start of the day, whatever is graded meanwhile -----------------------------


def log_before_today() -> list[LoggedReview]:
    rows = []
    for i in range(8):
        day = TODAY - dt.timedelta(days=10 - i)
        rows.append(LoggedReview(len(rows) + 1, f"c{i}", day, 4, "review", f"{day}T09:00:00", None, 30_000))
    return rows


def states_before_today() -> dict[str, CardState]:
    """c0 overdue since yesterday, c1 due today, the rest due later; c8 and c9 never seen."""
    states = {}
    for i in range(8):
        due = TODAY + dt.timedelta(days=i - 1)
        states[f"c{i}"] = CardState(
            f"c{i}", due=due, last_review_day=TODAY - dt.timedelta(days=10 - i), introduced_on=TODAY
        )
    return states


def graded_today(states: dict[str, CardState], card_id: str) -> dict[str, CardState]:
    after = dict(states)
    after[card_id] = dataclasses.replace(states[card_id], due=TODAY + dt.timedelta(days=6), last_review_day=TODAY)
    return after


def figures(log, states, minutes=30, keeper=None):
    facts = [Fact(f"c{i}", "serving" if i % 2 else "moe") for i in range(10)]
    interview = Interview(DATE, None, 0.9, minutes)
    return readiness_figures(
        facts, log, states, TODAY, interview, titles={}, new_order="deck", suggest=False, keeper=keeper
    )


@pytest.mark.parametrize("card_id", ["c0", "c1"], ids=["overdue", "due today"])
def test_a_grade_today_keeps_the_key_and_the_plan(card_id):
    log = log_before_today()
    states = states_before_today()
    shelf = Shelf()
    before = figures(log, states, keeper=shelf)
    today_row = LoggedReview(len(log) + 1, card_id, TODAY, 5, "review", f"{TODAY}T09:00:00", None, 20_000)
    after = figures([*log, today_row], graded_today(states, card_id), keeper=shelf)
    assert len(shelf.asked) == 2 and shelf.asked[0] == shelf.asked[1]
    assert len(shelf.kept_keys) == 1  # made once, read back after the grade
    assert after.plan == before.plan
    assert after.spent_today_seconds == 20  # what is not the plan's still follows the day
    assert after.plan is not None and after.plan == figures(log, states).plan  # the plan made afresh


def test_a_changed_minutes_setting_or_an_older_review_imported_makes_another_plan():
    log = log_before_today()
    states = states_before_today()
    shelf = Shelf()
    figures(log, states, keeper=shelf)
    longer = figures(log, states, minutes=45, keeper=shelf)
    imported = LoggedReview(len(log) + 1, "c9", TODAY - dt.timedelta(days=3), 3, "review", "", None, 10_000)
    figures([*log, imported], {**states, "c9": CardState("c9", due=TODAY, introduced_on=TODAY)}, keeper=shelf)
    assert len(set(shelf.asked)) == 3 and len(shelf.kept_keys) == 3
    assert longer.plan == figures(log, states, minutes=45).plan
