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
the new rows are read in (drill.store.reader.read_log_from, or read_day at the app's start):
- the key: the memory model (fitted parameters, longest interval), drill's version, the
  code that shapes a replay and the fsrs package's: another model means another replay;
- the mark of the rows before `before`: their count and their newest row. An undo (a row
  removed) or an import of older reviews (rows added before the day) changes it, and
  the log is replayed whole again.
New rows of `before` or later sort after every replayed row (replay order is day, then
id), so they are only ever taken on from the cached state.

The file is plain JSON (drill.store.replay_json), never pickle, written atomically: its
first line is the key, compared as text before anything is parsed; the second the day,
the marks and the sums; the third the cards' states, parsed only when rows are to be
replayed. A file that is missing, old, spoiled or for another model is not used: the log
is replayed whole, in the same read, and the cache written again.

Whichever way, the log is read once: one pass over the reader finds whether the kept
replay still holds, and streams the rows after it (or every row) into the replay.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from drill.store import reader, replay_json
from drill.store.derived_file import STUDY, file_digest, write_atomically
from drill.store.reader import LogRead
from drill.study.calibration import Tally
from drill.study.forecast import DayReplay, MemoryModel, ReplayState, continue_day
from drill.study.records import LoggedReview

CACHE_VERSION = 3  # the file's layout; bump it when what it holds changes
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
_CODEC = Path(__file__).resolve().parent / "replay_json.py"  # how the file writes what it holds
_FSRS_SOURCES = ("scheduler.py", "card.py", "state.py")  # the fsrs package's own rules


@dataclass(frozen=True)
class _Cached:
    """What the file holds: the replay at the start of study day `before`, and the sums over the whole log."""

    before: dt.date
    before_mark: reader.LogMark
    whole_mark: reader.LogMark
    whole_tally: Tally
    cards_line: bytes  # the replay's state at the start of `before`, as JSON: parsed only when it is taken on
    # that state parsed, when it is to be taken on and reads back: the one replay that reads the file takes it on
    # in place (forecast.continue_day), so it is parsed again for the next
    start: ReplayState | None = None


def calibration_tally(data_dir: Path, model: MemoryModel, today: dt.date) -> Tally:
    """The calibration's sums over the whole log: from the cache when nothing was logged or undone since."""
    cache = cache_path(data_dir)
    key = cache_key(model)
    cached = _read(cache, key)
    if cached is not None and reader.log_mark(data_dir) == cached.whole_mark:
        return cached.whole_tally
    replay = open_replay(data_dir, model, today)  # the file read again, its cards' states too
    return replay.keep_file(reader.read_log_from(data_dir, replay.ask)).now.tally


def replay_day(data_dir: Path, model: MemoryModel, today: dt.date) -> DayReplay:
    """The log replayed to the start of study day `today` and whole, taken on from the cache where it can be."""
    replay = open_replay(data_dir, model, today)
    return replay.keep_file(reader.read_log_from(data_dir, replay.ask))


def cache_path(data_dir: Path) -> Path:
    return Path(data_dir) / CACHE_FILE


def cache_key(model: MemoryModel) -> str:
    """The key of a replay: the cache's layout, drill's version, the replaying code, fsrs's, the model."""
    import drill

    code = [file_digest(STUDY / name) for name in _SHAPING_SOURCES] + [file_digest(_CODEC)]
    parameters = None if model.parameters is None else list(model.parameters)
    version = getattr(drill, "__version__", UNKNOWN)
    return json.dumps([CACHE_VERSION, version, code, _fsrs_code(), parameters, model.max_interval], ensure_ascii=True)


def rebuild(data_dir: Path, model: MemoryModel, today: dt.date) -> DayReplay:
    """The whole log replayed afresh, whatever the cache held, and the cache written again."""
    replay = CachedReplay(cache_path(data_dir), cache_key(model), today, model, None)
    return replay.keep_file(reader.read_log_from(data_dir, replay.ask))


@dataclass
class CachedReplay:
    """One replay of the log through `model` to study day `today`, taken on from the file where it can be: what it
    asks of the log (`ask`), the replay as the rows stream past (`take`), and the file kept after (`keep_file`).

    `cached` is what the file holds for the replay's key (None: nothing usable); without its cards' states to
    take on (no file, another key, a spoiled line, a day after `today`) the log is read whole.
    """

    cache: Path
    key: str
    today: dt.date
    model: MemoryModel
    cached: _Cached | None
    day: DayReplay | None = None  # once the rows were taken

    @property
    def ask(self) -> reader.LogAsk:
        """The read of the log this replay needs: from the cached day on (the reader checks its mark), every row
        without a state to take on."""
        cached = self.cached
        kept = None
        if cached is not None and cached.start is not None:
            kept = reader.LogPlace(cached.before, cached.before_mark)
        return reader.LogAsk(kept, self.today, self.take)

    def take(self, start: reader.LogPlace | None, rows: Iterator[LoggedReview]) -> None:
        """Replay `rows` as the reader reads them: on top of the cached state when they start at its day."""
        cached = self.cached
        state = ReplayState()
        if start is not None and cached is not None and cached.start is not None:
            state = cached.start
        self.day = continue_day(state, rows, self.today, self.model)

    def keep_file(self, read: LogRead) -> DayReplay:
        """The replay once the reader handed it the rows (`read` is what that read found), with the file brought
        up to date: moved on to the start of a new day or of a whole replay, or its marks and sums moved on the
        same day."""
        day = self.day
        assert day is not None, "the reader hands the rows over once, an empty log included"
        cached = self.cached
        kept_cards = None  # the cards' states at the day's start: written afresh
        if read.start is not None and cached is not None and cached.before == self.today:
            if read.whole == cached.whole_mark:
                return day  # nothing graded or undone since the file was written
            kept_cards = cached.cards_line  # the same day, more graded: the cards' states at its start stay
        _write(self.cache, self.key, self.today, read, day, kept_cards)
        return day


def open_replay(data_dir: Path, model: MemoryModel, today: dt.date) -> CachedReplay:
    """The replay the file in `data_dir` holds for `model`, ready to take the log's rows from its day on (or from
    the first row, when it holds nothing to take on)."""
    cache = cache_path(data_dir)
    key = cache_key(model)
    return CachedReplay(cache, key, today, model, _read(cache, key, today))


def _read(cache: Path, key: str, today: dt.date | None = None) -> _Cached | None:
    """The cache the file holds for `key`; None when it holds anything else or cannot be read. Given `today`, the
    cards' states are parsed too when the file's day is not after it (left None when they do not read back)."""
    try:
        with cache.open("rb") as fh:
            if fh.readline().rstrip(b"\n") != key.encode("ascii"):
                return None  # another model, another drill, or not a cache at all: nothing more is parsed
            head = json.loads(fh.readline())
            cards_line = fh.readline()
        cached = _Cached(
            dt.date.fromisoformat(head["before"]),
            replay_json.mark_from_json(head["before_mark"]),
            replay_json.mark_from_json(head["whole_mark"]),
            replay_json.tally_from_json(head["whole_tally"]),
            cards_line,
        )
    except Exception:  # whatever is wrong with it (cut short, edited, another layout), the log is replayed
        return None
    if today is None or cached.before > today:
        return cached
    try:
        start = replay_json.state_from_json(json.loads(cards_line))
    except Exception:  # spoiled in any way: the log is replayed whole
        return cached
    return replace(cached, start=start)


def _write(cache: Path, key: str, today: dt.date, read: LogRead, day: DayReplay, cards_line: bytes | None) -> None:
    """Write the cache atomically; a replay that cannot be written as JSON is simply not kept."""
    try:
        head = {
            "before": today.isoformat(),
            "before_mark": replay_json.mark_json(read.before),
            "whole_mark": replay_json.mark_json(read.whole),
            "whole_tally": replay_json.tally_json(day.now.tally),
        }
        if cards_line is None:
            state = replay_json.state_json(day.at_start)
            cards_line = json.dumps(state, separators=(",", ":"), allow_nan=False).encode("utf-8") + b"\n"
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
