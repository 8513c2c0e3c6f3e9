"""`drill export anki`: the cards as an Anki package whose notes a later export updates instead of duplicating.

Anki knows a note again by its GUID and a note type by its id, so both come
from stable names: the GUID from the card id, the note type's and each deck's
id from a fixed name. A note's modification time changes only with its content
(drill.exchange.anki_times), so re-importing an export updates exactly the notes
whose cards changed (and keeps their review history in Anki). With the learner's
history, each card's schedule and reviews go too (drill.exchange.anki_history).
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import re
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import genanki
from markdown_it import MarkdownIt

from drill.exchange.anki_history import (
    ROLLOVER_HOUR,
    History,
    collection_created,
    creation_offset,
    revlog_rows,
    schedule_of,
)
from drill.exchange.anki_times import NoteTime, stamp
from drill.exchange.flat import FlatCard

FIELDS = ("Id", "Prompt", "Answer", "Rubric", "Sources", "Topic", "Kind")
DECK_PREFIX = "drill"
# what genanki stamps on the note type and takes its ids from: fixed, so an export differs only where the cards do
PACKAGE_TIME = 1_700_000_000

_CSS = """\
.card { font-family: sans-serif; font-size: 18px; text-align: left; color: black; background: white; }
.prompt, .answer { margin: 0.5em 0; }
.rubric, .sources { margin-top: 1em; font-size: 15px; }
.sources { color: #555; }
pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; font-size: 14px; }
table { border-collapse: collapse; }
td, th { border: 1px solid #bbb; padding: 0.2em 0.5em; }
"""

_BACK = (
    "{{FrontSide}}<hr id=answer>"
    '<div class="answer">{{Answer}}</div>'
    '{{#Rubric}}<div class="rubric"><b>Rubric</b>{{Rubric}}</div>{{/Rubric}}'
    '{{#Sources}}<div class="sources"><b>Sources</b>{{Sources}}</div>{{/Sources}}'
)

# Raw HTML in a card is shown as text, never run; tables carry the ledgers and the shape steps.
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def stable_id(name: str) -> int:
    """An Anki note type or deck id from a name: the same on every machine and every export."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    return (1 << 30) + digest % (1 << 30)


def note_guid(card_id: str) -> str:
    """The Anki GUID of a card's note."""
    return str(genanki.guid_for("drill", card_id))


# A new field or template needs a new name here: Anki keeps a note type's fields under its id.
MODEL = genanki.Model(
    stable_id("drill card note type v1"),
    "drill card",
    fields=[{"name": name} for name in FIELDS],
    templates=[{"name": "Card 1", "qfmt": '<div class="prompt">{{Prompt}}</div>', "afmt": _BACK}],
    css=_CSS,
)


def to_html(markdown: str) -> str:
    """Card Markdown as the HTML an Anki field holds: paragraphs, lists, code blocks, tables; any HTML escaped."""
    return str(_MARKDOWN.render(markdown)).strip()


def _items_html(items: Iterable[str]) -> str:
    shown = [f"<li>{_MARKDOWN.renderInline(str(item)).strip()}</li>" for item in items]
    return f"<ul>{''.join(shown)}</ul>" if shown else ""


def anki_tag(text: str) -> str:
    """Anki tags are single words: spaces become underscores."""
    return re.sub(r"\s+", "_", text.strip())


def note_for(card: FlatCard) -> genanki.Note:
    tags = [anki_tag(t) for t in (card.topic, *card.tags) if t.strip()]
    fields = [
        html.escape(card.id),
        to_html(card.prompt),
        to_html(card.answer),
        _items_html(card.rubric),
        _items_html(card.sources),
        html.escape(card.topic),
        html.escape(card.kind),
    ]
    return genanki.Note(model=MODEL, fields=fields, tags=list(dict.fromkeys(tags)), guid=note_guid(card.id))


def deck_name(card: FlatCard) -> str:
    return f"{DECK_PREFIX}::{card.deck}" if card.deck else DECK_PREFIX


def note_content(note: genanki.Note, deck: str) -> str:
    """A hash of everything the note shows in Anki: its fields, tags and deck."""
    text = json.dumps([list(note.fields), sorted(note.tags), deck, MODEL.model_id], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Written:
    """What an export wrote: the notes, and the modification time it gave each card's note."""

    notes: int
    times: dict[str, NoteTime]
    scheduled: int = 0  # cards written with their schedule (--with-history)
    reviews: int = 0  # revlog rows written (--with-history)


def write_apkg(
    cards: Iterable[FlatCard],
    path: Path,
    *,
    known: Mapping[str, NoteTime] | None = None,
    now: int | None = None,
    history: History | None = None,
) -> Written:
    """Write the cards as notes of an .apkg at `path`, one Anki deck per drill deck.

    Each note's modification time is the one `known` holds for its content, else `now`
    (anki_times). With `history`, each scheduled card goes with its schedule and its
    reviews, which Anki's importer takes when told to import scheduling.
    """
    decks: dict[str, genanki.Deck] = {}
    contents: dict[str, str] = {}
    guids: dict[str, str] = {}
    for card in cards:
        name = deck_name(card)
        if name not in decks:
            decks[name] = genanki.Deck(stable_id(f"drill deck:{name}"), name)
        note = note_for(card)
        decks[name].add_note(note)
        contents[card.id] = note_content(note, name)
        guids[card.id] = note.guid
    if not decks:  # Anki refuses a package without a deck
        decks[DECK_PREFIX] = genanki.Deck(stable_id(f"drill deck:{DECK_PREFIX}"), DECK_PREFIX)
    times = stamp(contents, known or {}, int(time.time()) if now is None else now)
    package = genanki.Package([decks[name] for name in sorted(decks)])
    with tempfile.TemporaryDirectory() as folder:
        collection = Path(folder) / "collection.anki2"
        conn = sqlite3.connect(collection)
        try:
            # a fixed time for what genanki stamps (the note type, ids): only the notes' own times change
            package.write_to_db(conn.cursor(), PACKAGE_TIME, itertools.count(PACKAGE_TIME * 1000))
            _set_collection(conn)
            conn.executemany("UPDATE notes SET mod = ? WHERE guid = ?", [(times[cid].mod, guids[cid]) for cid in guids])
            scheduled, reviews = (0, 0) if history is None else _write_history(conn, history, guids)
            conn.commit()
        finally:
            conn.close()
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(collection, "collection.anki2")
            archive.writestr("media", "{}")
    return Written(len(contents), times, scheduled, reviews)


def _set_collection(conn: sqlite3.Connection) -> None:
    """The collection's creation day and day rules, so that due days mean the dates drill gave them."""
    (conf_text,) = conn.execute("SELECT conf FROM col").fetchone()
    conf = json.loads(conf_text)
    conf["schedVer"] = 2
    conf["rollover"] = ROLLOVER_HOUR
    conf["creationOffset"] = creation_offset()
    conn.execute("UPDATE col SET crt = ?, conf = ?", (collection_created(), json.dumps(conf)))


def _write_history(conn: sqlite3.Connection, history: History, guids: Mapping[str, str]) -> tuple[int, int]:
    """Each exported card's schedule and reviews into the collection; (cards scheduled, revlog rows)."""
    by_guid = {guid: cid for cid, guid in guids.items()}
    anki_ids: dict[str, int] = {}
    for anki_id, guid in conn.execute("SELECT cards.id, notes.guid FROM cards JOIN notes ON notes.id = cards.nid"):
        anki_ids[by_guid[guid]] = anki_id
    rows = revlog_rows(history.reviews, anki_ids)
    reps: dict[int, int] = {}
    for row in rows:
        reps[row.cid] = reps.get(row.cid, 0) + 1
    conn.executemany(
        "INSERT INTO revlog (id, cid, usn, ease, ivl, lastIvl, factor, time, type) VALUES (?, ?, -1, ?, ?, ?, ?, ?, ?)",
        [(r.id, r.cid, r.ease, r.ivl, r.last_ivl, r.factor, r.time, r.type) for r in rows],
    )
    scheduled = 0
    for card_id, anki_id in anki_ids.items():
        state = history.states.get(card_id)
        schedule = None if state is None else schedule_of(state, reps.get(anki_id, 0))
        if schedule is None:
            continue
        conn.execute(
            "UPDATE cards SET type = ?, queue = ?, due = ?, ivl = ?, factor = ?, reps = ?, lapses = ?, data = ? "
            "WHERE id = ?",
            (
                schedule.type,
                schedule.queue,
                schedule.due,
                schedule.ivl,
                schedule.factor,
                schedule.reps,
                schedule.lapses,
                schedule.data,
                anki_id,
            ),
        )
        scheduled += 1
    return scheduled, len(rows)
