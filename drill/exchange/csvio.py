"""CSV files: the cards (one row each), and the review log written out and read back with every row checked,
with the FSRS parameters fitted to it."""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from drill.exchange.flat import FlatCard
from drill.store.rows import ReviewRecord
from drill.study.records import CardState, CardStateJSON
from drill.study.scheduling import PARAMETER_COUNT, PARAMETERS_SETTING, parameters_text, saved_parameters

CARD_COLUMNS = ("id", "deck", "topic", "kind", "tags", "prompt", "answer", "rubric", "sources")

# Every column of the review log but its row id: enough to restore the history and the
# counts kept beside it. Importing needs REQUIRED; the others have defaults.
REVIEW_COLUMNS = (
    "card_id",
    "reviewed_at",
    "day",
    "grade",
    "mode",
    "duration_ms",
    "topic",
    "state_before",
    "state_after",
    "answer",
)
REQUIRED = ("card_id", "reviewed_at", "day", "grade", "mode", "state_before", "state_after")
_MODE = re.compile(r"[a-z][a-z_]*\Z")
# What a state in the log must hold for drill to schedule from it.
_STATE_WHOLE = ("repetitions", "interval", "lapses")
_STATE_DAYS = ("due", "last_review_day", "introduced_on")
# The largest whole number a count, an interval or a duration may hold: SQLite stores 64-bit integers,
# and no review takes longer or repeats more often than this.
MOST_WHOLE = 10**9
# The first line of a review export whose learner has fitted FSRS parameters: the line, a space, and the
# parameters as JSON. It starts with `#`, as the settings lines atop Anki's text files do; a file without
# fitted parameters has no such line. `drill import reviews` takes them back.
PARAMETERS_LINE = "#fsrs_parameters:"


# A cell a spreadsheet would read as a formula starts with one of these; such a text cell is written
# with a single quote in front (OWASP's advice for CSV injection), and a text cell that starts with a
# quote gets one more, so reading a file back takes exactly one quote off. Numbers are written as they are.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\Z")


def cell(value: object) -> object:
    """One value as a CSV cell that no spreadsheet runs: a number as it is, text starting a formula quoted."""
    if not isinstance(value, str) or _NUMBER.match(value):
        return value
    if value.startswith(("'", *FORMULA_STARTS)):
        return "'" + value
    return value


def uncell(text: str) -> str:
    """A cell as `cell` was given it: one leading quote taken off."""
    return text[1:] if text.startswith("'") else text


@dataclass(frozen=True)
class CsvProblem:
    """A problem in a CSV file, printed as `path:line: message`."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def write_cards(cards: Iterable[FlatCard], out: IO[str]) -> int:
    """One row per card: tags separated by spaces, rubric points and sources one per line."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CARD_COLUMNS)
    count = 0
    for c in cards:
        row = [
            c.id,
            c.deck,
            c.topic,
            c.kind,
            " ".join(c.tags),
            c.prompt,
            c.answer,
            "\n".join(c.rubric),
            "\n".join(c.sources),
        ]
        writer.writerow([cell(value) for value in row])
        count += 1
    return count


def write_reviews(rows: Iterable[ReviewRecord], out: IO[str], parameters: tuple[float, ...] | None = None) -> int:
    """The review log in the order it was written; empty cells for values never given. FSRS parameters fitted
    to it (`drill fsrs fit`) go on a first line of their own (PARAMETERS_LINE), before the header."""
    if parameters is not None:
        out.write(f"{PARAMETERS_LINE} {parameters_text(parameters)}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REVIEW_COLUMNS)
    count = 0
    for row in rows:
        values = row.columns()
        writer.writerow(["" if values.get(name) is None else cell(values[name]) for name in REVIEW_COLUMNS])
        count += 1
    return count


def read_parameters(path: Path) -> tuple[float, ...] | None:
    """The fitted FSRS parameters a review export carries on its first line; None when it carries none.

    ValueError, saying what is wrong, for a parameters line drill cannot use (not PARAMETER_COUNT finite
    numbers); OSError when the file cannot be opened. A first line that is not UTF-8 is left to scan_reviews.
    """
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            first = fh.readline()
    except UnicodeDecodeError:
        return None
    if not first.startswith(PARAMETERS_LINE):
        return None
    text = first[len(PARAMETERS_LINE) :].strip()
    parameters = saved_parameters({PARAMETERS_SETTING: text})
    if parameters is None:
        raise ValueError(
            f"{PARAMETERS_LINE} {_brief(text)} is not a list of {PARAMETER_COUNT} finite numbers "
            "(FSRS parameters as `drill export reviews` writes them)"
        )
    return parameters


def read_reviews(path: Path, *, most: int = 20) -> tuple[list[dict[str, Any]], list[CsvProblem]]:
    """The reviews of a CSV file written by `write_reviews` (or by hand), as review_log rows, and its problems
    (at most `most`). Every row is checked; the rows are all in memory: `scan_reviews` reads one at a time."""
    rows: list[dict[str, Any]] = []
    problems: list[CsvProblem] = []
    for item in scan_reviews(path):
        if isinstance(item, CsvProblem):
            problems.append(item)
            if len(problems) >= most:
                break
        else:
            rows.append(item)
    return rows, problems


def scan_reviews(path: Path) -> Iterator[dict[str, Any] | CsvProblem]:
    """Each data row of a review CSV in turn, as a review_log row or the problem that keeps it out.

    The file is read as it goes, so a million rows take no more memory than one;
    a problem that ends the reading (no header, a byte that is not UTF-8, a
    broken quote) is the last item. OSError when the file cannot be opened.
    """
    where = str(path)
    line = 1
    with open(path, encoding="utf-8-sig", newline="") as fh:
        try:
            first = fh.readline()
            # the parameters line (read_parameters) comes before the header: the header is then line 2
            above = 1 if first.startswith(PARAMETERS_LINE) else 0
            reader = csv.reader(fh if above else itertools.chain([first], fh))
            line = 1 + above
            header = next(reader, None)
            if header is None:
                yield CsvProblem(where, line, f"empty file: expected a header with {', '.join(REVIEW_COLUMNS)}")
                return
            names = [h.strip() for h in header]
            missing = [c for c in REQUIRED if c not in names]
            if missing:
                yield CsvProblem(where, line, f"missing column {_listed(missing)} (the header has {_listed(names)})")
                return
            line = reader.line_num + 1 + above
            for record in reader:
                if record and any(cell.strip() for cell in record):
                    try:
                        yield review_from(names, record)
                    except ValueError as exc:
                        yield CsvProblem(where, line, str(exc))
                line = reader.line_num + 1 + above
        except UnicodeDecodeError as exc:
            yield CsvProblem(where, line, f"not UTF-8 text ({exc.reason})")
        except csv.Error as exc:
            yield CsvProblem(where, line, f"not a CSV row ({exc})")


def review_from(names: Sequence[str], record: Sequence[str]) -> dict[str, Any]:
    """One CSV record as a review_log row; raises ValueError naming the column and what it should hold."""
    if len(record) != len(names):
        raise ValueError(f"{len(record)} fields where the header has {len(names)}")
    cells = {name: uncell(text) for name, text in zip(names, record)}
    card_id = cells["card_id"].strip()
    if not card_id:
        raise ValueError("card_id: empty")
    mode = cells["mode"].strip()
    if not _MODE.match(mode):
        raise ValueError(f"mode: {_brief(mode)} is not a review mode such as review, repeat, cram or mock")
    grade = _whole(cells["grade"], "grade")
    if not 0 <= grade <= 5:
        raise ValueError(f"grade: {grade} is not a grade from 0 to 5")
    duration = _whole(cells.get("duration_ms") or "0", "duration_ms")
    if not 0 <= duration <= MOST_WHOLE:
        raise ValueError(f"duration_ms: {_brief(duration)} is not from 0 to {MOST_WHOLE:,}")
    answer = (cells.get("answer") or "").strip()
    if answer:
        _json(answer, "answer")
    return dict(
        card_id=card_id,
        reviewed_at=_moment(cells["reviewed_at"]),
        day=_date(cells["day"], "day").isoformat(),
        grade=grade,
        duration_ms=duration,
        mode=mode,
        state_before=_object(cells["state_before"], "state_before"),
        state_after=_state(cells["state_after"], "state_after"),
        answer=answer or None,
        topic=(cells.get("topic") or "").strip() or None,
    )


def _brief(value: object) -> str:
    """A value for a message, cut short: a number of a thousand digits is named by its length."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"


def _listed(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names) if names else "nothing"


def _whole(text: str, column: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(f"{column}: {_brief(text)} is not a whole number") from None


def _date(text: str, column: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{column}: {_brief(text)} is not a date such as 2026-05-10") from None


def _moment(text: str) -> str:
    """reviewed_at as drill logs it: local time without a zone (a time with one is turned into local time)."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"reviewed_at: {_brief(text)} is not a date and time such as 2026-05-10T09:30:00") from None
    if when.tzinfo is not None:
        try:
            when = when.astimezone().replace(tzinfo=None)
        except (OverflowError, ValueError):  # year 1 or 9999 moved past the calendar's end by its zone
            raise ValueError(f"reviewed_at: {text.strip()!r} is out of range once turned into local time") from None
    return when.isoformat(timespec="seconds" if not when.microsecond else "microseconds")


def _json(text: str, column: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        reason = getattr(exc, "msg", str(exc))
        raise ValueError(f"{column}: not valid JSON ({reason})") from None


def _object(text: str, column: str) -> str:
    """A JSON object, returned as given."""
    if not isinstance(_json(text, column), Mapping):
        raise ValueError(f'{column}: expected a JSON object such as {{"repetitions": 1, ...}}')
    return text.strip()


def _state(text: str, column: str) -> str:
    """The state a review left: a JSON object drill can schedule from. Returned as given."""
    data = _json(text, column)
    if not isinstance(data, dict):
        raise ValueError(f'{column}: expected a JSON object such as {{"repetitions": 1, ...}}')
    for key in _STATE_WHOLE:
        value = data.get(key, 0 if key == "lapses" else None)
        if not _number(value) or not isinstance(value, int) or not 0 <= value <= MOST_WHOLE:
            raise ValueError(f"{column}: {key!r} must be a whole number from 0 to {MOST_WHOLE:,} (got {_brief(value)})")
    ef = data.get("ef")
    if not isinstance(ef, (int, float)) or isinstance(ef, bool) or not 0 < ef <= MOST_WHOLE or not math.isfinite(ef):
        raise ValueError(f"{column}: 'ef' must be a number above 0 (got {_brief(ef)})")
    if "due" not in data:
        raise ValueError(f"{column}: lacks 'due'")
    for key in _STATE_DAYS:
        value = data.get(key)
        if value is not None and not (isinstance(value, str) and _is_date(value)):
            raise ValueError(f"{column}: {key!r} must be a date such as 2026-05-10 or null (got {_brief(value)})")
    try:  # the rest (a scheduler's own state) as the store will read it
        CardState.from_json("-", cast(CardStateJSON, data))  # its keys checked above; the rest is tried here
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ValueError(f"{column}: not a card state drill can read ({type(exc).__name__}: {exc})") from None
    return text.strip()


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True
