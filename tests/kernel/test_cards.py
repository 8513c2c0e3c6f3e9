"""Kernel cards: `drill check` on them, the files they name, drafts, and import hygiene."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.cards.model import Card
from drill.kernel import drafts
from drill.kernel.cards import (
    check_kernel_card,
    harness_constants,
    kernel_files,
)
from drill.kernel.job import kernel_job
from drill.kernel_shared import nvrtc

BUNDLED = (
    "reduce",
    "transpose",
    "softmax",
    "rmsnorm",
    "matmul",
    "attention",
    "layernorm-backward",
    "paged-decode-attention",
    "fused-cross-entropy",
    "scan",
    "fp8-block-gemm",
    "moe-grouped-gemm-kernel",
)


@pytest.fixture(scope="module")
def bundled():
    decks = load_decks([paths.cards_dir() / "kernels.yaml"], deep=True)
    return decks


def test_bundled_kernel_cards_pass_the_deep_check(bundled):
    assert bundled.problems == []
    assert sorted(bundled.cards) == sorted(BUNDLED)
    topics = {c.id: c.topic for c in bundled.cards.values()}
    assert topics == {
        "reduce": "cuda-reduction",
        "transpose": "smem-coalescing",
        "softmax": "triton-softmax",
        "rmsnorm": "fusion",
        "matmul": "gemm",
        "attention": "flashattention",
        "layernorm-backward": "fusion",
        "paged-decode-attention": "flashattention",
        "fused-cross-entropy": "fusion",
        "scan": "cuda-reduction",
        "fp8-block-gemm": "gemm",
        "moe-grouped-gemm-kernel": "gemm",
    }


@pytest.mark.parametrize("card_id", BUNDLED)
def test_each_card_has_its_files_and_a_complete_harness(bundled, card_id):
    card = bundled.cards[card_id]
    files = kernel_files(card)
    for path in (files.starter, files.solution, files.writeup, files.harness):
        assert path.is_file(), path
    consts = harness_constants(files.harness)
    assert consts["LANGUAGE"] == card.fields["language"]
    job = kernel_job(card)
    assert job["filename"] == files.starter.name and Path(job["harness"]).is_file()
    assert files.starter.read_text() != files.solution.read_text()


def kernel_deck(tmp_path, **override):
    """A deck with one kernel card whose files live beside it (kernels/, answers/)."""
    fields = {
        "language": "cuda",
        "starter": "mine.cu",
        "solution": "mine.cu",
        "writeup": "mine.md",
        "harness": "mine_harness.py",
        "target_pct": 70,
    }
    fields.update(override)
    root = tmp_path / "deck"
    (root / "kernels" / "harness").mkdir(parents=True)
    (root / "answers").mkdir()
    shutil.copy(paths.kernels_dir() / "reduce.cu", root / "kernels" / "mine.cu")
    shutil.copy(paths.answers_dir() / "reduce.cu", root / "answers" / "mine.cu")
    (root / "answers" / "mine.md").write_text("# why\n")
    shutil.copy(paths.kernels_dir() / "harness" / "reduce_harness.py", root / "kernels" / "harness" / "mine_harness.py")
    return Card(
        id="mine",
        kind="kernel",
        topic="cuda-reduction",
        prompt="p",
        answer="a",
        sources=("s",),
        fields=fields,
        path=root / "deck.yaml",
        line=3,
    )


def test_a_card_beside_its_own_files_checks_clean(tmp_path):
    assert check_kernel_card(kernel_deck(tmp_path)) == []


@pytest.mark.parametrize(
    "override, words",
    [
        ({"language": "opencl"}, "language must be one of cuda, triton"),
        ({"starter": "missing.cu"}, "starter file not found"),
        ({"harness": "nope.py"}, "harness file not found"),
        ({"language": "triton"}, "should end in .py for a triton card"),
        ({"target_pct": 0}, "target_pct must be above 0"),
    ],
)
def test_broken_cards_are_reported(tmp_path, override, words):
    problems = check_kernel_card(kernel_deck(tmp_path, **override))
    assert any(words in p for p in problems), problems


def test_a_harness_missing_a_function_is_reported(tmp_path):
    card = kernel_deck(tmp_path)
    harness = kernel_files(card).harness
    harness.write_text(harness.read_text().replace("def baseline(", "def base_line("))
    assert check_kernel_card(card) == ["harness mine_harness.py lacks `def baseline(...)`"]


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
def test_a_starter_that_does_not_compile_is_reported_with_its_line(tmp_path):
    card = kernel_deck(tmp_path)
    starter = kernel_files(card).starter
    lines = starter.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "atomicAdd(out, x[i]);" in line)
    lines[at] = lines[at].replace(";", "")
    starter.write_text("\n".join(lines) + "\n")
    [problem] = check_kernel_card(card)
    assert problem.startswith("starter mine.cu does not compile: line ")
    assert int(problem.split("line ")[1].split(":")[0]) in (at + 1, at + 2)


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
def test_a_kernel_under_another_name_is_reported(tmp_path):
    card = kernel_deck(tmp_path)
    solution = kernel_files(card).solution
    solution.write_text(solution.read_text().replace("reduce_sum(", "reduce_total("))
    assert check_kernel_card(card) == ['solution mine.cu has no `extern "C" __global__` kernel `reduce_sum`']


def test_a_bad_launch_line_is_reported(tmp_path):
    card = kernel_deck(tmp_path)
    starter = kernel_files(card).starter
    starter.write_text(starter.read_text().replace("// drill: block=256 grid=auto", "// drill: block=256 threads=9"))
    [problem] = check_kernel_card(card)
    assert "unknown launch key `threads`" in problem and problem.startswith("starter mine.cu line ")


# -- drafts -----------------------------------------------------------------------------------
def test_draft_round_trip(tmp_path):
    assert not drafts.has_draft(tmp_path, "reduce", "cu")
    assert drafts.load_draft(tmp_path, "reduce", "cu") is None
    path = drafts.save_draft(tmp_path, "reduce", "cu", "// mine\r\n")
    assert path == tmp_path / "drafts" / "reduce.cu"
    assert drafts.load_draft(tmp_path, "reduce", "cu") == "// mine\r\n"
    assert drafts.has_draft(tmp_path, "reduce", "cu")
    assert drafts.discard_draft(tmp_path, "reduce", "cu") is True
    assert drafts.discard_draft(tmp_path, "reduce", "cu") is False


def test_a_failed_save_keeps_the_old_draft_and_leaves_no_temp_file(tmp_path, monkeypatch):
    drafts.save_draft(tmp_path, "softmax", "py", "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(drafts.os, "replace", broken_replace)
    with pytest.raises(OSError):
        drafts.save_draft(tmp_path, "softmax", "py", "new")
    assert drafts.load_draft(tmp_path, "softmax", "py") == "old"
    assert [p.name for p in (tmp_path / "drafts").iterdir()] == ["softmax.py"]


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden"])
def test_draft_names_stay_inside_the_drafts_folder(tmp_path, bad):
    with pytest.raises(ValueError):
        drafts.draft_path(tmp_path, bad, "cu")


# -- layers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "module",
    [
        "drill.kernel.client",
        "drill.kernel.cards",
        "drill.cli.kernel",
        "drill.kernel.drafts",
        "drill.kernel.verdict",
        "drill.judge.runtime",
    ],
)
def test_the_client_side_imports_no_gpu_stack_and_no_ui(module):
    code = f"import sys, {module}; print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert not loaded & {"torch", "triton", "cupy", "textual", "numpy"}
