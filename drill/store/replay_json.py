"""The replay cache's JSON: a replay's state (drill.study.forecast.ReplayState) and the calibration's sums
(drill.study.calibration.Tally) as plain JSON, and built back from it to equal records.

The one place the replay file's records are written and read (drill.store.replay_cache keeps the file). Days
are ordinals, floats keep their every digit. Reading takes whatever the file holds: anything but what was
written raises ValueError (or KeyError, TypeError), and the log is replayed instead.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any, TypedDict

from drill.store.reader import LogMark
from drill.study.calibration import BINS, Sums, Tally
from drill.study.forecast import CardMemory, ReplayState
from drill.study.grades import GradeCounts
from drill.study.log_digest import LogDigest
from drill.study.pace import ViewSums
from drill.study.records import CardState, FSRSState

# A card is one row: [id, due, introduced_on, last_review_day, repeat_pending, memory, reviews, lapses], the
# memory [stability, difficulty, state, last_review] or None.
CardRow = list[Any]
SumsJSON = list[float]  # [count, predicted, recalled]


class TallyJSON(TypedDict):
    reviews: int
    bins: list[SumsJSON]
    loss: float
    groups: list[list[float]]  # [delta_t, number, lapses, count, predicted, recalled]


class DigestJSON(TypedDict):
    views: list[list[Any]]  # [card_id, count, total, squares]
    first: list[list[int]]  # [grade, n]
    recalled: list[list[int]]
    seen: list[str]
    days: list[int]
    predicted: list[list[float]]  # [day, count, predicted, recalled]


class StateJSON(TypedDict):
    cards: list[CardRow]
    tally: TallyJSON
    last: list[int] | None  # [day, id]
    digest: DigestJSON


# -- written ----------------------------------------------------------------------------
def state_json(state: ReplayState) -> StateJSON:
    """Plain JSON that `state_from_json` reads back to an equal state.

    The replay moves no field of a card's state but those of a card's row; a state that holds more raises
    ValueError (such a state is not kept).
    """
    rows: list[CardRow] = []
    for card_id, card in state.states.items():
        left = replace(card, due=None, introduced_on=None, last_review_day=None, repeat_pending=False, fsrs=None)
        if left != CardState(card_id):
            raise ValueError(f"the replayed state of {card_id} holds more than a replay moves")
        known = state.cards.get(card_id)
        memory = None
        reviews = 0
        lapses = 0
        if known is not None:
            if known.memory != card.fsrs:
                raise ValueError(f"the memory of {card_id} is not its state's")
            memory = [
                known.memory.stability,
                known.memory.difficulty,
                known.memory.state,
                known.memory.last_review.toordinal(),
            ]
            reviews = known.reviews
            lapses = known.lapses
        elif card.fsrs is not None:
            raise ValueError(f"{card_id} has a memory without reviews")
        days = [_ordinal(card.due), _ordinal(card.introduced_on), _ordinal(card.last_review_day)]
        rows.append([card_id, *days, card.repeat_pending, memory, reviews, lapses])
    last = None if state.last is None else [state.last[0].toordinal(), state.last[1]]
    return {"cards": rows, "tally": tally_json(state.tally), "last": last, "digest": _digest_json(state.digest)}


def tally_json(tally: Tally) -> TallyJSON:
    """Plain JSON that `tally_from_json` reads back to the same numbers."""
    return {
        "reviews": tally.reviews,
        "bins": [_sums_json(b) for b in tally.bins],
        "loss": tally.loss,
        "groups": [[*key, *_sums_json(sums)] for key, sums in tally.groups.items()],
    }


def mark_json(mark: LogMark) -> list[Any]:
    return [mark.rows, None if mark.newest is None else list(mark.newest)]


def _digest_json(digest: LogDigest) -> DigestJSON:
    return {
        "views": [[card_id, v.count, v.total, v.squares] for card_id, v in digest.views.items()],
        "first": [[grade, n] for grade, n in digest.grades.first.items()],
        "recalled": [[grade, n] for grade, n in digest.grades.recalled.items()],
        "seen": sorted(digest.grades.seen),
        "days": sorted(day.toordinal() for day in digest.study_days),
        "predicted": [[day.toordinal(), *_sums_json(s)] for day, s in digest.predicted_by_day.items()],
    }


def _sums_json(sums: Sums) -> SumsJSON:
    return [sums.count, sums.predicted, sums.recalled]


# -- read back --------------------------------------------------------------------------
def state_from_json(data: Any) -> ReplayState:
    """The state `state_json` wrote; ValueError (or KeyError, TypeError) for anything else."""
    out = ReplayState(tally=tally_from_json(data["tally"]), digest=_digest_from_json(data["digest"]))
    if data["last"] is not None:
        day, last_id = data["last"]
        out.last = (_date(day), _whole(last_id))
    for card_id, due, introduced, last_review, pending, memory, reviews, lapses in data["cards"]:
        if type(card_id) is not str or type(pending) is not bool:
            raise ValueError("a card of the wrong shape")
        fsrs_state = None
        if memory is not None:
            stability, difficulty, state, reviewed = memory
            fsrs_state = FSRSState(_real(stability), _real(difficulty), _whole(state), _date(reviewed))
            out.cards[card_id] = CardMemory(fsrs_state, _whole(reviews), _whole(lapses))
        out.states[card_id] = CardState(
            card_id,
            due=_day(due),
            introduced_on=_day(introduced),
            last_review_day=_day(last_review),
            repeat_pending=pending,
            fsrs=fsrs_state,
        )
    return out


def tally_from_json(data: Any) -> Tally:
    """The tally `tally_json` wrote; ValueError (or KeyError, TypeError) for anything else."""
    reviews = data["reviews"]
    loss = data["loss"]
    bins = data["bins"]
    if not (type(reviews) is int and _is_number(loss) and type(bins) is list and len(bins) == BINS):
        raise ValueError("a tally of the wrong shape")
    groups: dict[tuple[float, float, float], Sums] = {}
    for row in data["groups"]:
        delta_t, number, lapses, *sums = row
        if not all(_is_number(v) for v in (delta_t, number, lapses)):
            raise ValueError("a benchmark bin of the wrong shape")
        groups[(float(delta_t), float(number), float(lapses))] = _sums_from_json(sums)
    return Tally(reviews, [_sums_from_json(b) for b in bins], float(loss), groups)


def mark_from_json(data: Any) -> LogMark:
    rows, newest = data
    if type(rows) is not int or not (newest is None or type(newest) is list):
        raise ValueError("a mark of the wrong shape")
    return LogMark(rows, None if newest is None else tuple(newest))


def _digest_from_json(data: Any) -> LogDigest:
    views: dict[str, ViewSums] = {}
    for card_id, count, total, squares in data["views"]:
        if type(card_id) is not str:
            raise ValueError("a card of the wrong shape")
        views[card_id] = ViewSums(_whole(count), _real(total), _real(squares))
    seen = data["seen"]
    if not all(type(card_id) is str for card_id in seen):
        raise ValueError("a card of the wrong shape")
    grades = GradeCounts(
        {_whole(grade): _whole(n) for grade, n in data["first"]},
        {_whole(grade): _whole(n) for grade, n in data["recalled"]},
        set(seen),
    )
    study_days = {_date(day) for day in data["days"]}
    predicted = {_date(day): _sums_from_json(sums) for day, *sums in data["predicted"]}
    return LogDigest(views, grades, study_days, predicted)


def _sums_from_json(data: Any) -> Sums:
    count, predicted, recalled = data
    if not (type(count) is int and type(recalled) is int and _is_number(predicted)):
        raise ValueError("sums of the wrong shape")
    return Sums(count, float(predicted), recalled)


def _ordinal(day: dt.date | None) -> int | None:
    if day is None:
        return None
    return day.toordinal()


def _day(ordinal: Any) -> dt.date | None:
    if ordinal is None:
        return None
    return _date(ordinal)


def _date(ordinal: Any) -> dt.date:
    return dt.date.fromordinal(_whole(ordinal))


def _whole(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"not a whole number: {value!r}")
    return value


def _real(value: Any) -> float:
    if not _is_number(value):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)
