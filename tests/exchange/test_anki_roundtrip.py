"""drill and Anki both ways, checked with Anki's own importer and scheduler (the `anki` package).

Skipped, and the reason says so, where the `anki` package is not installed.
"""

import datetime as dt
import sqlite3
import zipfile

import pytest

anki_collection = pytest.importorskip(
    "anki.collection",
    reason="the anki package is not installed (pip install anki==26.9.3): Anki's own importer cannot be checked",
)

from drill import paths  # noqa: E402
from drill.cards.loader import load_decks  # noqa: E402
from drill.cli import main  # noqa: E402
from drill.exchange.anki import note_guid  # noqa: E402
from drill.exchange.anki_history import interval_days  # noqa: E402
from drill.store.reader import DB_NAME  # noqa: E402
from drill.store.store import Store  # noqa: E402
from drill.study.records import CardState  # noqa: E402
from drill.study.scheduling import after_grade, scheduler_named  # noqa: E402
from drill.study.session import study_day  # noqa: E402

IF_NEWER = 1  # ImportAnkiPackageUpdateCondition.IF_NEWER, Anki's default


@pytest.fixture
def decks(tmp_path, concept_deck, monkeypatch):
    """Only the test's deck (no bundled decks, but their data): six concept cards c00..c05."""
    empty = tmp_path / "bundled"
    empty.mkdir()
    (empty / "data").symlink_to(paths.cards_dir() / "data")
    monkeypatch.setattr(paths, "cards_dir", lambda: empty)
    return concept_deck(6)


def export(deck, data, out, *more):
    assert main(["export", "anki", str(out), "--decks", str(deck), "--data-dir", str(data), *more]) == 0
    return out


def anki_import(col, package, *, with_scheduling=False):
    """Anki's importer as its import dialog runs it; returns (new, updated, unchanged) note counts."""
    request = anki_collection.ImportAnkiPackageRequest(
        package_path=str(package),
        options=anki_collection.ImportAnkiPackageOptions(
            with_scheduling=with_scheduling, update_notes=IF_NEWER, update_notetypes=IF_NEWER
        ),
    )
    log = col.import_anki_package(request).log
    return len(log.new), len(log.updated), len(log.duplicate)


@pytest.fixture
def col(tmp_path):
    (tmp_path / "anki").mkdir()
    collection = anki_collection.Collection(str(tmp_path / "anki" / "collection.anki2"))
    yield collection
    collection.close()


def test_an_unchanged_export_updates_no_note_and_an_edited_card_only_its_own(decks, tmp_path, col):
    data = tmp_path / "data"
    assert anki_import(col, export(decks, data, tmp_path / "first.apkg")) == (6, 0, 0)
    assert anki_import(col, export(decks, data, tmp_path / "again.apkg")) == (0, 0, 6)
    decks.write_text(decks.read_text().replace("Answer c03.", "Answer c03, now longer."))
    assert anki_import(col, export(decks, data, tmp_path / "edited.apkg")) == (0, 1, 5)
    note = col.get_note(col.find_notes("Id:c03")[0])
    assert note["Answer"] == "<p>Answer c03, now longer.</p>"
    assert anki_import(col, export(decks, data, tmp_path / "after.apkg")) == (0, 0, 6)


def practise(data, cards, scheduler_name="sm2"):
    """Twelve days of reviews of c00..c03 (c04, c05 never seen), as the app logs them, with the named scheduler."""
    scheduler = scheduler_named(scheduler_name)
    store = Store(data)
    states: dict[str, CardState] = {}
    grades = {"c00": [4, 5, 5], "c01": [2, 4, 3], "c02": [5, 1, 4], "c03": [3]}
    today = study_day(dt.datetime.now())
    for cid, marks in grades.items():
        for n, grade in enumerate(marks):
            day = today - dt.timedelta(days=12 - 4 * n)
            before = states.get(cid) or CardState(cid)
            after = after_grade(scheduler, before, grade, day, "review")
            after.introduced_on = before.introduced_on or day
            at = dt.datetime.combine(day, dt.time(10, n))
            store.record_review(
                before, after, grade=grade, at=at, day=day, duration_ms=4000 + n, mode="review", topic="gpu-arch"
            )
            states[cid] = after
    if scheduler_name == "fsrs":
        store.set_setting("scheduler", "fsrs")
    store.close()
    return states


def anki_today(col):
    """The date Anki counts as today (a new collection's day starts at 04:00 local time)."""
    return (dt.datetime.now() - dt.timedelta(hours=4)).date()


@pytest.mark.parametrize("scheduler_name", ["sm2", "fsrs"])
def test_with_history_anki_shows_drills_due_dates_intervals_and_reviews(decks, tmp_path, col, scheduler_name):
    data = tmp_path / "data"
    states = practise(data, load_decks([decks]).cards, scheduler_name)
    anki_import(col, export(decks, data, tmp_path / "history.apkg", "--with-history"), with_scheduling=True)
    today = anki_today(col)
    for cid in ("c00", "c01", "c02", "c03", "c04", "c05"):
        card = col.get_card(col.find_cards(f"Id:{cid}")[0])
        reviews = col.db.scalar("SELECT count() FROM revlog WHERE cid = ?", card.id)
        if cid not in states:
            assert (card.type, card.reps, reviews) == (0, 0, 0)  # never seen: new in Anki too
            continue
        state = states[cid]
        assert today + dt.timedelta(days=card.due - col.sched.today) == state.due, cid
        assert card.ivl == interval_days(state)
        if scheduler_name == "sm2":
            assert card.ivl == state.sm2.interval
        else:
            assert card.memory_state is not None
            assert card.memory_state.stability == pytest.approx(state.fsrs.stability, rel=1e-3)
        logged = len(Store(data).reviews(cid))
        assert card.reps == reviews == logged > 0
        assert card.lapses == state.lapses


def _answer_in_anki(col, eases):
    """Answer the cards Anki shows, in its order, with the given buttons; returns the note GUIDs answered."""
    answered = []
    for ease in eases:
        queued = col.sched.get_queued_cards(fetch_limit=1)
        if not queued.cards:  # the rest are learning cards, not due for a minute
            break
        card = col.get_card(queued.cards[0].card.id)
        card.start_timer()
        answered.append(card.note().guid)
        col.sched.answerCard(card, ease)
    return answered


@pytest.mark.parametrize("how", ["apkg", "colpkg"])
def test_anki_reviews_of_drills_notes_come_into_drill_once(decks, tmp_path, col, capsys, how):
    data = tmp_path / "data"
    anki_import(col, export(decks, data, tmp_path / "cards.apkg"))
    # a note of the learner's own, answered too: drill counts it and leaves it alone
    own = col.new_note(col.models.by_name("Basic"))
    own["Front"] = "mine"
    col.add_note(own, col.decks.id("Default"))
    guids = _answer_in_anki(col, [3, 1, 4, 3, 2, 3, 3, 3, 3])
    drills = {note_guid(f"c{i:02d}"): f"c{i:02d}" for i in range(6)}
    expected = [g for g in guids if g in drills]
    assert len(expected) < len(guids)  # the learner's own note was answered too
    revlog = {
        (drills[guid], ease)
        for guid, ease in col.db.all(
            "SELECT notes.guid, revlog.ease FROM revlog JOIN cards ON cards.id = revlog.cid "
            "JOIN notes ON notes.id = cards.nid"
        )
        if guid in drills
    }
    if how == "apkg":
        package = tmp_path / "from-anki.apkg"
        options = anki_collection.ExportAnkiPackageOptions(with_scheduling=True, legacy=True)
        col.export_anki_package(out_path=str(package), options=options, limit=None)
    else:  # the whole collection, as newer Anki writes it: collection.anki21b, Zstandard-compressed
        package = tmp_path / "from-anki.colpkg"
        col.export_collection_package(str(package), include_media=False, legacy=False)
        with zipfile.ZipFile(package) as archive:
            assert "collection.anki21b" in archive.namelist()
    capsys.readouterr()
    assert main(["import", "anki", str(package), "--decks", str(decks), "--data-dir", str(data)]) == 0
    err = capsys.readouterr().err
    assert f"imported {len(expected)} reviews of {len(set(expected))} cards" in err
    assert "1 notes drill did not export left alone" in err
    conn = sqlite3.connect(data / DB_NAME)
    try:
        rows = conn.execute("SELECT card_id, grade, mode, reviewed_at FROM review_log ORDER BY reviewed_at").fetchall()
    finally:
        conn.close()
    assert len(rows) == len(expected)
    grade_of = {1: 1, 2: 3, 3: 4, 4: 5}
    assert {(cid, grade) for cid, grade, _, _ in rows} == {(cid, grade_of[ease]) for cid, ease in revlog}
    states = Store(data).states()
    assert all(states[cid].due is not None and not states[cid].is_new for cid, *_ in rows)
    capsys.readouterr()
    assert main(["import", "anki", str(package), "--decks", str(decks), "--data-dir", str(data)]) == 0
    assert f"imported 0 reviews of 0 cards from {package} ({len(expected)} already there)" in capsys.readouterr().err
    conn = sqlite3.connect(data / DB_NAME)
    try:
        assert conn.execute("SELECT count() FROM review_log").fetchone()[0] == len(expected)
    finally:
        conn.close()
