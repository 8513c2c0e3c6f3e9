"""`drill import anki`: the reviews an Anki package (.apkg or .colpkg) holds of drill's notes, as drill's reviews.

A note is drill's when its GUID is one an export gave a card (drill.exchange.anki.note_guid);
other notes are counted and left alone. Each answered revlog row becomes a review at the
same second with its answer mapped to a grade (drill.exchange.anki_revlog); the study
day's first review of a card is scheduled as a review, later ones that day are repeats,
as in drill's own sessions. A review already in drill's log (the same card at the same
second: one drill exported, or one imported before) is not added again.

Newer Anki writes its collection as `collection.anki21b`, compressed with Zstandard; it is
read with Python's `compression.zstd` (3.14), the `zstandard` package or the `zstd` program,
whichever is there.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drill.exchange.anki import note_guid
from drill.exchange.anki_revlog import ANSWERED, EASE_GRADE, reviewed_at
from drill.study.records import CardState, LoggedReview, same_review
from drill.study.scheduling import Scheduler, after_grade
from drill.study.session import study_day

# newest first: a package from newer Anki also holds an old-format collection that only says to update Anki
COLLECTION_NAMES = ("collection.anki21b", "collection.anki21", "collection.anki2")
UNSCHEDULED_MODES = frozenset({"cram", "mock"})  # a review in these modes leaves the day's first review to come


class PackageError(Exception):
    """A file that is not an Anki package drill can read; the message says why and what to do."""


@dataclass(frozen=True)
class AnkiReview:
    """One answered revlog row of a note's card."""

    guid: str
    reviewed_at: str  # local time to the second, as drill logs it
    ease: int
    duration_ms: int


@dataclass(frozen=True)
class AnkiPackage:
    """What drill reads of a package: every note's GUID and the answered reviews."""

    guids: frozenset[str]
    reviews: tuple[AnkiReview, ...]
    not_answers: int  # revlog rows that are no answer (a due date set by hand, a reschedule)


@dataclass
class ImportPlan:
    """The review_log rows to add, and what was left out and why."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    cards: int = 0  # drill cards with reviews to add
    unknown_notes: int = 0  # notes drill did not export: left alone
    unknown_reviews: int = 0  # their reviews
    already_there: int = 0  # reviews drill's log has (the same card at the same second)
    not_answers: int = 0
    needs_replay: bool = False  # a review to add is older than one logged: the card's schedule is rebuilt


def read_package(path: Path) -> AnkiPackage:
    """The notes and reviews of an .apkg or .colpkg; PackageError when it cannot be read."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise PackageError(f"{path} is not an Anki package (.apkg or .colpkg): {exc}") from exc
    with archive, tempfile.TemporaryDirectory() as folder:
        names = set(archive.namelist())
        name = next((n for n in COLLECTION_NAMES if n in names), None)
        if name is None:
            raise PackageError(f"{path} holds no Anki collection (none of {', '.join(COLLECTION_NAMES)})")
        collection = Path(folder) / "collection.sqlite"
        data = archive.read(name)
        if name.endswith("21b"):
            data = _unzstd(data, path)
        collection.write_bytes(data)
        with _connected(collection, path) as conn:
            return _read_collection(conn)


@contextmanager
def _connected(collection: Path, package: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(collection)
    try:
        yield conn
    except sqlite3.Error as exc:
        raise PackageError(f"{package}: its collection cannot be read ({exc})") from exc
    finally:
        conn.close()


def _read_collection(conn: sqlite3.Connection) -> AnkiPackage:
    guids = frozenset(str(g) for (g,) in conn.execute("SELECT guid FROM notes"))
    reviews: list[AnkiReview] = []
    not_answers = 0
    query = "SELECT notes.guid, revlog.id, revlog.ease, revlog.time, revlog.type FROM revlog "
    query += "JOIN cards ON cards.id = revlog.cid JOIN notes ON notes.id = cards.nid ORDER BY revlog.id"
    for guid, revlog_id, ease, duration, kind in conn.execute(query):
        if kind not in ANSWERED or ease not in EASE_GRADE:
            not_answers += 1
            continue
        reviews.append(AnkiReview(str(guid), reviewed_at(int(revlog_id)), int(ease), max(0, int(duration))))
    return AnkiPackage(guids, tuple(reviews), not_answers)


def _unzstd(data: bytes, package: Path) -> bytes:
    """A Zstandard-compressed collection, decompressed by whichever decompressor this machine has."""
    try:
        from compression import zstd  # type: ignore[import-not-found, unused-ignore]  # Python 3.14

        return bytes(zstd.decompress(data))
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(data))
    except ImportError:
        pass
    program = shutil.which("zstd")
    if program is not None:
        done = subprocess.run([program, "-d", "-c", "-q"], input=data, capture_output=True, check=False)
        if done.returncode == 0:
            return done.stdout
        raise PackageError(f"{package}: zstd could not decompress its collection ({done.stderr.decode().strip()})")
    raise PackageError(
        f"{package} comes from a newer Anki, which compresses its collection with Zstandard, and this machine has "
        "no Zstandard decompressor: install one (`pip install zstandard`, or the `zstd` program), or export "
        'again from Anki with "Support older Anki versions" ticked'
    )


def plan_import(
    package: AnkiPackage,
    topics: Mapping[str, str],
    logged: Sequence[LoggedReview],
    current: Mapping[str, CardState],
    scheduler: Scheduler,
    rollover_hour: int,
) -> ImportPlan:
    """The reviews of drill's notes (`topics`: each card's topic, by id) to add to the log, each with the states
    the scheduler gives it in order."""
    by_guid = {note_guid(card_id): card_id for card_id in topics}
    plan = ImportPlan(not_answers=package.not_answers)
    plan.unknown_notes = sum(1 for guid in package.guids if guid not in by_guid)
    seen = {same_review(r.card_id, r.reviewed_at) for r in logged}
    fresh: dict[str, list[AnkiReview]] = {}
    for review in package.reviews:
        card_id = by_guid.get(review.guid)
        if card_id is None:
            plan.unknown_reviews += 1
        elif same_review(card_id, review.reviewed_at) in seen:
            plan.already_there += 1
        else:
            seen.add(same_review(card_id, review.reviewed_at))
            fresh.setdefault(card_id, []).append(review)
    plan.cards = len(fresh)
    logged_by_card: dict[str, list[LoggedReview]] = {}
    for review_logged in logged:
        if review_logged.card_id in fresh:
            logged_by_card.setdefault(review_logged.card_id, []).append(review_logged)
    for card_id, reviews in fresh.items():
        rows, older = _card_rows(
            card_id, reviews, logged_by_card.get(card_id, []), current.get(card_id), scheduler, rollover_hour
        )
        for row in rows:
            row["topic"] = topics[card_id] or None
        plan.rows.extend(rows)
        plan.needs_replay = plan.needs_replay or older
    return plan


@dataclass(frozen=True)
class _Step:
    """A review of one card, logged or to add, in the order the card's schedule takes them."""

    reviewed_at: str
    day: dt.date
    grade: int
    mode: str
    answer: dict[str, Any] | None
    duration_ms: int
    added: bool


def _card_rows(
    card_id: str,
    reviews: Sequence[AnkiReview],
    logged: Sequence[LoggedReview],
    now: CardState | None,
    scheduler: Scheduler,
    rollover_hour: int,
) -> tuple[list[dict[str, Any]], bool]:
    """One card's rows to add, and whether one of them is older than a logged review."""
    steps = [_Step(r.reviewed_at, r.day, r.grade, r.mode, r.answer, r.duration_ms, False) for r in logged]
    for review in reviews:
        day = study_day(dt.datetime.fromisoformat(review.reviewed_at), rollover_hour)
        steps.append(_Step(review.reviewed_at, day, EASE_GRADE[review.ease], "", None, review.duration_ms, True))
    steps.sort(key=lambda s: (s.day, s.reviewed_at))
    newest_logged = max((r.reviewed_at for r in logged), default="")
    state = CardState(card_id)
    if now is not None:
        state = CardState(card_id, suspended=now.suspended, buried_until=now.buried_until, changed=now.changed)
        state.content_hash = now.content_hash
    scheduled_days: set[dt.date] = set()
    rows: list[dict[str, Any]] = []
    for step in steps:
        mode = step.mode
        if step.added:
            mode = "repeat" if step.day in scheduled_days else "review"
        if mode not in UNSCHEDULED_MODES:
            scheduled_days.add(step.day)
        before = state
        state = after_grade(scheduler, before, step.grade, step.day, mode, step.answer)
        if step.added:
            rows.append(
                {
                    "card_id": card_id,
                    "reviewed_at": step.reviewed_at,
                    "day": step.day.isoformat(),
                    "grade": step.grade,
                    "duration_ms": step.duration_ms,
                    "mode": mode,
                    "state_before": json.dumps(before.as_json()),
                    "state_after": json.dumps(state.as_json()),
                }
            )
    older = any(row["reviewed_at"] < newest_logged for row in rows)
    return rows, older
