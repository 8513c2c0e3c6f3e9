"""The replay file's cards line: written as columns (floats packed), read back to an equal state, and refused when
it holds anything but what was written."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from dataclasses import replace
from typing import Any, Callable

import pytest

from drill.store import replay_json
from drill.study.forecast import MemoryModel, ReplayState, replay_day
from drill.study.records import CardState
from tests.study.test_fitting import simulated_history


@pytest.fixture(scope="module")
def state() -> ReplayState:
    """A replay's state over a simulated learner's log, with a card the replay gave no memory beside them."""
    history = [replace(r, duration_ms=2000 + 37 * (r.id % 50)) for r in simulated_history(300)]  # timed views
    replayed = replay_day(history, history[-1].day, MemoryModel()).at_start
    replayed.states["unremembered"] = CardState(
        "unremembered", due=dt.date(2026, 3, 2), last_review_day=dt.date(2026, 3, 1), repeat_pending=True
    )
    return replayed


def round_trip(data: Any) -> ReplayState:
    return replay_json.state_from_json(json.loads(json.dumps(data, allow_nan=False)))


def test_the_columns_read_back_to_an_equal_state(state):
    assert state.cards and state.digest.views and len(state.states) > len(state.cards)
    back = round_trip(replay_json.state_json(state))
    assert back == state
    assert back.states["unremembered"].fsrs is None and "unremembered" not in back.cards
    stabilities = [card.memory.stability for card in state.cards.values()]
    assert [back.cards[card_id].memory.stability for card_id in state.cards] == stabilities  # every digit kept


def test_an_empty_state_reads_back(state):
    assert round_trip(replay_json.state_json(ReplayState())) == ReplayState()


def test_a_number_json_cannot_hold_is_not_written(state):
    card_id = next(iter(state.cards))
    broken = state.copy()
    known = broken.cards[card_id]
    memory = replace(known.memory, stability=math.nan)
    broken.cards[card_id] = replace(known, memory=memory)
    broken.states[card_id] = replace(broken.states[card_id], fsrs=memory)
    with pytest.raises(ValueError):
        replay_json.state_json(broken)


def shorter(name: str) -> Callable[[dict[str, Any]], None]:
    def spoil(cards: dict[str, Any]) -> None:
        cards[name] = cards[name][:-1]

    return spoil


def set_first(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def spoil(cards: dict[str, Any]) -> None:
        cards[name][0] = value

    return spoil


def remembered_without_day(cards: dict[str, Any]) -> None:
    first = next(i for i, state in enumerate(cards["state"]) if state is not None)
    cards["last_review"][first] = None


def packed_cut(cards: dict[str, Any]) -> None:
    cards["stability"] = cards["stability"][:-12]


def one_number_fewer(cards: dict[str, Any]) -> None:
    cards["stability"] = base64.b64encode(base64.b64decode(cards["stability"])[:-8]).decode("ascii")


@pytest.mark.parametrize(
    "spoil",
    [
        shorter("due"),
        shorter("lapses"),
        set_first("reviews", True),
        set_first("id", 7),
        set_first("repeat_pending", 1),
        set_first("last_review_day", "2026-03-01"),
        remembered_without_day,
        packed_cut,
        one_number_fewer,
        lambda cards: cards.update(difficulty="not base64!"),
        lambda cards: cards.update(difficulty=[1.0]),
        lambda cards: cards.pop("state"),
    ],
    ids=[
        "a column short",
        "another column short",
        "a bool for a count",
        "an id that is no text",
        "a number for a flag",
        "a day as text",
        "a memory without its day",
        "packed numbers cut short",
        "packed numbers one fewer",
        "packed numbers that are no base64",
        "numbers not packed",
        "a column missing",
    ],
)
def test_a_spoiled_cards_column_is_refused(state, spoil):
    data = replay_json.state_json(state)
    spoil(data["cards"])
    with pytest.raises((ValueError, KeyError, TypeError)):
        round_trip(data)


def test_spoiled_view_sums_are_refused(state):
    data = replay_json.state_json(state)
    data["digest"]["views"][2] = data["digest"]["views"][2][:-4]
    with pytest.raises(ValueError):
        round_trip(data)
