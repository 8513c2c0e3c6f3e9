"""Triton cards judged for real on a CPU: the judge child runs them under the Triton interpreter."""

import importlib.util

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.job import kernel_job
from tests.conftest import stretched

missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
pytestmark = [
    pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')"),
    pytest.mark.xdist_group("triton-judge"),  # one worker, so one judge child (cpu_judge) imports torch and triton
]


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(cpu_judge):
    return cpu_judge


def run(judge, cards, card_id, source):
    return judge.run(kernel_job(cards[card_id]), source, timeout=stretched(120))


@pytest.mark.parametrize("card_id", ["softmax", "rmsnorm", "matmul", "attention"])
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_triton_files_are_correct_under_the_interpreter(judge, cards, card_id, which):
    source = getattr(kernel_files(cards[card_id]), which).read_text()
    verdict = run(judge, cards, card_id, source)
    assert verdict.errors == [] and verdict.compiled is True
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]
    assert len(verdict.cases) >= 4 and verdict.gbps is None
    assert any("no GPU" in n for n in verdict.not_checked)
    assert verdict.exit_code() == 0


def solution(cards, card_id):
    return kernel_files(cards[card_id]).solution.read_text()


def run_edited(judge, cards, card_id, old, new):
    """Judge the card's answer with `old` replaced by `new` (which must be there)."""
    good = solution(cards, card_id)
    assert old in good, old
    return run(judge, cards, card_id, good.replace(old, new, 1))


def failed_cases(verdict):
    return {c.name: c.message for c in verdict.cases if not c.ok}


def test_softmax_without_the_max_subtraction_overflows(judge, cards):
    verdict = run_edited(judge, cards, "softmax", "x = x - tl.max(x, axis=0)", "x = x")
    assert verdict.correct is False and verdict.exit_code() == 1
    failed = failed_cases(verdict)
    assert list(failed) == ["7x777 large logits"]
    assert "NaN" in failed["7x777 large logits"]


def test_softmax_with_an_off_by_one_mask_is_caught(judge, cards):
    verdict = run_edited(
        judge, cards, "softmax", "mask = cols < n_cols\n    x = tl.load", "mask = cols <= n_cols\n    x = tl.load"
    )
    assert verdict.correct is False
    by_name = {c.name: c for c in verdict.cases}
    assert by_name["1x1"].ok  # a one-column row fills its power-of-two block exactly
    # the last row writes one element past the output, into the guard zone after it
    assert by_name["3x33"].message.startswith("wrote past the end of output 1: element 99 (the output has 99)")


def test_rmsnorm_dividing_by_the_block_instead_of_the_row_length(judge, cards):
    verdict = run_edited(judge, cards, "rmsnorm", "tl.sum(x * x, axis=0) / n_cols", "tl.sum(x * x, axis=0) / BLOCK")
    assert verdict.correct is False
    assert {c.name for c in verdict.cases if c.ok} == {"1x1"}  # only a power-of-two row length survives


def test_a_matmul_that_ignores_the_tail_of_k_is_wrong(judge, cards):
    verdict = run_edited(
        judge, cards, "matmul", "for k in range(0, tl.cdiv(K, BLOCK_K)):", "for k in range(0, K // BLOCK_K):"
    )
    assert verdict.correct is False
    failed = failed_cases(verdict)
    # K = 1, 65, 100 and 130 all leave a tail after the 32-wide steps the interpreter runs
    assert set(failed) == {"1x1x1 float16", "17x33x65 float16", "40x24x100 float16", "16x70x130 float16"}
    assert "elements wrong" in failed["17x33x65 float16"]


def test_attention_that_forgets_the_causal_mask_on_the_diagonal_is_wrong(judge, cards):
    verdict = run_edited(
        judge,
        cards,
        "attention",
        "keep = (offs_m[:, None] >= keys[None, :]) & (keys[None, :] < S)",
        "keep = keys[None, :] < S",
    )
    assert verdict.correct is False
    assert {c.name for c in verdict.cases if c.ok} == {"b1 h1 s1 d64"}  # one query sees one key either way


def test_attention_without_the_running_maximum_overflows_on_large_scores(judge, cards):
    verdict = run_edited(
        judge, cards, "attention", "m_new = tl.maximum(m_i, tl.max(scores, 1))", "m_new = tl.zeros_like(m_i)"
    )
    assert verdict.correct is False
    failed = failed_cases(verdict)
    assert list(failed) == ["b1 h1 s40 d64 large logits"]


def test_a_syntax_error_is_a_build_error_with_its_line(judge, cards):
    lines = solution(cards, "softmax").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("def softmax("))
    lines[at] = lines[at].rstrip(":")
    verdict = run(judge, cards, "softmax", "\n".join(lines))
    assert verdict.compiled is False and verdict.correct is None
    assert verdict.messages[0]["line"] == at + 1


def test_an_exception_in_the_learners_code_names_the_line_and_case(judge, cards):
    lines = solution(cards, "softmax").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "rows, cols = x.shape")
    lines.insert(at + 1, "    raise ValueError('not today')")
    verdict = run(judge, cards, "softmax", "\n".join(lines))
    assert verdict.correct is False
    [error] = verdict.errors
    assert error == f"case 1x1: line {at + 2}: ValueError: not today"


def test_a_file_without_the_entry_point_is_refused(judge, cards):
    source = solution(cards, "rmsnorm").replace("def rmsnorm(", "def rms_norm(")
    verdict = run(judge, cards, "rmsnorm", source)
    assert verdict.compiled is False
    assert "must define `rmsnorm`" in verdict.messages[0]["message"]


def test_prints_in_the_learners_file_do_not_break_the_judge(judge, cards):
    source = solution(cards, "softmax").replace(
        "    rows, cols = x.shape", '    print(\'{"event": "finished"}\')\n    rows, cols = x.shape'
    )
    verdict = run(judge, cards, "softmax", source)
    assert verdict.correct is True and len(verdict.cases) >= 5


def test_a_file_that_changes_its_judge_passes_nothing_and_the_judge_is_replaced(judge, cards):
    # a wrong softmax (no division) that also makes the kit's comparison always agree
    cheat = "from drill.judge.torch_kit import Kit, Check\nKit.allclose = lambda self, got, ref, **kw: Check(True, 'fine')\n"
    good = solution(cards, "softmax")
    wrong = good.replace("import torch\n", "import torch\n" + cheat, 1)
    assert wrong != good
    first_pid = judge.pid
    verdict = run(judge, cards, "softmax", wrong)
    assert verdict.correct is False and verdict.exit_code() == 1
    assert any(
        "the file changed the judge's own code (drill.judge.torch_kit.Kit.allclose)" in e for e in verdict.errors
    )
    honest = run(judge, cards, "softmax", good)  # a fresh judge, whose comparison is its own again
    assert judge.pid != first_pid
    assert honest.correct is True and honest.errors == []
