"""The replay cache's JSON: a replay's state (drill.study.forecast.ReplayState) and the calibration's sums
(drill.study.calibration.Tally) as plain JSON, and built back from it to equal records.

The one place the replay file's records are written and read (drill.store.replay_cache keeps the file). Days
are ordinals, floats keep their every digit. The cards (10,000 and more, read back on every replay taken on) are
columns, their floats packed as 8 bytes each: a few long values to parse rather than lists and numbers card by
card, and each day's date built once for every card that has it. Reading takes whatever the file holds: anything but what was
written raises ValueError (or KeyError, TypeError), and the log is replayed instead.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import sys
from array import array
from dataclasses import replace
from typing import Any, TypedDict

from drill.store.reader import LogMark
from drill.study.calibration import BINS, Sums, Tally
from drill.study.forecast import CardMemory, ReplayState
from drill.study.grades import GradeCounts
from drill.study.log_digest import LogDigest
from drill.study.pace import ViewSums
from drill.study.records import CardState, FSRSState
from drill.study.sm2 import SM2State

SumsJSON = list[float]  # [count, predicted, recalled]


class CardsJSON(TypedDict):
    """The replayed cards as columns, one place per card: a few long lists rather than a list or two per card.
    Days are ordinals. A card without a memory has None as its memory's state and last review, 0.0 as its
    stability and difficulty, and 0 reviews and lapses."""

    id: list[str]
    due: list[int | None]
    introduced_on: list[int | None]
    last_review_day: list[int | None]
    repeat_pending: list[bool]
    stability: str  # packed (`_packed`)
    difficulty: str  # packed
    state: list[int | None]
    last_review: list[int | None]
    reviews: list[int]
    lapses: list[int]


class TallyJSON(TypedDict):
    reviews: int
    bins: list[SumsJSON]
    loss: float
    groups: list[list[float]]  # [delta_t, number, lapses, count, predicted, recalled]


class DigestJSON(TypedDict):
    views: list[Any]  # four columns, one place per card: card ids, counts, and the totals and squares packed
    first: list[list[int]]  # [grade, n]
    recalled: list[list[int]]
    seen: list[str]
    days: list[int]
    predicted: list[list[float]]  # [day, count, predicted, recalled]


class StateJSON(TypedDict):
    cards: CardsJSON
    tally: TallyJSON
    last: list[int] | None  # [day, id]
    digest: DigestJSON


# -- written ----------------------------------------------------------------------------
def state_json(state: ReplayState) -> StateJSON:
    """Plain JSON that `state_from_json` reads back to an equal state.

    The replay moves no field of a card's state but those of a card's row; a state that holds more raises
    ValueError (such a state is not kept).
    """
    rows: list[_CardRow] = []
    for card_id, card in state.states.items():
        left = replace(card, due=None, introduced_on=None, last_review_day=None, repeat_pending=False, fsrs=None)
        if left != CardState(card_id):
            raise ValueError(f"the replayed state of {card_id} holds more than a replay moves")
        known = state.cards.get(card_id)
        if known is not None and known.memory != card.fsrs:
            raise ValueError(f"the memory of {card_id} is not its state's")
        if known is None and card.fsrs is not None:
            raise ValueError(f"{card_id} has a memory without reviews")
        days = (_ordinal(card.due), _ordinal(card.introduced_on), _ordinal(card.last_review_day))
        rows.append((card_id, *days, card.repeat_pending, *_memory_json(known)))
    last = None if state.last is None else [state.last[0].toordinal(), state.last[1]]
    return {
        "cards": _cards_json(rows),
        "tally": tally_json(state.tally),
        "last": last,
        "digest": _digest_json(state.digest),
    }


# A card as one row of the columns: id, due, introduced_on, last_review_day, repeat_pending, stability, difficulty,
# state, last_review, reviews, lapses
_CardRow = tuple[str, int | None, int | None, int | None, bool, float, float, int | None, int | None, int, int]


def _memory_json(known: CardMemory | None) -> tuple[float, float, int | None, int | None, int, int]:
    """A card's memory, reviews and lapses as its row holds them (0.0, 0.0, None, None, 0, 0 without a memory)."""
    if known is None:
        return (0.0, 0.0, None, None, 0, 0)
    memory = known.memory
    return (
        memory.stability,
        memory.difficulty,
        memory.state,
        memory.last_review.toordinal(),
        known.reviews,
        known.lapses,
    )


def _cards_json(rows: list[_CardRow]) -> CardsJSON:
    columns: list[list[Any]] = [list(column) for column in zip(*rows)] or [[] for _ in range(11)]
    return {
        "id": columns[0],
        "due": columns[1],
        "introduced_on": columns[2],
        "last_review_day": columns[3],
        "repeat_pending": columns[4],
        "stability": _packed(columns[5]),
        "difficulty": _packed(columns[6]),
        "state": columns[7],
        "last_review": columns[8],
        "reviews": columns[9],
        "lapses": columns[10],
    }


def _packed(values: list[float]) -> str:
    """Floats as the text of their 8 bytes each (IEEE 754 doubles, little-endian, in base64): every digit kept, and
    read back at once rather than number by number. A value JSON could not hold (a NaN, an infinity) raises
    ValueError, as json.dumps does."""
    if not all(map(math.isfinite, values)):
        raise ValueError("a number JSON cannot hold")
    packed = array("d", values)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _unpacked(text: Any, count: int) -> list[float]:
    """The `count` floats `_packed` wrote; ValueError for anything else."""
    if type(text) is not str:
        raise ValueError("packed numbers of the wrong kind")
    packed = array("d")
    packed.frombytes(base64.b64decode(text.encode("ascii"), validate=True))
    if len(packed) != count:
        raise ValueError("packed numbers of the wrong length")
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tolist()


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
        "views": [
            list(digest.views),
            [v.count for v in digest.views.values()],
            _packed([v.total for v in digest.views.values()]),
            _packed([v.squares for v in digest.views.values()]),
        ],
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
    cards = data["cards"]
    ids = _column(cards["id"], _TEXT)
    count = len(ids)
    pending = _column(cards["repeat_pending"], _TRUTH, count)
    stability = _unpacked(cards["stability"], count)
    difficulty = _unpacked(cards["difficulty"], count)
    states = _column(cards["state"], _WHOLE_OR_NONE, count)
    reviews = _column(cards["reviews"], _WHOLE, count)
    lapses = _column(cards["lapses"], _WHOLE, count)
    day_columns = [
        _column(cards[name], _WHOLE_OR_NONE, count)
        for name in ("due", "introduced_on", "last_review_day", "last_review")
    ]
    days = _Days(day_columns)
    due = days.column(day_columns[0])
    introduced = days.column(day_columns[1])
    last_review_day = days.column(day_columns[2])
    last_review = days.column(day_columns[3])
    columns = zip(ids, due, introduced, last_review_day, pending, stability, difficulty, states, last_review)
    for i, (card_id, due_on, introduced_on, last_day, repeat, *memory) in enumerate(columns):
        fsrs_state = _memory(*memory)
        if fsrs_state is not None:
            out.cards[card_id] = CardMemory(fsrs_state, reviews[i], lapses[i])
        out.states[card_id] = _replayed_state(card_id, due_on, introduced_on, last_day, repeat, fsrs_state)
    return out


def _replayed_state(
    card_id: str,
    due: dt.date | None,
    introduced_on: dt.date | None,
    last_review_day: dt.date | None,
    repeat_pending: bool,
    fsrs: FSRSState | None,
) -> CardState:
    """A card's state as the replay leaves it: only these fields moved. Built from CardState's fields in their order
    (a third of the time keywords take: 10,000 cards are read on every replay taken on)."""
    return CardState(
        card_id,
        _SM2_UNSEEN,
        due,
        0,
        False,
        None,
        False,
        False,
        "",
        last_review_day,
        repeat_pending,
        introduced_on,
        fsrs,
    )


_SM2_UNSEEN = SM2State()  # a replayed card's SM-2 part: never moved by the replay, and frozen, so one serves all
_TEXT: frozenset[type] = frozenset({str})
_TRUTH: frozenset[type] = frozenset({bool})
_WHOLE: frozenset[type] = frozenset({int})
_WHOLE_OR_NONE: frozenset[type] = frozenset({int, type(None)})


def _column(values: Any, kinds: frozenset[type], length: int | None = None) -> list[Any]:
    """A column of the cards: a list of `length` values (any length when None), each of one of the `kinds`."""
    if type(values) is not list or (length is not None and len(values) != length):
        raise ValueError("a column of the wrong length")
    if not {type(v) for v in values} <= kinds:
        raise ValueError("a column of the wrong kind")
    return values


class _Days:
    """The dates of the ordinals in some columns, each built once and shared (a date is never changed)."""

    def __init__(self, columns: list[list[int | None]]) -> None:
        ordinals = set().union(*columns)
        ordinals.discard(None)
        self.dates: dict[int | None, dt.date | None] = {o: _date(o) for o in ordinals}
        self.dates[None] = None

    def column(self, ordinals: list[int | None]) -> list[dt.date | None]:
        dates = self.dates
        return [dates[o] for o in ordinals]


def _memory(stability: float, difficulty: float, state: int | None, reviewed: dt.date | None) -> FSRSState | None:
    """A card's memory from its columns: None when its state and last review are None, as the card has none."""
    if state is None and reviewed is None:
        return None
    if state is None or reviewed is None:
        raise ValueError("a memory with a part missing")
    return FSRSState(stability, difficulty, state, reviewed)


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
    card_ids, counts, totals, squares = data["views"]
    _column(card_ids, _TEXT)
    _column(counts, _WHOLE, len(card_ids))
    columns = zip(card_ids, counts, _unpacked(totals, len(card_ids)), _unpacked(squares, len(card_ids)))
    for card_id, count, total, square in columns:
        views[card_id] = ViewSums(count, total, square)
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


def _date(ordinal: Any) -> dt.date:
    return dt.date.fromordinal(_whole(ordinal))


def _whole(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"not a whole number: {value!r}")
    return value


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)
