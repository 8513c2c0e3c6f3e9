"""The replay cache: the review log's replay through FSRS, kept as JSON beside the database and taken on from there.

Readiness and calibration replay the whole log through the memory model
(drill.study.forecast), some 16 µs a review: 16 s at a million. Most of that log was
replayed yesterday already. This cache keeps the replay as it stood at the start of
the study day it was written on (`before`): each card's state and memory, and the
calibration's running sums. The next replay reads only the rows of that day and
later and goes on from there; the figures are the very ones a whole replay gives.

It also keeps the calibration's sums over the whole log (`whole`), so `drill stats`
with nothing graded since the last replay reads two numbers from the database and
no card's state at all.

What the cached replay was made of is checked before it is used, in the snapshot
the new rows are read in (drill.store.reader.read_log_from):
- the key: the memory model (fitted parameters, longest interval), drill's version, the
  code that shapes a replay and the fsrs package's: another model means another replay;
- the mark of the rows before `before`: their count and their newest row. An undo (a row
  removed) or an import of older reviews (rows added before the day) changes it, and
  the log is replayed whole again.
New rows of `before` or later sort after every replayed row (replay order is day, then
id), so they are only ever taken on from the cached state.

The file is plain JSON, never pickle, written atomically: its first line is the key,
compared as text before anything is parsed; the second the day, the marks and the
sums; the third the cards' states, parsed only when rows are to be replayed. A file
that is missing, old, spoiled or for another model is not used: the log is replayed
whole, and the cache written again.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from drill.store import reader
from drill.store.derived_file import STUDY, file_digest, write_atomically
from drill.study.calibration import Tally
from drill.study.forecast import DayReplay, MemoryModel, ReplayState, continue_day
from drill.study.records import LoggedReview

CACHE_VERSION = 2  # the file's layout; bump it when what it holds changes
CACHE_FILE = "replay.json"
UNKNOWN = "unknown"
# The modules whose rules a replay follows: an edit to one of them (an editable install keeps its
# version number) must not be answered from a replay the older code made.
_SHAPING_SOURCES = (
    "forecast.py",
    "calibration.py",
    "scheduling.py",
    "records.py",
    "sm2.py",
    "log_digest.py",
    "pace.py",
    "grades.py",
)
_FSRS_SOURCES = ("scheduler.py", "card.py", "state.py")  # the fsrs package's own rules


@dataclass(frozen=True)
class _Cached:
    """What the file holds: the replay at the start of study day `before`, and the sums over the whole log."""

    before: dt.date
    before_mark: reader.LogMark
    whole_mark: reader.LogMark
    whole_tally: Tally
    cards_line: bytes  # the replay's state at the start of `before`, as JSON: parsed only when it is taken on

    def start(self) -> ReplayState | None:
        """The cached replay's state, or None when its line does not read back."""
        try:
            return ReplayState.from_json(json.loads(self.cards_line))
        except Exception:  # spoiled in any way: the log is replayed whole
            return None


def calibration_tally(data_dir: Path, model: MemoryModel, today: dt.date) -> Tally:
    """The calibration's sums over the whole log: from the cache when nothing was logged or undone since."""
    cache = cache_path(data_dir)
    key = cache_key(model)
    cached = _read(cache, key)
    if cached is not None and reader.log_mark(data_dir) == cached.whole_mark:
        return cached.whole_tally
    return _replay(data_dir, model, today, cache, key, cached).now.tally


def replay_day(data_dir: Path, model: MemoryModel, today: dt.date) -> DayReplay:
    """The log replayed to the start of study day `today` and whole, taken on from the cache where it can be."""
    cache = cache_path(data_dir)
    key = cache_key(model)
    return _replay(data_dir, model, today, cache, key, _read(cache, key))


def cache_path(data_dir: Path) -> Path:
    return Path(data_dir) / CACHE_FILE


def cache_key(model: MemoryModel) -> str:
    """The key of a replay: the cache's layout, drill's version, the replaying code, fsrs's, the model."""
    import drill

    code = [file_digest(STUDY / name) for name in _SHAPING_SOURCES]
    parameters = None if model.parameters is None else list(model.parameters)
    version = getattr(drill, "__version__", UNKNOWN)
    return json.dumps([CACHE_VERSION, version, code, _fsrs_code(), parameters, model.max_interval], ensure_ascii=True)


def rebuild(data_dir: Path, model: MemoryModel, today: dt.date) -> DayReplay:
    """The whole log replayed afresh, whatever the cache held, and the cache written again."""
    cache = cache_path(data_dir)
    return _replay_whole(data_dir, model, today, cache, cache_key(model))


def _replay(
    data_dir: Path, model: MemoryModel, today: dt.date, cache: Path, key: str, cached: _Cached | None
) -> DayReplay:
    if cached is None or cached.before > today:
        return _replay_whole(data_dir, model, today, cache, key)
    read = reader.read_log_from(data_dir, cached.before, today)
    start = cached.start()
    # a spoiled cache line, or a review undone or imported before the cached day
    if start is None or read.since != cached.before_mark:
        return _replay_whole(data_dir, model, today, cache, key)
    day = continue_day(start, read.rows, today, model)
    if cached.before != today:  # a new study day: the cache moves on to its start
        _write(cache, key, today, read, day, None)
    elif read.whole != cached.whole_mark:  # the same day, more graded: the cards' states at its start stay
        _write(cache, key, today, read, day, cached.cards_line)
    return day


@dataclass
class _WholeReplay:
    """The whole log replayed through `model` to study day `today` as its rows stream past (read_log_from's
    `take`); `day` is the replay once they have."""

    today: dt.date
    model: MemoryModel
    day: DayReplay | None = None

    def __call__(self, rows: Iterator[LoggedReview]) -> None:
        self.day = continue_day(ReplayState(), rows, self.today, self.model)


def _replay_whole(data_dir: Path, model: MemoryModel, today: dt.date, cache: Path, key: str) -> DayReplay:
    """The whole log replayed as it is read from the database (never held whole), and the cache written."""
    whole = _WholeReplay(today, model)
    read = reader.read_log_from(data_dir, None, today, whole)
    if whole.day is None:  # no database file yet: the rows were never read, and the log is empty
        whole(iter(()))
    assert whole.day is not None
    _write(cache, key, today, read, whole.day, None)
    return whole.day


def _read(cache: Path, key: str) -> _Cached | None:
    """The cache the file holds for `key`; None when it holds anything else or cannot be read."""
    try:
        with cache.open("rb") as fh:
            if fh.readline().rstrip(b"\n") != key.encode("ascii"):
                return None  # another model, another drill, or not a cache at all: nothing more is parsed
            head = json.loads(fh.readline())
            cards_line = fh.readline()
        return _Cached(
            dt.date.fromisoformat(head["before"]),
            _mark(head["before_mark"]),
            _mark(head["whole_mark"]),
            Tally.from_json(head["whole_tally"]),
            cards_line,
        )
    except Exception:  # whatever is wrong with it (cut short, edited, another layout), the log is replayed
        return None


def _mark(data: Any) -> reader.LogMark:
    rows, newest = data
    if type(rows) is not int or not (newest is None or type(newest) is list):
        raise ValueError("a mark of the wrong shape")
    return reader.LogMark(rows, None if newest is None else tuple(newest))


def _mark_json(mark: reader.LogMark) -> list[Any]:
    return [mark.rows, None if mark.newest is None else list(mark.newest)]


def _write(
    cache: Path, key: str, today: dt.date, read: reader.LogFrom, day: DayReplay, cards_line: bytes | None
) -> None:
    """Write the cache atomically; a replay that cannot be written as JSON is simply not kept."""
    try:
        head = {
            "before": today.isoformat(),
            "before_mark": _mark_json(read.before),
            "whole_mark": _mark_json(read.whole),
            "whole_tally": day.now.tally.as_json(),
        }
        if cards_line is None:
            cards_line = (
                json.dumps(day.at_start.as_json(), separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
            )
        text = b"\n".join(
            [key.encode("ascii"), json.dumps(head, separators=(",", ":"), allow_nan=False).encode("utf-8"), cards_line]
        )
    except (TypeError, ValueError):  # a value JSON cannot hold (a NaN from a spoiled parameter, an odd answer)
        return
    write_atomically(cache, text, ".replay-")  # not written: each replay starts afresh


def _fsrs_code() -> list[str | None]:
    """The fsrs package's rules by content (found without importing it: a cached replay needs no fsrs)."""
    spec = importlib.util.find_spec("fsrs")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(list(spec.submodule_search_locations)[0])
    return [file_digest(folder / name) for name in _FSRS_SOURCES]
