import datetime as dt
import sqlite3

from textual.widgets import Static

from drill.start import AppOptions
from drill.store.reader import DB_NAME
from drill.ui.app import make_app
from drill.ui.markdown_view import MarkdownView
from tests.conftest import FixedClock, settle, type_keys

NOW = dt.datetime(2026, 5, 10, 12, 0)


def db_rows(data_dir, sql):
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def top_text(app):
    return str(app.screen.query_one("#top", Static).render())


async def test_reveal_grade_next_undo_quit(tmp_path, concept_deck):
    deck = concept_deck(3)
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "Question c00?" in app.screen.query_one("#prompt", MarkdownView).source
        assert "done 0 · left 3" in top_text(app)
        await type_keys(pilot, "4")  # grading before reveal does nothing
        assert db_rows(data, "SELECT count(*) FROM review_log") == [(0,)]
        await type_keys(pilot, "enter")
        assert "Answer c00." in app.screen.query_one("#answer", MarkdownView).source
        assert "point one" in app.screen.query_one("#answer", MarkdownView).source
        await type_keys(pilot, "4")
        await settle(pilot)
        assert db_rows(data, "SELECT card_id, grade, mode FROM review_log") == [("c00", 4, "review")]
        assert db_rows(data, "SELECT due FROM card_state WHERE card_id='c00'") == [("2026-05-11",)]
        assert "Question c01?" in app.screen.query_one("#prompt", MarkdownView).source
        assert "done 1 · left 2" in top_text(app)
        await type_keys(pilot, "u")  # a letter never undoes
        await settle(pilot)
        assert db_rows(data, "SELECT count(*) FROM review_log") == [(1,)]
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert db_rows(data, "SELECT count(*) FROM review_log") == [(0,)]
        assert db_rows(data, "SELECT repetitions, due FROM card_state WHERE card_id='c00'") == [(0, None)]
        assert "Question c00?" in app.screen.query_one("#prompt", MarkdownView).source
        await type_keys(pilot, "enter", "1")
        await settle(pilot)
        assert db_rows(data, "SELECT repeat_pending FROM card_state WHERE card_id='c00'") == [(1,)]
        await type_keys(pilot, "q")  # q quits only when no card is shown: here it is typed into the answer
        assert app.is_running
        await type_keys(pilot, "ctrl+q")  # a typed answer is not lost to one ctrl+q: it warns first
        await settle(pilot)
        assert app.is_running
        [warning] = [n for n in app._notifications if "typed but not graded" in n.message]
        assert "c01" in warning.message and "ctrl+q again" in warning.message
        await type_keys(pilot, "ctrl+q")  # the second one quits
        await settle(pilot)
        assert not app.is_running
    assert app.return_code == 0


async def test_one_ctrl_q_quits_when_nothing_is_typed(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+q")
        await settle(pilot)
        assert not app.is_running
    assert app.return_code == 0


async def grade_the_only_card(data, deck, grade="5"):
    """Open the app on a one-card deck, give the card `grade`; the prompt shown after it."""
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", grade)
        await settle(pilot)
        return app.screen.query_one("#prompt", MarkdownView).source


async def test_empty_queue_says_when_the_next_card_is_due(tmp_path, concept_deck):
    text = await grade_the_only_card(tmp_path / "data", concept_deck(1))
    assert "All done for today" in text and "tomorrow" in text and "2026-05-11" in text


async def test_suspend_and_bury_from_the_screen(tmp_path, concept_deck):
    deck = concept_deck(3)
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), new_per_day=3))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "s", "b")  # letters do nothing
        await settle(pilot)
        assert "Question c00?" in app.screen.query_one("#prompt", MarkdownView).source
        await type_keys(pilot, "ctrl+s")
        await settle(pilot)
        await type_keys(pilot, "ctrl+t")
        await settle(pilot)
        assert "Question c02?" in app.screen.query_one("#prompt", MarkdownView).source
    assert db_rows(data, "SELECT card_id, suspended, buried_until FROM card_state ORDER BY card_id") == [
        ("c00", 1, None),
        ("c01", 0, "2026-05-11"),
    ]
    assert db_rows(data, "SELECT value FROM setting WHERE key='new_per_day'") == [("3",)]


async def test_grades_survive_a_new_app_and_repeats_come_first(tmp_path, concept_deck):
    deck = concept_deck(3)
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW)))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter", "5", "enter", "2")
        await settle(pilot)
    again = make_app(AppOptions(data, [deck], clock=FixedClock(NOW + dt.timedelta(hours=1))))
    assert again.session.queue == ["c01", "c02"]


async def test_a_kernel_card_from_an_untrusted_folder_is_locked_and_shows_its_answer(tmp_path):
    import shutil

    from drill import paths
    from tests.conftest import write_kernel_deck

    root = tmp_path / "decks"
    (root / "kernels" / "harness").mkdir(parents=True)
    (root / "answers").mkdir()
    shutil.copy(paths.kernels_dir() / "reduce.cu", root / "kernels" / "mine.cu")
    shutil.copy(paths.answers_dir() / "reduce.cu", root / "answers" / "mine.cu")
    (root / "answers" / "mine.md").write_text("# why\n")
    harness = root / "kernels" / "harness" / "mine_harness.py"
    harness.write_text((paths.kernels_dir() / "harness" / "reduce_harness.py").read_text())
    deck = write_kernel_deck(
        root, language="cuda", starter="mine.cu", solution="mine.cu", writeup="mine.md", harness="mine_harness.py"
    )
    app = make_app(AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), card_id="mine"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "locked:" in verdict and "drill trust" in verdict
        await type_keys(pilot, "space")
        await settle(pilot)
        assert app.screen.revealed and type(app.screen).__name__ == "ReviewScreen"


def test_topic_names_are_read_without_regard_to_case_and_typos_get_suggestions(tmp_path, concept_deck):
    import pytest

    from drill.cards.loader import load_decks
    from drill.study.choice import UnknownTopic, known_topic_names

    deck = concept_deck(2)
    cards = load_decks([deck]).cards
    assert known_topic_names(["GPU-ARCH"], cards) == ["gpu-arch"]
    with pytest.raises(UnknownTopic, match=r"did you mean gpu-arch\?"):
        known_topic_names(["GPU-ARHC"], cards)
    with pytest.raises(UnknownTopic, match=r"'cooking' \(topics: gpu-arch\)"):  # nothing close: every topic
        known_topic_names(["cooking"], cards)


async def test_a_topic_with_nothing_due_says_so_and_how_to_go_over_it_anyway(tmp_path, concept_deck):
    deck = concept_deck(1)
    data = tmp_path / "data"
    await grade_the_only_card(data, deck)
    focused = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), topics=["GPU-ARCH"]))
    async with focused.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        text = focused.screen.query_one("#prompt", MarkdownView).source
        assert "All done for today in gpu-arch" in text
        assert "Nothing in gpu-arch is due or new today" in text and "`drill --topic gpu-arch --cram`" in text
        assert "cram" not in top_text(focused)
    cram = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), topics=["gpu-arch"], cram=True))
    async with cram.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert "Question c00?" in cram.screen.query_one("#prompt", MarkdownView).source
        assert "cram: schedule untouched" in top_text(cram)
        # before the card's place, which a narrow terminal cuts first
        assert top_text(cram).index("cram: schedule untouched") < top_text(cram).index("│")
        assert "topics: gpu-arch" in top_text(cram)  # the topics chosen stay in sight (--topic, --weak)


async def test_f1_shows_and_hides_the_keys_even_from_an_answer_field(tmp_path, concept_deck):
    from textual.widgets import HelpPanel, Input

    app = make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        field = app.screen.query_one(Input)
        await type_keys(pilot, *"warp", "f1")
        await settle(pilot)
        assert app.screen.query(HelpPanel) and field.value == "warp"
        await type_keys(pilot, "f1")
        await settle(pilot)
        assert not app.screen.query(HelpPanel)


async def test_undo_brings_back_the_answer_that_was_typed(tmp_path, concept_deck):
    from textual.widgets import Input

    data = tmp_path / "data"
    app = make_app(AppOptions(data, [concept_deck(2)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"warps of 32", "enter")
        await settle(pilot)
        await type_keys(pilot, "3")
        await settle(pilot)
        assert "Question c01?" in app.screen.query_one("#prompt", MarkdownView).source
        assert app.screen.query_one(Input).value == ""
        await type_keys(pilot, "ctrl+z")
        await settle(pilot)
        assert "Question c00?" in app.screen.query_one("#prompt", MarkdownView).source
        assert app.screen.query_one(Input).value == "warps of 32" and not app.screen.revealed
        assert db_rows(data, "SELECT count(*) FROM review_log") == [(0,)]


async def test_going_back_into_a_field_after_esc_adds_to_what_was_typed(tmp_path, concept_deck):
    from textual.widgets import Input

    app = make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"weights 16 GB", "escape", "down", "enter", *" and Adam")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "weights 16 GB and Adam"  # not replaced by a select-all


async def test_a_deck_refused_whole_is_named_as_drill_check_names_it(tmp_path, concept_deck):
    from drill.cards.loader import MAX_DECK_BYTES

    good = concept_deck(2)
    big = good.parent / "big.yaml"
    big.write_text("# " + "x" * MAX_DECK_BYTES + "\n", encoding="utf-8")
    app = make_app(AppOptions(tmp_path / "data", [good.parent], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        (said,) = [n.message for n in app._notifications if "big.yaml" in n.message]
        assert said.startswith("big.yaml: is ") and ":0:" not in said
