"""Kernel cards from the learner's own decks run their Python only after `drill trust`."""

import hashlib
import importlib.util
import json
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.cli import main
from drill.kernel import trust
from drill.kernel.trust import locked_reason
from tests.conftest import only_card, stretched, write_kernel_deck


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch, tmp_path):
    monkeypatch.setenv("DRILL_JUDGE_CPU", "1")
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def canary_deck(
    root: Path, canary: Path, *, language: str = "cuda", harness: str = "mine_harness.py", starter: str | None = None
) -> Path:
    """A deck folder whose harness, once imported, creates `canary`; returns the deck file."""
    (root / "kernels" / "harness").mkdir(parents=True)
    (root / "answers").mkdir()
    ext = ".cu" if language == "cuda" else ".py"
    bundled = "reduce" if language == "cuda" else "softmax"
    starter = starter or f"mine{ext}"
    if not (paths.kernels_dir() / starter).exists():
        shutil.copy(paths.kernels_dir() / f"{bundled}{ext}", root / "kernels" / starter)
    shutil.copy(paths.answers_dir() / f"{bundled}{ext}", root / "answers" / f"mine{ext}")
    (root / "answers" / "mine.md").write_text("# why\n")
    if not (paths.kernels_dir() / "harness" / harness).exists():
        body = (paths.kernels_dir() / "harness" / f"{bundled}_harness.py").read_text()
        (root / "kernels" / "harness" / harness).write_text(f"open({str(canary)!r}, 'w').close()\n" + body)
    return write_kernel_deck(
        root, language=language, starter=starter, solution=f"mine{ext}", writeup="mine.md", harness=harness
    )


@pytest.fixture
def deck(tmp_path):
    return canary_deck(tmp_path / "decks", tmp_path / "CANARY")


card_of = only_card


def harness_of(deck: Path) -> Path:
    return deck.parent / "kernels" / "harness" / "mine_harness.py"


# -- locked_reason ------------------------------------------------------------------------------------
def test_an_untrusted_card_is_locked_with_the_command_to_unlock_it(deck, home):
    folder = deck.parent.resolve()
    assert locked_reason(card_of(deck), home) == (
        f"kernel card mine runs Python from {harness_of(deck)}, which you have not trusted;"
        f" run `drill trust {folder}` after reading it"
    )


def test_a_folder_with_spaces_is_quoted_in_the_command(tmp_path, home):
    deck = canary_deck(tmp_path / "my decks", tmp_path / "CANARY")
    reason = locked_reason(card_of(deck), home)
    assert f"run `drill trust '{deck.parent.resolve()}'` after reading it" in reason


def test_trusting_unlocks_and_records_path_and_hashes(deck, home):
    record, where = trust.trust(deck.parent, home)
    assert where == home / "trusted.json"
    assert locked_reason(card_of(deck), home) is None
    data = json.loads(where.read_text())
    folder = str(deck.parent.resolve())
    digest = hashlib.sha256(harness_of(deck).read_bytes()).hexdigest()
    assert data["folders"][folder]["files"] == {"kernels/harness/mine_harness.py": digest}
    assert record.files == {"kernels/harness/mine_harness.py": digest}
    assert [p.name for p in home.iterdir()] == ["trusted.json"]  # the temporary file was renamed, none left over


def test_trusting_a_deck_file_trusts_its_folder(deck, home):
    trust.trust(deck, home)
    assert locked_reason(card_of(deck), home) is None


def test_editing_the_harness_locks_again(deck, home):
    trust.trust(deck.parent, home)
    harness = harness_of(deck)
    harness.write_text(harness.read_text() + "\nimport os\n")
    reason = locked_reason(card_of(deck), home)
    assert reason == (
        f"kernel card mine runs Python from {harness}, which changed since you trusted it"
        f" (changed: kernels/harness/mine_harness.py); run `drill trust {deck.parent.resolve()}` after reading it again"
    )
    trust.trust(deck.parent, home)
    assert locked_reason(card_of(deck), home) is None


def test_adding_or_removing_python_locks_again(deck, home):
    trust.trust(deck.parent, home)
    helper = deck.parent / "kernels" / "harness" / "helper.py"
    helper.write_text("import os\n")
    assert "(added: kernels/harness/helper.py)" in locked_reason(card_of(deck), home)
    trust.trust(deck.parent, home)
    assert locked_reason(card_of(deck), home) is None
    helper.unlink()
    assert "(removed: kernels/harness/helper.py)" in locked_reason(card_of(deck), home)


def test_a_python_file_elsewhere_under_kernels_counts_too(deck, home):
    trust.trust(deck.parent, home)
    (deck.parent / "kernels" / "sub").mkdir()
    (deck.parent / "kernels" / "sub" / "util.py").write_text("x = 1\n")
    assert "added: kernels/sub/util.py" in locked_reason(card_of(deck), home)


def test_revoking_locks_again(deck, home):
    trust.trust(deck.parent, home)
    assert trust.revoke(deck.parent, home) is True
    assert "which you have not trusted" in locked_reason(card_of(deck), home)
    assert trust.revoke(deck.parent, home) is False


def test_trust_is_per_folder(tmp_path, home):
    one = canary_deck(tmp_path / "one", tmp_path / "C1")
    two = canary_deck(tmp_path / "two", tmp_path / "C2")
    trust.trust(one.parent, home)
    assert locked_reason(card_of(one), home) is None
    assert "which you have not trusted" in locked_reason(card_of(two), home)


def test_bundled_cards_are_never_locked(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "trusted.json").write_text("{ not json")  # an unreadable record trusts nothing, and locks nothing bundled
    cards = load_decks([paths.cards_dir()]).cards
    kernel = [c for c in cards.values() if c.kind == "kernel"]
    assert {c.id for c in kernel} >= {"reduce", "transpose", "softmax", "rmsnorm"}
    assert all(locked_reason(c, home) is None for c in cards.values())


def test_a_deck_card_using_bundled_files_only_is_not_locked(tmp_path, home):
    deck = canary_deck(tmp_path / "decks", tmp_path / "CANARY", harness="reduce_harness.py", starter="reduce.cu")
    assert locked_reason(card_of(deck), home) is None


def test_a_deck_triton_starter_is_python_the_judge_runs(tmp_path, home):
    """No draft yet: the judge imports the starter, so a deck's own Triton starter needs trust too."""
    root = tmp_path / "decks"
    deck = canary_deck(root, tmp_path / "CANARY", language="triton", harness="softmax_harness.py")
    reason = locked_reason(card_of(deck), home)
    assert reason is not None and f"runs Python from {root / 'kernels' / 'mine.py'}," in reason
    trust.trust(root, home)
    assert locked_reason(card_of(deck), home) is None


def test_an_unreadable_record_trusts_nothing_and_trusting_rewrites_it(deck, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "trusted.json").write_text('{"folders": [1, 2]}')
    assert "not trusted" in locked_reason(card_of(deck), home)
    trust.trust(deck.parent, home)
    assert locked_reason(card_of(deck), home) is None


def test_a_failed_write_keeps_the_old_record_and_leaves_no_temp_file(deck, home, monkeypatch):
    trust.trust(deck.parent, home)
    before = (home / "trusted.json").read_text()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(trust.os, "replace", broken_replace)
    with pytest.raises(OSError):
        trust.revoke(deck.parent, home)
    assert (home / "trusted.json").read_text() == before
    assert [p.name for p in home.iterdir()] == ["trusted.json"]


def test_compiled_python_that_would_replace_the_source_locks(deck, home):
    """A hash-based .pyc is loaded instead of the source it names, whatever code it holds."""
    trust.trust(deck.parent, home)
    harness = harness_of(deck)
    evil = deck.parent / "evil.py"
    evil.write_text("raise SystemExit('not the code you read')\n")
    py_compile.compile(
        str(evil),
        cfile=importlib.util.cache_from_source(str(harness)),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    reason = locked_reason(card_of(deck), home)
    assert reason.startswith("kernel card mine is locked: ") and "compiled Python" in reason
    with pytest.raises(ValueError, match="compiled Python"):
        trust.trust(deck.parent, home)


def test_the_timestamped_cache_python_writes_for_itself_is_fine(deck, home):
    trust.trust(deck.parent, home)
    harness = harness_of(deck)
    py_compile.compile(
        str(harness),
        cfile=importlib.util.cache_from_source(str(harness)),
        invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
    )
    assert locked_reason(card_of(deck), home) is None


def test_a_loose_pyc_beside_the_harness_locks(deck, home):
    trust.trust(deck.parent, home)
    py_compile.compile(str(harness_of(deck)), cfile=str(harness_of(deck).with_name("helper.pyc")))
    assert "compiled Python" in locked_reason(card_of(deck), home)


def test_a_link_out_of_the_folder_is_never_read_or_trusted(tmp_path, deck, home):
    os.symlink("/dev/zero", deck.parent / "kernels" / "harness" / "zero.py")  # reading it would never end
    with pytest.raises(ValueError, match="zero.py"):
        trust.trust(deck.parent, home)
    assert trust.python_files(deck.parent)["kernels/harness/zero.py"] == trust.NOT_A_FILE


def test_non_kernel_cards_are_never_locked(home):
    cards = load_decks([paths.cards_dir() / "ddp.yaml"]).cards
    assert cards and all(locked_reason(c, home) is None for c in cards.values())


# -- drill trust ------------------------------------------------------------------------------------
def test_drill_trust_prints_each_file_its_hash_and_the_record(deck, home, capsys):
    assert main(["trust", str(deck.parent)]) == 0
    out = capsys.readouterr().out
    digest = hashlib.sha256(harness_of(deck).read_bytes()).hexdigest()
    assert f"trusting the Python of {deck.parent.resolve()}:" in out
    assert f"kernels/harness/mine_harness.py  sha256 {digest}" in out
    assert f"recorded in {home / 'trusted.json'}" in out

    assert main(["trust", "--list"]) == 0
    assert f"{deck.parent.resolve()}  1 file, trusted " in capsys.readouterr().out
    harness_of(deck).write_text("x = 1\n")
    assert main(["trust", "--list"]) == 0
    assert "changed (changed: kernels/harness/mine_harness.py)" in capsys.readouterr().out

    assert main(["trust", "--revoke", str(deck.parent)]) == 0
    assert f"no longer trusted: {deck.parent.resolve()}" in capsys.readouterr().out
    assert main(["trust", "--revoke", str(deck.parent)]) == 1
    assert "was not trusted" in capsys.readouterr().err
    assert main(["trust", "--list"]) == 0
    assert "no trusted deck folders" in capsys.readouterr().out


def test_drill_trust_with_a_data_dir(deck, tmp_path, capsys):
    other = tmp_path / "other"
    assert main(["trust", str(deck.parent), "--data-dir", str(other)]) == 0
    assert (other / "trusted.json").is_file()
    assert main(["--data-dir", str(other), "trust", "--list"]) == 0
    assert str(deck.parent.resolve()) in capsys.readouterr().out


def test_drill_trust_on_a_folder_without_a_harness_exits_1(tmp_path, capsys):
    (tmp_path / "plain").mkdir()
    assert main(["trust", str(tmp_path / "plain")]) == 1
    assert "has no harness" in capsys.readouterr().err
    assert not (tmp_path / "home" / "trusted.json").exists()


@pytest.mark.parametrize(
    "argv", [["trust"], ["trust", "--list", "x"], ["trust", "x", "--revoke", "y"], ["trust", "/no/such/folder"]]
)
def test_drill_trust_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err


# -- drill kernel run ---------------------------------------------------------------------------------
def test_kernel_run_refuses_a_locked_card_and_never_sends_it_to_the_judge(deck, tmp_path, monkeypatch, capsys):
    """The judge process starts at once (it takes longest to warm up) but is given nothing and stopped."""
    from drill.kernel import client

    sent: list[object] = []
    monkeypatch.setattr(client.JudgeClient, "start", lambda self: sent.append("start"))
    monkeypatch.setattr(client.JudgeClient, "run", lambda self, *a, **k: sent.append(a))
    monkeypatch.setattr(client.JudgeClient, "abandon", lambda self: sent.append("abandon"))
    assert main(["kernel", "run", "mine", "--decks", str(deck)]) == 2
    err = capsys.readouterr().err
    assert "drill kernel run: kernel card mine runs Python from" in err and "which you have not trusted" in err
    assert sent == ["start", "abandon"]
    assert not (tmp_path / "CANARY").exists()


def test_kernel_run_refuses_in_a_real_process(deck, tmp_path):
    canary = tmp_path / "CANARY"
    env = {**os.environ, "DRILL_HOME": str(tmp_path / "home"), "DRILL_JUDGE_CPU": "1"}
    for argv in (
        ["kernel", "run", "mine"],
        ["kernel", "run", "mine", "--file", str(deck.parent / "kernels" / "mine.cu")],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "drill.cli", *argv, "--decks", str(deck)],
            capture_output=True,
            text=True,
            env=env,
            timeout=stretched(120),
        )
        assert done.returncode == 2, done.stderr
        assert "which you have not trusted" in done.stderr and "Traceback" not in done.stderr
    assert not canary.exists()
    trust.trust(deck.parent, tmp_path / "home")
    harness_of(deck).write_text(harness_of(deck).read_text() + "# edited after trusting\n")
    done = subprocess.run(
        [sys.executable, "-m", "drill.cli", "kernel", "run", "mine", "--decks", str(deck)],
        capture_output=True,
        text=True,
        env=env,
        timeout=stretched(120),
    )
    assert done.returncode == 2 and "changed since you trusted it" in done.stderr
    assert not canary.exists()


def test_once_trusted_the_judge_does_import_the_harness(deck, tmp_path):
    """The other side of the canary: it is a real one, and trust is what lets it run."""
    canary = tmp_path / "CANARY"
    trust.trust(deck.parent, tmp_path / "home")
    env = {**os.environ, "DRILL_HOME": str(tmp_path / "home"), "DRILL_JUDGE_CPU": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "drill.cli", "kernel", "run", "mine", "--json", "--decks", str(deck)],
        capture_output=True,
        text=True,
        env=env,
        timeout=stretched(300),
    )
    assert done.returncode in (0, 1), done.stderr
    assert canary.exists()
