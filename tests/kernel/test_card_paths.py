"""Every file a kernel card names stays inside its folder: `drill check` says so, and the judge never gets such a path."""

import json
import os
import shutil
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.cli import main
from drill.kernel.cards import FILE_FOLDERS, CardFileError, check_kernel_card, kernel_files, name_problem
from drill.kernel.job import kernel_job
from drill.kernel.trust import locked_reason
from tests.conftest import only_card, write_kernel_deck

GOOD = {"starter": "mine.cu", "solution": "mine.cu", "writeup": "mine.md", "harness": "mine_harness.py"}


def make_deck(root: Path, **names: str) -> Path:
    """A deck folder with one kernel card `mine` at line 3 whose files lie beside it; returns the deck file."""
    fields = {**GOOD, **names}
    (root / "kernels" / "harness").mkdir(parents=True, exist_ok=True)
    (root / "answers").mkdir(exist_ok=True)
    shutil.copy(paths.kernels_dir() / "reduce.cu", root / "kernels" / "mine.cu")
    shutil.copy(paths.answers_dir() / "reduce.cu", root / "answers" / "mine.cu")
    (root / "answers" / "mine.md").write_text("# why\n")
    shutil.copy(paths.kernels_dir() / "harness" / "reduce_harness.py", root / "kernels" / "harness" / "mine_harness.py")
    return write_kernel_deck(root, language="cuda", **fields)


card_of = only_card


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch, tmp_path):
    monkeypatch.setenv("DRILL_JUDGE_CPU", "1")
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))


TRAVERSALS = ["../mine.cu", "../../../../etc/passwd", "sub/../../x.py", "..", "a/../b.py"]


@pytest.mark.parametrize("key", list(FILE_FOLDERS))
@pytest.mark.parametrize("name", TRAVERSALS)
def test_traversal_is_a_deck_problem_with_file_line_and_id(tmp_path, key, name):
    deck = make_deck(tmp_path / "deck", **{key: name})
    decks = load_decks([deck], deep=True)
    problems = [p for p in decks.problems if "climbs out of its folder" in p.message]
    assert len(problems) == 1, decks.problems
    [problem] = problems
    assert (problem.path, problem.line, problem.card_id) == (str(deck), 3, "mine")
    assert problem.message.startswith(f"{key} ")
    assert str(problem).startswith(f"{deck}:3: mine: {key} ")


@pytest.mark.parametrize("key", list(FILE_FOLDERS))
@pytest.mark.parametrize("name", TRAVERSALS)
def test_traversal_never_reaches_the_judge(tmp_path, key, name):
    card = card_of(make_deck(tmp_path / "deck", **{key: name}))  # the fast load lets it through; the judge must not
    with pytest.raises(CardFileError, match="climbs out of its folder"):
        kernel_job(card)
    with pytest.raises(CardFileError):
        kernel_files(card)
    reason = locked_reason(card, tmp_path / "home")
    assert reason is not None and reason.startswith("kernel card mine cannot run: ")


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "/tmp/x_harness.py", "C:\\\\evil\\\\x.py", "C:x.py", "//server/share/x.py"]
)
@pytest.mark.parametrize("key", ["starter", "harness"])
def test_absolute_paths_are_rejected(tmp_path, key, name):
    deck = make_deck(tmp_path / "deck", **{key: name})
    decks = load_decks([deck], deep=True)
    assert any(p.card_id == "mine" and p.line == 3 and (f"{key} " in p.message) for p in decks.problems), decks.problems
    card = card_of(deck)
    with pytest.raises(CardFileError):
        kernel_job(card)


@pytest.mark.parametrize(
    "name, words",
    [
        ("", "is empty"),
        ("  ", "is empty"),
        ("a\x00b.py", "control characters"),
        ("x\nimport_os.py", "control characters"),
        ("a" * 300 + ".py", "longer than"),
        ("sub\\x.py", "backslash"),
        ("reduce_harness.pyc", "ending in .py"),
        ("evil.so", "ending in .py"),
        ("harness", "ending in .py"),
    ],
)
def test_names_that_are_not_plain_relative_files(name, words):
    problem = name_problem("harness", name)
    assert problem is not None and words in problem


def test_plain_names_and_subfolders_pass():
    for key in FILE_FOLDERS:
        name = "sub/dir/x.py" if key == "harness" else "sub/dir/x.cu"
        assert name_problem(key, name) is None
    assert name_problem("harness", "./x.py") is None


def test_a_symlink_leading_out_of_the_folder_is_rejected(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(paths.kernels_dir() / "harness" / "reduce_harness.py", outside / "evil_harness.py")
    root = tmp_path / "deck"
    deck = make_deck(root, harness="evil_harness.py")
    os.symlink(outside / "evil_harness.py", root / "kernels" / "harness" / "evil_harness.py")
    decks = load_decks([deck], deep=True)
    [problem] = decks.problems
    assert (problem.line, problem.card_id) == (3, "mine")
    assert "leads out of kernels/harness/ beside the deck through a link" in problem.message
    with pytest.raises(CardFileError, match="through a link"):
        kernel_job(card_of(deck))


def test_a_dangling_symlink_leading_out_is_rejected(tmp_path):
    root = tmp_path / "deck"
    deck = make_deck(root, starter="gone.cu")
    os.symlink(tmp_path / "not-there" / "gone.cu", root / "kernels" / "gone.cu")
    assert any("through a link" in p.message for p in load_decks([deck], deep=True).problems)


def test_a_linked_folder_leading_out_of_the_deck_is_rejected(tmp_path):
    """kernels/harness itself a link to a folder elsewhere: the file is inside `harness/` but outside the deck."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(paths.kernels_dir() / "harness" / "reduce_harness.py", outside / "mine_harness.py")
    root = tmp_path / "deck"
    deck = make_deck(root)
    shutil.rmtree(root / "kernels" / "harness")
    os.symlink(outside, root / "kernels" / "harness")
    problems = load_decks([deck], deep=True).problems
    assert [p.message for p in problems] == [
        "harness 'mine_harness.py' leads out of kernels/harness/ beside the deck through a link; name a file inside it"
    ]


def test_a_symlink_that_stays_inside_the_folder_is_fine(tmp_path):
    root = tmp_path / "deck"
    deck = make_deck(root, harness="alias_harness.py")
    os.symlink("mine_harness.py", root / "kernels" / "harness" / "alias_harness.py")
    assert load_decks([deck], deep=True).problems == []
    assert kernel_job(card_of(deck))["harness"].endswith("alias_harness.py")


def test_a_symlink_loop_is_a_problem_not_a_crash(tmp_path):
    root = tmp_path / "deck"
    deck = make_deck(root, harness="loop.py")
    os.symlink("loop.py", root / "kernels" / "harness" / "loop.py")
    problems = load_decks([deck], deep=True).problems
    assert len(problems) == 1 and problems[0].card_id == "mine", problems


def test_a_good_card_beside_its_deck_still_checks_clean(tmp_path):
    deck = make_deck(tmp_path / "deck")
    assert load_decks([deck], deep=True).problems == []
    assert check_kernel_card(card_of(deck)) == []


def test_drill_check_prints_the_problem_and_exits_1(tmp_path, capsys):
    deck = make_deck(tmp_path / "deck", harness="../../../../../usr/lib/python3/os.py")
    assert main(["check", str(deck)]) == 1
    out = capsys.readouterr().out
    assert f"{deck}:3: mine: harness '../../../../../usr/lib/python3/os.py' climbs out of its folder with '..'" in out


def test_drill_kernel_run_refuses_a_card_with_a_bad_name(tmp_path, capsys):
    deck = make_deck(tmp_path / "deck", solution="/etc/passwd")
    assert main(["kernel", "run", "mine", "--decks", str(deck)]) == 2
    err = capsys.readouterr().err
    assert "kernel card mine cannot run: solution '/etc/passwd' is an absolute path" in err


def test_kernel_list_shows_a_bad_card_as_locked_without_crashing(tmp_path, capsys):
    deck = make_deck(tmp_path / "deck", starter="../../secret.cu")
    assert main(["kernel", "list", "--json", "--decks", str(deck)]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["mine"]["starter"] == "" and "cannot run" in rows["mine"]["locked"]
    assert rows["reduce"]["locked"] is None


def test_bundled_cards_resolve_inside_the_bundled_folders():
    decks = load_decks([paths.cards_dir() / "kernels.yaml"])
    for card in decks.cards.values():
        files = kernel_files(card)
        for key, path in vars(files).items():
            bundled = {"starter": paths.kernels_dir(), "harness": paths.kernels_dir() / "harness"}.get(
                key, paths.answers_dir()
            )
            assert path.resolve().is_relative_to(bundled.resolve()), (card.id, key, path)
