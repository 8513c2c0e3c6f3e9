"""Export and import: Anki packages and CSV of the cards, the review log out to CSV and back."""

import csv
import datetime as dt
import io
import itertools
import json
import re
import sqlite3
import zipfile
from dataclasses import replace

import genanki
import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.cards.loader import load_decks
from drill.cli import main
from drill.exchange.anki import note_guid, to_html
from drill.exchange.csvio import FORMULA_STARTS, cell, review_from, uncell
from drill.exchange.flat import flatten
from drill.store.reader import DB_NAME
from drill.store.rows import logged_review_from_row
from drill.store.store import ImportCounts, Store
from drill.study.records import CardState
from drill.study.session import study_day
from drill.study.sm2 import SM2State, days_after, review
from drill.words import counted

TODAY = study_day(dt.datetime.now())


def practise(data_dir, cards, days_ago, grades, *, cram=False):
    """One session on the study day `days_ago` before today: cards in turn get the grades, SM-2 as the app runs it.

    A card graded below 4 that comes round again the same day is a same-day repeat.
    """
    store = Store(data_dir)
    states = store.states()
    day = TODAY - dt.timedelta(days=days_ago)
    at = dt.datetime.combine(day, dt.time(10, 0))
    for i, (cid, grade) in enumerate(zip(itertools.cycle(sorted(cards)), grades)):
        before = states.get(cid) or CardState(cid)
        after = replace(before)
        if cram:
            mode = "cram"
        elif before.last_review_day == day and before.repeat_pending:
            mode = "repeat"
        else:
            mode = "review"
            after.sm2 = review(before.sm2, grade, day)
            after.due = days_after(day, after.sm2.interval)
            after.lapses += grade < 3 and before.sm2.repetitions > 0
            after.introduced_on = before.introduced_on or day
        if not cram:
            after.last_review_day, after.repeat_pending = day, grade < 4
        card = cards[cid]
        store.record_review(
            before,
            after,
            grade=grade,
            at=at + dt.timedelta(minutes=i),
            day=day,
            duration_ms=900 + i,
            mode=mode,
            answer={"typed": f"t{i}"},
            content_hash=card.content_hash,
            topic=card.topic,
        )
        states[cid] = after
    store.close()


def stats(data_dir, deck, capsys):
    capsys.readouterr()
    assert main(["stats", "--json", "--data-dir", str(data_dir), "--decks", str(deck)]) == 0
    return json.loads(capsys.readouterr().out)


def table(data_dir, sql):
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        return sorted(conn.execute(sql).fetchall())
    finally:
        conn.close()


@pytest.fixture
def history(tmp_path, concept_deck, write_deck):
    """A data directory with a week of reviews of two topics (failures, same-day repeats, a cram) and its decks."""
    write_deck(
        """
        deck: Second
        cards:
          - {id: s00, kind: concept, topic: ddp, prompt: "Why?", answer: "Because.", sources: [x]}
          - {id: s01, kind: concept, topic: ddp, prompt: "How?", answer: "So.", sources: [x]}
        """,
        "second.yaml",
    )
    deck = concept_deck(4)
    cards = load_decks([deck.parent]).cards
    data = tmp_path / "source"
    practise(data, cards, 6, [5, 2, 4, 3, 1, 4, 5, 4, 4])
    practise(data, cards, 5, [4, 4, 5, 3, 5, 5])
    practise(data, cards, 2, [0, 5, 4, 2, 4, 4, 5, 5])
    practise(data, cards, 1, [5, 5], cram=True)
    practise(data, {cid: cards[cid] for cid in ("c00", "c01")}, 0, [3, 5, 4])
    return data, deck.parent


def test_reviews_exported_and_imported_into_a_fresh_directory_give_the_same_stats(history, tmp_path, capsys):
    source, decks = history
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    with out.open(encoding="utf-8", newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert {r["mode"] for r in exported} == {"review", "repeat", "cram"}

    fresh = tmp_path / "fresh"
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    assert f"imported {len(exported)} reviews" in capsys.readouterr().err

    before, after = stats(source, decks, capsys), stats(fresh, decks, capsys)
    assert after["reviews"] == len(exported) > 20
    assert after["due_today"] == before["due_today"] and after["new_available"] == before["new_available"]
    ddp = next(t for t in after["topics"] if t["topic"] == "ddp")
    assert ddp["reviews"] > 0 and ddp["retention"] is not None
    assert after == before

    # the counts kept beside the log, and every card's state, as the source has them
    for sql in (
        "SELECT * FROM review_day",
        "SELECT * FROM review_topic_day",
        "SELECT card_id, reviewed_at, day, grade, duration_ms, mode, state_before, state_after, answer, topic"
        " FROM review_log",
        "SELECT card_id, repetitions, ef, interval, due, lapses, leech, last_review_day, repeat_pending,"
        " introduced_on, reviews FROM card_state",
    ):
        assert table(fresh, sql) == table(source, sql), sql

    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    assert f"imported 0 reviews from {out} ({len(exported)} already there)" in capsys.readouterr().err
    assert stats(fresh, decks, capsys) == before
    assert table(fresh, "SELECT * FROM review_day") == table(source, "SELECT * FROM review_day")


def test_a_card_takes_the_state_of_its_newest_review_whichever_log_it_came_from(tmp_path):
    day = dt.date(2026, 3, 2)

    def log(card_id, hour, interval, store):
        after = CardState(card_id, sm2=SM2State(1, 2.5, interval), due=day + dt.timedelta(interval), introduced_on=day)
        at = dt.datetime.combine(day, dt.time(hour))
        store.record_review(CardState(card_id), after, grade=4, at=at, day=day, duration_ms=1, mode="review")

    source = Store(tmp_path / "source")
    log("early", 9, 3, source)  # the importing store has a later review of this card
    log("late", 18, 7, source)  # and an earlier one of this
    rows = [r.model_dump(exclude={"id"}) for r in source.reviews()]
    source.close()

    target = Store(tmp_path / "target")
    log("early", 12, 1, target)
    log("late", 8, 2, target)
    assert target.import_reviews(rows) == ImportCounts(added=2)
    assert target.import_reviews(rows) == ImportCounts(already_there=2)
    states = target.states()
    assert states["early"].sm2.interval == 1
    assert states["late"].sm2.interval == 7
    assert table(target.data_dir, "SELECT card_id, reviews FROM card_state") == [("early", 2), ("late", 2)]
    assert table(target.data_dir, "SELECT day, reviews, scheduled, passed FROM review_day") == [
        (day.isoformat(), 4, 4, 4)
    ]
    target.close()


@pytest.fixture
def two_bundled_files(tmp_path, monkeypatch):
    """The bundled decks cut to two files (kernel cards and ledger tables among their 32 cards) and their data:
    an Anki export renders every bundled card to HTML, seconds of CPU for all of them, where a test's point is the
    package's notes, times or history (the CSV test below covers every card)."""
    from drill import paths

    some = tmp_path / "bundled"
    some.mkdir()
    for name in ("data", "kernels.yaml", "capacity-cost.yaml"):
        (some / name).symlink_to(paths.cards_dir() / name)
    monkeypatch.setattr(paths, "cards_dir", lambda: some)
    return some


def test_the_apkg_holds_a_note_per_card_but_kernel_cards_and_keeps_its_guids(
    tmp_path, concept_deck, capsys, two_bundled_files
):
    some = two_bundled_files
    deck = concept_deck(3)
    cards = load_decks([some, deck]).cards
    expected = {cid for cid, c in cards.items() if c.kind != "kernel"} | {"c00", "c01", "c02"}
    assert any(c.kind == "kernel" for c in cards.values())

    def export(name):
        out = tmp_path / name
        assert main(["export", "anki", str(out), "--decks", str(deck), "--data-dir", str(tmp_path / "data")]) == 0
        with zipfile.ZipFile(out) as apkg:
            apkg.extract("collection.anki2", tmp_path / name.replace(".", "_"))
        conn = sqlite3.connect(tmp_path / name.replace(".", "_") / "collection.anki2")
        try:
            notes = conn.execute("SELECT guid, flds, tags FROM notes").fetchall()
        finally:
            conn.close()
        return {flds.split("\x1f")[0]: (guid, flds, tags.split()) for guid, flds, tags in notes}

    first, second = export("first.apkg"), export("second.apkg")
    assert set(first) == expected
    err = capsys.readouterr().err
    assert f"wrote {len(expected)} notes" in err
    kernels = sum(c.kind == "kernel" for c in cards.values())
    assert f"{kernels} kernel cards left out: they are answered by running code on a GPU" in err
    assert {cid: n[0] for cid, n in first.items()} == {cid: n[0] for cid, n in second.items()}
    assert first["c00"][0] == note_guid("c00") == genanki.guid_for("drill", "c00")
    assert first == second  # the same fields too: a parameterised card shows the same draw each time
    guid, fields, tags = first["capacity-cost-ledger-decode-throughput"]
    assert "capacity-cost" in tags and "decode" in tags
    assert "<table>" in fields and "weights, read once per step" in fields and "{{" not in fields


def test_cards_csv_lists_every_card_but_kernel_cards(tmp_path, concept_deck):
    deck = concept_deck(2)
    out = tmp_path / "cards.csv"
    assert main(["export", "csv", str(out), "--decks", str(deck)]) == 0
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["id", "deck", "topic", "kind", "tags", "prompt", "answer", "rubric", "sources"]
    by_id = {r["id"]: r for r in rows}
    assert by_id["c01"] == {
        "id": "c01",
        "deck": "Test deck",
        "topic": "gpu-arch",
        "kind": "concept",
        "tags": "",
        "prompt": "Question c01?",
        "answer": "Answer c01.",
        "rubric": "point one",
        "sources": "FACTS.md",
    }
    assert not {"kernel", "scenario"} & {r["kind"] for r in rows}  # left to drill: the judge, a mock round
    assert len(rows) == sum(
        c.kind not in ("kernel", "scenario") for c in load_decks([*_bundled(), deck]).cards.values()
    )


def test_an_export_names_the_scenario_cards_it_leaves_out_apart_from_the_kernel_cards(tmp_path, concept_deck, capsys):
    deck = concept_deck(1)
    assert main(["export", "csv", str(tmp_path / "cards.csv"), "--decks", str(deck)]) == 0
    err = capsys.readouterr().err
    cards = load_decks([*_bundled(), deck]).cards.values()
    kernels = sum(c.kind == "kernel" for c in cards)
    scenarios = sum(c.kind == "scenario" for c in cards)
    assert kernels and scenarios
    assert f"{counted(kernels, 'kernel card')} and {counted(scenarios, 'scenario card')} left out" in err
    assert "a scenario card is asked in stages in a mock round (`drill mock --round`)" in err
    assert "a kernel card is answered by running code on a GPU" in err


def test_the_left_out_notice_of_one_kind_says_they():
    from drill.cli.exchange import left_out_notice

    assert left_out_notice({}) == ""
    assert left_out_notice({"scenario": 3}) == (
        "3 scenario cards left out: they are asked in stages in a mock round (`drill mock --round`),"
        " which a flashcard cannot do"
    )
    assert left_out_notice({"kernel": 1}) == (
        "1 kernel card left out: it is answered by running code on a GPU (`drill kernel run`), which a flashcard"
        " cannot do"
    )


def _bundled():
    from drill import paths

    return [paths.cards_dir()]


SHAPE = """
deck: Shapes
cards:
  - id: sh
    kind: shape_trace
    topic: transformer-shapes
    given: "X: (B, S, D)"
    prompt: Trace it.
    steps:
      - {label: "Q = X·Wq", shape: "(B, S, D)"}
      - {label: "split", shape: "(B, H, S, Dh)", also: ["(B, H, S, D/H)"]}
    answer: Done.
    sources: [s]
  - id: dg
    kind: diagnosis
    topic: profiling
    evidence: "kernel <x> took 9 ms"
    prompt: What bounds it?
    choices: [memory-bound, compute-bound]
    correct: compute-bound
    answer: The FLOPs.
    sources: [s]
"""


def test_shape_traces_ask_the_steps_and_answer_with_their_shapes(write_deck):
    card = load_decks([write_deck(SHAPE)]).cards["sh"]
    flat = flatten(card)
    assert "X: (B, S, D)" in flat.prompt and "1. Q = X·Wq" in flat.prompt and "2. split" in flat.prompt
    assert "(B, H, S, Dh)" not in flat.prompt
    assert "`(B, H, S, Dh)` or `(B, H, S, D/H)`" in flat.answer and flat.answer.endswith("Done.")


def test_diagnosis_cards_show_evidence_and_choices_then_the_right_one(write_deck):
    flat = flatten(load_decks([write_deck(SHAPE)]).cards["dg"])
    assert flat.prompt.startswith("```text\nkernel <x> took 9 ms\n```")
    # the choices are listed in an order fixed by the card's id, and the answer names the right one's letter
    listed = re.findall(r"\*\*([a-z])\.\*\* (\S+)", flat.prompt)
    assert sorted(text for _, text in listed) == ["compute-bound", "memory-bound"]
    letter = dict((text, letter) for letter, text in listed)["compute-bound"]
    assert flat.answer.startswith(f"**{letter}. compute-bound**")
    assert "<pre><code" in to_html(flat.prompt) and "&lt;x&gt;" in to_html(flat.prompt)


@pytest.mark.parametrize(
    "markdown, html",
    [
        ("one\ntwo\n\nthree", "<p>one\ntwo</p>\n<p>three</p>"),
        ("a <script>x</script> & b", "<p>a &lt;script&gt;x&lt;/script&gt; &amp; b</p>"),
        ("```python\nx = 1 < 2\n```", '<pre><code class="language-python">x = 1 &lt; 2\n</code></pre>'),
        ("- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"),
        ("`a_b` and **bold**", "<p><code>a_b</code> and <strong>bold</strong></p>"),
    ],
)
def test_card_markdown_becomes_simple_escaped_html(markdown, html):
    assert to_html(markdown) == html


GOOD = {
    "card_id": "c00",
    "reviewed_at": "2026-03-02T09:30:00",
    "day": "2026-03-02",
    "grade": "4",
    "mode": "review",
    "duration_ms": "1200",
    "topic": "gpu-arch",
    "state_before": json.dumps(CardState("c00").as_json()),
    "state_after": json.dumps(CardState("c00", sm2=SM2State(1, 2.5, 1), due=dt.date(2026, 3, 3)).as_json()),
    "answer": "",
}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"drop": "state_after"}, ":1: missing column 'state_after'"),
        ({"state_after": "{not json"}, ":3: state_after: not valid JSON (Expecting property name"),
        (
            {"state_after": '{"repetitions": 1}'},
            ":3: state_after: 'interval' must be a whole number from 0 to 1,000,000,000",
        ),
        (
            {"state_after": GOOD["state_after"][:-1] + ', "fsrs": {"stability": "x"}}'},
            ":3: state_after: not a card state",
        ),
        ({"day": "2026-13-01"}, ":3: day: '2026-13-01' is not a date such as 2026-05-10"),
        ({"reviewed_at": "yesterday"}, ":3: reviewed_at: 'yesterday' is not a date and time"),
        ({"grade": "7"}, ":3: grade: 7 is not a grade from 0 to 5"),
        ({"answer": "[1,"}, ":3: answer: not valid JSON"),
        ({"extra": "x"}, ":3: 11 fields where the header has 10"),
    ],
)
def test_a_bad_review_file_is_reported_by_line_and_changes_nothing(tmp_path, capsys, change, message):
    columns = [c for c in GOOD if c != change.get("drop")]
    second = {**GOOD, "reviewed_at": "2026-03-02T10:00:00", **change}
    lines = [
        columns,
        [GOOD[c] for c in columns],
        [second[c] for c in columns] + ([change["extra"]] if "extra" in change else []),
    ]
    path = tmp_path / "bad.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(lines)
    data = tmp_path / "data"
    assert main(["import", "reviews", str(path), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith(f"{path}{message}"), err
    assert "nothing imported" in err and not (data / DB_NAME).exists()


def test_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["import", "reviews", str(tmp_path / "nope.csv"), "--data-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"drill import: cannot read {tmp_path / 'nope.csv'} (no such file)\n"


# -- where an export may write ----------------------------------------------------------------------
@pytest.mark.parametrize("what", ["anki", "csv", "reviews"])
@pytest.mark.parametrize("out", ["", "  "])
def test_an_empty_file_name_is_one_line(tmp_path, capsys, what, out):
    assert main(["export", what, out, "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("drill export: no file given: name the file to write, for example cards.")
        and "Traceback" not in err
    )


@pytest.mark.parametrize("what,suffix", [("anki", ".apkg"), ("csv", ".csv"), ("reviews", ".csv")])
def test_a_file_of_another_kind_is_never_replaced(tmp_path, capsys, what, suffix):
    deck = tmp_path / "deck.yaml"
    deck.write_text("deck: Mine\ncards: []\n", encoding="utf-8")
    assert main(["export", what, str(deck), "--data-dir", str(tmp_path)]) == 1
    assert f"{deck} is already there and is not a {suffix} file" in capsys.readouterr().err
    assert deck.read_text(encoding="utf-8") == "deck: Mine\ncards: []\n"


def test_a_file_of_the_exports_own_kind_is_replaced(tmp_path, capsys):
    old = tmp_path / "old.csv"
    old.write_bytes(b"an earlier export")
    assert main(["export", "reviews", str(old), "--data-dir", str(tmp_path)]) == 0
    assert old.read_text(encoding="utf-8").startswith("card_id,reviewed_at,")
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_link_is_followed_and_kept(tmp_path):
    target = tmp_path / "target.csv"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert main(["export", "reviews", str(link), "--data-dir", str(tmp_path)]) == 0
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text(encoding="utf-8").startswith("card_id,reviewed_at,")


def test_a_pipe_a_folder_or_standard_output_for_anki_is_refused(tmp_path, capsys):
    import os
    import stat

    pipe = tmp_path / "pipe.csv"
    os.mkfifo(pipe)
    assert main(["export", "csv", str(pipe), "--data-dir", str(tmp_path)]) == 1
    assert "not a regular file" in capsys.readouterr().err and stat.S_ISFIFO(pipe.stat().st_mode)
    folder = tmp_path / "out.csv"
    folder.mkdir()
    assert main(["export", "reviews", str(folder), "--data-dir", str(tmp_path)]) == 1
    assert "(it is a folder)" in capsys.readouterr().err and folder.is_dir()
    assert main(["export", "anki", "-", "--data-dir", str(tmp_path)]) == 1
    assert "cannot go to standard output" in capsys.readouterr().err and not (tmp_path / "-").exists()


FORMULA_DECK = """
deck: "=HYPERLINK(\\"http://x\\")"
cards:
  - id: formulas
    kind: concept
    topic: gpu-arch
    tags: ["-2+3"]
    prompt: "=cmd|' /C calc'!A0"
    answer: "+1+cmd|' /C calc'!A0"
    rubric: ["@SUM(1+1)", "'quoted"]
    sources: ["\\tpadded", "-5"]
"""


def test_no_exported_card_cell_starts_a_formula(tmp_path, write_deck, capsys):
    deck = write_deck(FORMULA_DECK, "formulas.yaml")
    assert main(["export", "csv", "-", "--decks", str(deck)]) == 0
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    row = rows["formulas"]
    assert row["prompt"] == "'=cmd|' /C calc'!A0"
    assert row["answer"] == "'+1+cmd|' /C calc'!A0"
    assert row["deck"] == '\'=HYPERLINK("http://x")'
    assert row["tags"] == "'-2+3"
    assert row["rubric"] == "'@SUM(1+1)\n'quoted"
    assert row["sources"] == "'\tpadded\n-5"
    for card in rows.values():
        for value in card.values():
            assert not value.startswith(FORMULA_STARTS), (card["id"], value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (3, 3),
        (-4, -4),
        (2.5, 2.5),
        ("-12", "-12"),
        ("-1.5e3", "-1.5e3"),
        ("+7", "+7"),
        ("2026-05-10", "2026-05-10"),
        ('{"due": null}', '{"due": null}'),
        ("=1+1", "'=1+1"),
        ("-1+cmd|x", "'-1+cmd|x"),
        ("@A1", "'@A1"),
        ("\r=x", "'\r=x"),
        ("'=x", "''=x"),
        ("plain", "plain"),
    ],
)
def test_text_cells_that_start_a_formula_are_quoted_and_numbers_stay_numbers(value, written):
    assert cell(value) == written
    if isinstance(value, str):
        assert uncell(str(written)) == value


def test_review_cells_that_start_a_formula_come_back_as_they_were(tmp_path, capsys):
    data = tmp_path / "data"
    store = Store(data)
    before = CardState("=cmd|x")
    after = replace(before, repeat_pending=True)
    after.sm2 = SM2State(repetitions=1, ef=2.5, interval=1)
    after.due = TODAY
    store.record_review(
        before,
        after,
        grade=4,
        at=dt.datetime(2026, 3, 1, 10),
        day=TODAY,
        duration_ms=-0,
        mode="review",
        answer={"typed": "=2+2"},
        topic="+topic",
    )
    store.close()
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(data)]) == 0
    with out.open(encoding="utf-8", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["card_id"] == "'=cmd|x" and row["topic"] == "'+topic"
    assert row["grade"] == "4" and row["duration_ms"] == "0" and row["day"] == TODAY.isoformat()
    fresh = tmp_path / "fresh"
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    assert table(fresh, "SELECT card_id, topic, grade, answer FROM review_log") == table(
        data, "SELECT card_id, topic, grade, answer FROM review_log"
    )


def _write_reviews(path, rows):
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(GOOD))
        writer.writerows([[row[c] for c in GOOD] for row in rows])
    return path


def _at(minute):
    return {**GOOD, "reviewed_at": f"2026-03-02T09:{minute:02d}:00"}


def test_rows_repeated_within_the_file_are_counted_apart_from_rows_already_there(tmp_path, capsys):
    data = tmp_path / "data"
    first = _write_reviews(tmp_path / "first.csv", [_at(m) for m in range(3)])
    assert main(["import", "reviews", str(first), "--data-dir", str(data)]) == 0
    # c00 is in no deck: a note saying so follows the counts
    assert capsys.readouterr().err.startswith(f"imported 3 reviews from {first} (0 already there)\n")
    twice = _write_reviews(tmp_path / "twice.csv", [_at(m) for m in (1, 2, 3, 4, 3, 4, 4)])
    assert main(["import", "reviews", str(twice), "--data-dir", str(data)]) == 0
    assert capsys.readouterr().err.startswith(
        f"imported 2 reviews from {twice} (2 already there; 3 given more than once in the file)\n"
    )
    assert table(data, "SELECT count(*) FROM review_log") == [(5,)]
    assert table(data, "SELECT reviews FROM card_state") == [(5,)]


def test_an_import_in_small_batches_ends_as_one_in_a_single_batch(tmp_path):
    rows = [review_from(list(GOOD), list(_at(m).values())) for m in (5, 1, 4, 2, 3, 1)]
    whole, batched = Store(tmp_path / "whole"), Store(tmp_path / "batched")
    assert whole.import_reviews(rows) == batched.import_reviews(rows, batch=2) == ImportCounts(5, 0, 1)
    whole.close(), batched.close()
    for sql in ("SELECT * FROM review_day", "SELECT * FROM card_state", "SELECT card_id, reviewed_at FROM review_log"):
        assert table(tmp_path / "whole", sql) == table(tmp_path / "batched", sql), sql


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reviewed_at": "0001-01-01T00:00:00+01:00"}, "reviewed_at: '0001-01-01T00:00:00+01:00' is out of range"),
        ({"reviewed_at": "9999-12-31T23:59:59-12:00"}, "reviewed_at: '9999-12-31T23:59:59-12:00' is out of range"),
        (
            {"state_after": GOOD["state_after"].replace('"repetitions": 1', f'"repetitions": {10**30}')},
            "state_after: 'repetitions' must be a whole number from 0 to 1,000,000,000",
        ),
        (
            {"state_after": GOOD["state_after"].replace('"ef": 2.5', f'"ef": {10**400}')},
            "state_after: 'ef' must be a number",
        ),
        ({"duration_ms": str(10**30)}, "duration_ms: 1000000000000000000000000000000 is not from 0"),
        ({"grade": "9" * 5000}, "grade: '99999999"),
    ],
)
def test_numbers_out_of_range_are_one_line_naming_the_row(tmp_path, capsys, change, message):
    path = _write_reviews(tmp_path / "big.csv", [GOOD, {**_at(45), **change}])
    assert main(["import", "reviews", str(path), "--data-dir", str(tmp_path / "data")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith(f"{path}:3: {message}"), err
    assert len(err.splitlines()[0]) < 400 and "Traceback" not in err


# FSRS-6's 21 parameters as a fit might leave them (the defaults, each moved a little)
FITTED = tuple(round(p * 1.1 + 0.01, 4) for p in DEFAULT_PARAMETERS)


def _fit(data_dir, parameters):
    """What `drill fsrs fit` saves when its parameters predict better (SM-2 scheduling: nothing rescheduled)."""
    from drill.study.scheduling import PARAMETERS_SETTING, parameters_text

    store = Store(data_dir)
    store.set_setting(PARAMETERS_SETTING, parameters_text(parameters))
    store.close()


def _parameters(data_dir):
    from drill.workspace import Workspace

    return Workspace(data_dir).fsrs_parameters()


def test_the_fitted_parameters_go_with_a_review_export_and_come_back_with_its_import(history, tmp_path, capsys):
    source, decks = history
    _fit(source, FITTED)
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    assert "and the FSRS parameters fitted to them" in capsys.readouterr().err
    first, header = out.read_text(encoding="utf-8").splitlines()[:2]
    assert first == "#fsrs_parameters: " + json.dumps(list(FITTED))
    assert header.startswith("card_id,reviewed_at,day")

    fresh = tmp_path / "fresh"
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    err = capsys.readouterr().err
    assert "the FSRS parameters fitted to them are this folder's now" in err
    assert _parameters(fresh) == FITTED
    assert stats(fresh, decks, capsys) == stats(source, decks, capsys)  # the rows came in as before

    # a second import: the parameters are already there
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    assert "already this folder's" in capsys.readouterr().err


def test_a_folder_with_its_own_fitted_parameters_keeps_them(history, tmp_path, capsys):
    source, _ = history
    _fit(source, FITTED)
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    other = tuple(p + 0.001 for p in FITTED)
    target = tmp_path / "target"
    _fit(target, other)
    assert main(["import", "reviews", str(out), "--data-dir", str(target)]) == 0
    assert "keeps its own fitted FSRS parameters" in capsys.readouterr().err
    assert _parameters(target) == other


def test_with_fsrs_scheduling_imported_parameters_reschedule_the_cards(history, tmp_path, capsys):
    source, _ = history
    _fit(source, FITTED)
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    target = tmp_path / "target"
    assert main(["config", "set", "scheduler", "fsrs", "--data-dir", str(target)]) == 0
    capsys.readouterr()
    assert main(["import", "reviews", str(out), "--data-dir", str(target)]) == 0
    assert re.search(r"FSRS rescheduled (1 card|\d+ cards) with them", capsys.readouterr().err)
    assert _parameters(target) == FITTED


def test_an_export_without_fitted_parameters_has_no_parameters_line(history, tmp_path, capsys):
    source, _ = history
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    assert out.read_text(encoding="utf-8").startswith("card_id,")
    fresh = tmp_path / "fresh"
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 0
    assert "FSRS" not in capsys.readouterr().err
    assert _parameters(fresh) is None


@pytest.mark.parametrize(
    "line",
    [
        "#fsrs_parameters: [1, 2, 3]",
        "#fsrs_parameters: not json",
        "#fsrs_parameters: " + json.dumps([1.0] * 20 + [1e999]),
    ],
)
def test_a_bad_parameters_line_is_reported_on_line_1_and_changes_nothing(history, tmp_path, capsys, line):
    source, _ = history
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    out.write_text(line + "\n" + out.read_text(encoding="utf-8"), encoding="utf-8")
    fresh = tmp_path / "fresh"
    capsys.readouterr()
    assert main(["import", "reviews", str(out), "--data-dir", str(fresh)]) == 1
    err = capsys.readouterr().err
    assert f"{out}:1: #fsrs_parameters:" in err and "is not a list of 21 finite numbers" in err
    assert "nothing imported" in err
    assert _parameters(fresh) is None
    assert not (fresh / DB_NAME).exists() or table(fresh, "SELECT COUNT(*) FROM review_log") == [(0,)]


def test_a_row_problem_below_the_parameters_line_names_its_own_line(history, tmp_path, capsys):
    source, _ = history
    _fit(source, FITTED)
    out = tmp_path / "reviews.csv"
    assert main(["export", "reviews", str(out), "--data-dir", str(source)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace(",review,", ",bad mode,", 1).replace(",repeat,", ",bad mode,", 1)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["import", "reviews", str(out), "--data-dir", str(tmp_path / "fresh")]) == 1
    assert f"{out}:4: mode:" in capsys.readouterr().err  # the parameters line is line 1, the header line 2


# -- Anki: note times, history out and back ------------------------------------------------------------------
def _package_rows(package, sql, where):
    with zipfile.ZipFile(package) as apkg:
        apkg.extract("collection.anki2", where)
    conn = sqlite3.connect(where / "collection.anki2")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_a_notes_time_changes_only_when_its_card_does(tmp_path, concept_deck, two_bundled_files):
    deck = concept_deck(3)
    data = tmp_path / "data"

    def times(name):
        out = tmp_path / f"{name}.apkg"
        assert main(["export", "anki", str(out), "--decks", str(deck), "--data-dir", str(data)]) == 0
        rows = _package_rows(out, "SELECT flds, mod FROM notes", tmp_path / name)
        return {flds.split("\x1f")[0]: mod for flds, mod in rows}

    first = times("first")
    assert times("again") == first
    deck.write_text(deck.read_text().replace("Answer c01.", "Answer c01, edited."))
    edited = times("edited")
    assert {cid for cid in first if edited[cid] != first[cid]} == {"c01"}
    assert edited["c01"] > first["c01"]


def test_with_history_each_scheduled_card_carries_its_schedule_and_reviews(history, tmp_path, two_bundled_files):
    source, decks = history
    out = tmp_path / "history.apkg"
    assert main(["export", "anki", str(out), "--decks", str(decks), "--with-history", "--data-dir", str(source)]) == 0
    store = Store(source)
    states = store.states()
    logged = {cid: len(store.reviews(cid)) for cid in states}
    store.close()
    rows = _package_rows(
        out,
        "SELECT notes.guid, cards.type, cards.due, cards.ivl, cards.factor, cards.reps, "
        "(SELECT count() FROM revlog WHERE revlog.cid = cards.id) FROM cards JOIN notes ON notes.id = cards.nid",
        tmp_path / "history",
    )
    by_guid = {guid: rest for guid, *rest in rows}
    for cid, state in states.items():
        kind, due, ivl, factor, reps, reviews = by_guid[note_guid(cid)]
        assert kind == 2 and dt.date(2000, 1, 1) + dt.timedelta(days=due) == state.due
        assert ivl == state.sm2.interval and factor == round(state.sm2.ef * 1000)
        assert reps == reviews == logged[cid]
    assert sum(1 for kind, *_ in by_guid.values() if kind == 0) == len(by_guid) - len(states)


def test_drills_own_history_in_an_anki_package_comes_back_as_already_there(
    history, tmp_path, capsys, two_bundled_files
):
    source, decks = history
    out = tmp_path / "history.apkg"
    assert main(["export", "anki", str(out), "--decks", str(decks), "--with-history", "--data-dir", str(source)]) == 0
    before = [{k: v for k, v in r.model_dump().items() if k != "id"} for r in Store(source).reviews()]
    capsys.readouterr()
    assert main(["import", "anki", str(out), "--decks", str(decks), "--data-dir", str(source)]) == 0
    assert f"imported 0 reviews of 0 cards from {out} ({len(before)} already there)" in capsys.readouterr().err
    assert [{k: v for k, v in r.model_dump().items() if k != "id"} for r in Store(source).reviews()] == before
    # into a folder without them, every review comes in, its answer button taken back as a grade
    fresh = tmp_path / "fresh"
    assert main(["import", "anki", str(out), "--decks", str(decks), "--data-dir", str(fresh)]) == 0
    assert f"imported {len(before)} reviews of 6 cards" in capsys.readouterr().err
    taken = {(r.card_id, r.reviewed_at): r.grade for r in Store(fresh).reviews()}
    back = {0: 1, 1: 1, 2: 1, 3: 3, 4: 4, 5: 5}
    assert taken == {(r["card_id"], r["reviewed_at"]): back[r["grade"]] for r in before}


def test_a_newer_ankis_package_without_a_zstd_decompressor_says_what_to_do(tmp_path, capsys, monkeypatch):
    import shutil
    import sys

    package = tmp_path / "new.colpkg"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("collection.anki2", b"an old-format stub")
        archive.writestr("collection.anki21b", b"\x28\xb5\x2f\xfd compressed")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setitem(sys.modules, "compression", None)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["import", "anki", str(package), "--data-dir", str(tmp_path / "data")]) == 1
    err = capsys.readouterr().err
    assert "comes from a newer Anki, which compresses its collection with Zstandard" in err
    assert "pip install zstandard" in err and "Support older Anki versions" in err and "Traceback" not in err
    assert not (tmp_path / "data" / DB_NAME).exists()


def test_a_file_that_is_no_anki_package_is_one_line(tmp_path, capsys):
    bad = tmp_path / "cards.apkg"
    bad.write_text("not a zip", encoding="utf-8")
    assert main(["import", "anki", str(bad), "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"drill import: {bad} is not an Anki package (.apkg or .colpkg)") and err.count("\n") == 1


def test_the_formula_column_shows_ledger_text_never_the_checkers_python():
    from tests.conftest import bundled_cards

    without_ledger = 0
    for card in bundled_cards().values():
        if card.kind != "memory_ledger":
            continue
        table = [line for line in flatten(card).answer.splitlines() if line.startswith("| ")][1:]
        formulas = {line.split(" | ")[1].strip() for line in table}
        expressions = {str(entry["expr"]) for entry in card.fields.get("answers") or []}
        assert not any(expr in formula for formula in formulas for expr in expressions), card.id
        assert not any(re.search(r"\w\(|\*\s*\w|1e\d", formula) and "`" in formula for formula in formulas), card.id
        without_ledger += not card.fields.get("ledger")
    assert without_ledger > 0  # the cards that once showed their answers' expressions


def test_anki_reviews_older_than_the_logged_ones_rebuild_the_cards_schedule_from_the_whole_log(
    history, tmp_path, capsys, two_bundled_files
):
    from drill.study.scheduling import scheduler_named

    source, decks = history
    out = tmp_path / "history.apkg"
    assert main(["export", "anki", str(out), "--decks", str(decks), "--with-history", "--data-dir", str(source)]) == 0
    other = tmp_path / "other"
    cards = load_decks([decks]).cards
    practise(other, {"c00": cards["c00"]}, 0, [5])  # today, after every review in the package
    assert main(["import", "anki", str(out), "--decks", str(decks), "--data-dir", str(other)]) == 0
    store = Store(other)
    try:
        states = store.states()
        log = [logged_review_from_row(r.model_dump()) for r in store.reviews()]
    finally:
        store.close()
    replayed = scheduler_named("sm2").replay(log, states)
    assert states["c00"].due == replayed["c00"].due and states["c00"].sm2 == replayed["c00"].sm2
    assert states["c00"].last_review_day == TODAY
    assert {cid: s.due for cid, s in states.items()} == {cid: s.due for cid, s in replayed.items()}
