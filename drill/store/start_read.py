"""What the app's start reads of the database once the study day is known, in one pass: today's grades, the
progress rows and, with an interview date ahead, the review log replayed to the day.

The replay is taken on from its cache (drill.store.replay_cache), whose rows are read in the same snapshot as the
day's (drill.store.reader.read_day); a start without a memory model imports none of the replay's modules.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from drill.store import reader
from drill.store.rows import CardTuple
from drill.study.records import ProgressRows

if TYPE_CHECKING:
    from drill.study.forecast import DayReplay, MemoryModel


@dataclass(frozen=True)
class DayRead:
    """What the start read of study day `today`: how many times each card was graded on it, the progress rows
    when asked for, and the log replayed to it (at its start and whole) when a memory model was given."""

    graded_today: dict[str, int]
    progress: ProgressRows | None
    replayed: DayReplay | None


def read_day(
    data_dir: Path,
    today: dt.date,
    *,
    progress: bool,
    model: MemoryModel | None,
    cards: list[CardTuple] | None = None,
) -> DayRead:
    """Today's grades, the progress rows when `progress`, and with `model` the log replayed to `today` (the cache
    taken on and kept), all read in one snapshot; the progress rows' cards made from `cards`, the card table's rows
    the start read with the settings, when given (the table is not read twice)."""
    replay = None
    if model is not None:
        from drill.store.replay_cache import open_replay

        replay = open_replay(data_dir, model, today)
    day = reader.read_day(data_dir, today, progress=progress, log=None if replay is None else replay.ask, cards=cards)
    replayed = None if replay is None or day.log is None else replay.keep_file(day.log)
    return DayRead(day.graded_today, day.progress, replayed)
