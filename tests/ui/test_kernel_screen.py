"""The kernel screen through Textual's pilot, with the fake judge child."""

import sys

import pytest
import tree_sitter
import tree_sitter_cuda
from textual.app import App
from textual.widgets import Static

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel import drafts
from drill.kernel.client import JudgeClient
from drill.ui.kernel_screen import HIGHLIGHTS, RESTORE_COMMAND, KernelScreen
from drill.ui.markdown_view import MarkdownView
from tests.conftest import settle, stretched, type_keys, until


def fake_judge(*flags):
    return JudgeClient([sys.executable, "-m", "drill.judge.fake", *flags], start_timeout=stretched(30))


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


class FakeStore:
    def __init__(self):
        self.attempts = []

    def record_kernel_attempt(self, card_id, source, result):
        self.attempts.append((card_id, source, result))
        return len(self.attempts)


class Host(App):
    def __init__(self, screen):
        super().__init__()
        self.kernel = screen
        self.grades = []

    def on_mount(self):
        self.push_screen(self.kernel, self.grades.append)


@pytest.fixture
def judge():
    j = fake_judge("--gpu")
    yield j
    j.close()


def verdict_text(screen):
    return str(screen.query_one("#kverdict", Static).render())


def status_text(screen):
    return str(screen.query_one("#kstatus", Static).render())


def replace_text(screen, text):
    screen.editor.load_text("")
    screen.editor.insert(text)


async def test_run_shows_cases_figures_and_the_suggested_grade(tmp_path, cards, judge):
    store = FakeStore()
    screen = KernelScreen(cards["reduce"], store=store, data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert screen.editor.text == (paths.kernels_dir() / "reduce.cu").read_text()
        assert screen.editor.language == "cuda"
        await type_keys(pilot, "f5")
        await settle(pilot)
        text = verdict_text(screen)
        assert "✓ n=1" in text and "✓ n=1,025" in text and "\ncorrect\n" in text
        assert "89.5 % of 4,000 GB/s" in text and "0.90× PyTorch" in text
        assert "fake_kernel: 16 regs · 1024 B shared" in text
        assert "suggested grade 5" in text  # 89.5 % is within 10 % of the card's 90 % target
        [(card_id, source, result)] = store.attempts
        assert card_id == "reduce" and source == screen.editor.text and result["correct"] is True


async def test_edits_are_saved_as_a_draft_after_a_pause(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    assert screen.save_delay == 0.3
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "end", "x", "y")
        assert drafts.load_draft(tmp_path, "reduce", "cu") is None  # not yet: typing continues
        await until(pilot, lambda: drafts.load_draft(tmp_path, "reduce", "cu") is not None, "the draft saved")
        assert drafts.load_draft(tmp_path, "reduce", "cu") == screen.editor.text
        assert "draft saved" in str(screen.query_one("#ktop", Static).render())


async def test_a_saved_draft_is_continued_without_a_question(tmp_path, cards, judge):
    drafts.save_draft(tmp_path, "softmax", "py", "# my softmax\n")
    screen = KernelScreen(cards["softmax"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert pilot.app.screen is screen and screen.editor.has_focus  # the editor, not a question
        assert screen.editor.text == "# my softmax\n"
        assert any("saved draft is in the editor" in n.message for n in pilot.app._notifications)
        await type_keys(pilot, "s")  # the first letter of the code: typed, nothing else
        await settle(pilot)
        assert screen.editor.text == "s# my softmax\n"
        await until(pilot, lambda: drafts.load_draft(tmp_path, "softmax", "py") == "s# my softmax\n", "saved")


async def test_a_compile_error_moves_the_cursor_to_its_line(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        replace_text(screen, "line one\nline two\n// fake: compile-error 3\nline four\n")
        await type_keys(pilot, "f5")
        await settle(pilot)
        text = verdict_text(screen)
        assert "did not compile" in text and 'line 3:5: error: expected a ";"' in text
        assert "// fake: compile-error 3" in text  # the offending source line is shown
        assert screen.editor.cursor_location == (2, 4)
        assert "suggested grade 1" in text


async def test_a_hang_is_reported_and_the_screen_stays_responsive(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    screen.timeout = 1.5
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        replace_text(screen, "// fake: hang\n")
        await type_keys(pilot, "f5")
        await until(pilot, lambda: "✓ n=1" in status_text(screen), "the first case reported")
        assert screen.running
        await type_keys(pilot, "end", "z")  # typing while the judge works
        assert screen.editor.text == "// fake: hang\nz"
        await settle(pilot)
        text = verdict_text(screen)
        assert "did not finish within 1.5 s" in text and "n=31" in text and "WRONG" in text
        replace_text(screen, "// fake: ok\n")
        await type_keys(pilot, "f5")
        await settle(pilot)
        assert "\ncorrect\n" in verdict_text(screen)


async def test_cancel_stops_a_run(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        replace_text(screen, "// fake: slow 1\n")
        await type_keys(pilot, "f5")
        await until(pilot, lambda: "compiled" in status_text(screen), "the run under way")
        await type_keys(pilot, "f4")
        await settle(pilot)
        assert not screen.running
        assert "not checked: cancelled" in verdict_text(screen)


async def test_reveal_shows_reference_diff_and_writeup_then_grades(tmp_path, cards, judge):
    screen = KernelScreen(cards["transpose"], data_dir=tmp_path, judge=judge)
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "3")  # typed into the editor, not a grade
        assert app.grades == []
        await type_keys(pilot, "f5")
        await settle(pilot)
        await type_keys(pilot, "f9")
        answer = screen.query_one("#kanswer-md", MarkdownView).source
        assert "```cuda\n" + (paths.answers_dir() / "transpose.cu").read_text().rstrip() in answer
        assert "```diff\n--- yours/transpose.cu\n+++ answer/transpose.cu" in answer
        assert "+    __shared__ float tile[TILE][TILE + 1];" in answer
        assert (paths.answers_dir() / "transpose.md").read_text().splitlines()[0] in answer
        assert "Your last run:** correct" in answer
        await type_keys(pilot, "4")
        await settle(pilot)
    assert app.grades == [4]


async def test_enter_accepts_the_suggested_grade_and_escape_leaves_ungraded(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "f5")
        await settle(pilot)
        await type_keys(pilot, "f9", "enter")
        await settle(pilot)
    assert app.grades == [5]

    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    app = Host(screen)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "escape", "escape")  # the first leaves the editor, the second the screen
        await settle(pilot)
    assert app.grades == [None]


async def test_reset_needs_a_second_press_and_keeps_the_draft_to_bring_back(tmp_path, cards, judge):
    starter = (paths.kernels_dir() / "reduce.cu").read_text()
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert list(screen.palette_commands()) == []  # nothing kept yet, nothing to restore
        replace_text(screen, "mine\n")
        screen.save_now()
        await type_keys(pilot, "f8")
        assert screen.editor.text == "mine\n"
        await type_keys(pilot, "f8")
        assert screen.editor.text == starter
        assert not drafts.has_draft(tmp_path, "reduce", "cu")
        assert drafts.load_backup(tmp_path, "reduce", "cu") == "mine\n"
        assert screen.editor.has_focus
        await type_keys(pilot, "ctrl+z")  # the editor's undo takes the reset back
        assert screen.editor.text == "mine\n"
        await until(pilot, lambda: drafts.load_draft(tmp_path, "reduce", "cu") == "mine\n", "the draft saved again")
        await type_keys(pilot, "f8", "f8")
        assert screen.editor.text == starter
        [restore] = list(screen.palette_commands())  # later, or after more edits: the palette command
        assert restore.title == RESTORE_COMMAND
        screen.editor.insert("typed after the reset\n")
        restore.callback()
        await settle(pilot)
        assert screen.editor.text == "mine\n" and drafts.load_draft(tmp_path, "reduce", "cu") == "mine\n"
        assert "typed after the reset" in drafts.load_backup(tmp_path, "reduce", "cu")  # swapped, not lost


def test_the_cuda_highlight_query_covers_cuda():
    language = tree_sitter.Language(tree_sitter_cuda.language())
    query = tree_sitter.Query(language, HIGHLIGHTS.read_text())
    source = (paths.answers_dir() / "reduce.cu").read_bytes()
    tree = tree_sitter.Parser(language).parse(source)
    captured = {
        name: {n.text.decode() for n in nodes}
        for name, nodes in tree_sitter.QueryCursor(query).captures(tree.root_node).items()
    }
    assert {"__global__", "__shared__", "__launch_bounds__", "__restrict__"} <= captured["keyword.function"]
    assert {"__syncthreads", "__shfl_down_sync", "atomicAdd"} <= captured["keyword.function"]
    assert {"threadIdx", "blockIdx", "blockDim"} <= captured["variable.builtin"]
    assert "float4" in captured["type"] and "float" in captured["type.builtin"]
    assert "reduce_sum" in captured["function"] and "0.f" in captured["number"]
    assert any(c.startswith("// drill:") for c in captured["comment"])
    assert '"C"' in captured["string"] and "#define" in captured["include"]


async def test_the_review_loop_opens_the_kernel_screen_and_records_its_grade(tmp_path):
    import datetime as dt
    import sqlite3

    from drill.start import AppOptions
    from drill.store.reader import DB_NAME
    from drill.ui.app import make_app
    from tests.conftest import FixedClock

    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text())
    data = tmp_path / "data"
    judges = []

    def factory(data_dir):
        judges.append(fake_judge("--gpu"))
        return judges[-1]

    app = make_app(AppOptions(data, [deck], clock=FixedClock(dt.datetime(2026, 5, 10, 12, 0))), judge_factory=factory)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        first = app.session.current.id
        await type_keys(pilot, "space")
        await settle(pilot)
        assert isinstance(app.screen, KernelScreen) and app.screen.card.id == first
        await type_keys(pilot, "f5")
        await settle(pilot)
        await type_keys(pilot, "f9", "4")
        await settle(pilot)
        assert not isinstance(app.screen, KernelScreen)
    assert len(judges) == 1 and judges[0].pid is None  # the app owned one judge and closed it at exit
    conn = sqlite3.connect(data / DB_NAME)
    try:
        assert conn.execute("SELECT card_id, grade FROM review_log").fetchall() == [(first, 4)]
        [(card_id, result)] = conn.execute("SELECT card_id, result FROM kernel_attempt").fetchall()
    finally:
        conn.close()
    assert card_id == first and '"correct": true' in result


async def test_an_edit_typed_just_before_quitting_is_in_the_draft(tmp_path):
    import datetime as dt

    from drill.kernel import drafts
    from drill.start import AppOptions
    from drill.ui.app import make_app
    from tests.conftest import FixedClock

    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text())
    data = tmp_path / "data"
    app = make_app(
        AppOptions(data, [deck], clock=FixedClock(dt.datetime(2026, 5, 10, 12, 0))),
        judge_factory=lambda d: fake_judge("--gpu"),
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        card = app.session.current
        await type_keys(pilot, "space")
        await settle(pilot)
        assert isinstance(app.screen, KernelScreen)
        app.screen.save_delay = 60.0  # a pause the quit comes well inside of
        await type_keys(pilot, "Z", "Z", "Z", "ctrl+q")
    draft = drafts.load_draft(data, card.id, drafts.extension_for(str(card.fields["language"])))
    assert draft is not None and "ZZZ" in draft


REOPEN_KEYS = ["c", "s", "y", "n", "enter", "space", "escape", "tab", "q", "1", "f9", "ctrl+z"]


async def test_a_draft_reopened_in_the_review_survives_any_single_key(tmp_path):
    """Leave the editor, press space to reopen the card, then one key: whichever key it is, the draft stays."""
    import datetime as dt

    from drill.start import AppOptions
    from drill.ui.app import make_app
    from tests.conftest import FixedClock

    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text())
    data = tmp_path / "data"
    app = make_app(
        AppOptions(data, [deck], clock=FixedClock(dt.datetime(2026, 5, 10, 12, 0))),
        judge_factory=lambda d: fake_judge("--gpu"),
    )
    mark = "// my draft, line two"
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        card = app.session.current
        ext = drafts.extension_for(str(card.fields["language"]))
        await type_keys(pilot, "space")
        await settle(pilot)
        app.screen.editor.load_text(f"first line\n{mark}\n")
        for key in REOPEN_KEYS:
            while isinstance(app.screen, KernelScreen):  # leave it: the draft is saved on the way out
                app.screen.action_back()
                await settle(pilot)
            assert mark in (drafts.load_draft(data, card.id, ext) or ""), key
            await type_keys(pilot, "space")
            await settle(pilot)
            assert isinstance(app.screen, KernelScreen) and app.screen.card.id == card.id
            await type_keys(pilot, key)
            await settle(pilot)
            if isinstance(app.screen, KernelScreen):
                assert mark in app.screen.editor.text, key
        while isinstance(app.screen, KernelScreen):
            app.screen.action_back()
            await settle(pilot)
        assert app.session.current.id == card.id  # no key graded it
    assert mark in (drafts.load_draft(data, card.id, ext) or "")


async def test_the_header_names_the_card_and_its_topic_as_drill_kernel_list_does(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        header = str(screen.query_one("#ktop", Static).render())
        assert header.startswith("reduce · cuda-reduction · cuda · reduce.cu")
        assert "Kernel exercises" not in header


async def test_ctrl_home_and_ctrl_end_go_to_the_start_and_the_end_of_the_file(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = screen.editor
        editor.move_cursor((3, 2))
        await type_keys(pilot, "ctrl+end")
        assert editor.cursor_location == editor.document.end and editor.selected_text == ""
        await type_keys(pilot, "ctrl+home")
        assert editor.cursor_location == (0, 0)
        await type_keys(pilot, "ctrl+shift+end")  # with shift: the whole file selected
        assert editor.selected_text == editor.text


async def test_keys_typed_after_esc_left_the_editor_go_back_into_the_code(tmp_path, cards, judge):
    screen = KernelScreen(cards["reduce"], data_dir=tmp_path, judge=judge)
    host = Host(screen)
    async with host.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        editor = screen.editor
        editor.move_cursor((0, 0))
        await type_keys(pilot, "escape")  # the editor's esc moves the focus off it; the screen stays
        assert not editor.has_focus and host.screen is screen
        await type_keys(pilot, "space", "a", "1")
        await settle(pilot)
        assert editor.has_focus and editor.text.startswith(" a1")
        assert host.grades == []  # a digit typed as code grades nothing
