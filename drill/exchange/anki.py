"""`drill export anki`: the cards as an Anki package whose notes a later export updates instead of duplicating.

Anki knows a note again by its GUID and a note type by its id, so both come
from stable names: the GUID from the card id, the note type's and each deck's
id from a fixed name. Re-importing a newer export then updates the learner's
notes (and keeps their review history in Anki).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable
from pathlib import Path

import genanki
from markdown_it import MarkdownIt

from drill.exchange.flat import FlatCard

FIELDS = ("Id", "Prompt", "Answer", "Rubric", "Sources", "Topic", "Kind")
DECK_PREFIX = "drill"

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


def write_apkg(cards: Iterable[FlatCard], path: Path) -> int:
    """Write the cards as notes of an .apkg at `path`, one Anki deck per drill deck; returns the note count."""
    decks: dict[str, genanki.Deck] = {}
    count = 0
    for card in cards:
        name = deck_name(card)
        if name not in decks:
            decks[name] = genanki.Deck(stable_id(f"drill deck:{name}"), name)
        decks[name].add_note(note_for(card))
        count += 1
    if not decks:  # Anki refuses a package without a deck
        decks[DECK_PREFIX] = genanki.Deck(stable_id(f"drill deck:{DECK_PREFIX}"), DECK_PREFIX)
    package = genanki.Package([decks[name] for name in sorted(decks)])
    package.write_to_file(str(path))
    return count
