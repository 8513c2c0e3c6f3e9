"""The kernel cards for a normalisation backward pass: the judge on the CPU (Triton interpreter) credits the
bundled starter and answer, refuses a file that hands the work to torch and files that are wrong where the card's
lesson lies; the card's deck entry, harness allowance and recall card; the byte counts behind them."""

import importlib.util
from pathlib import Path

import pytest

from drill import paths
from drill.calc import kernel_traffic
from drill.calc.expressions import FUNCTIONS
from drill.cards.loader import load_decks
from drill.kernel.cards import harness_constants, kernel_files
from drill.kernel.job import kernel_job

missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
needs_torch = pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')")
one_judge = pytest.mark.xdist_group("triton-judge")  # one worker, so one judge child (cpu_judge) imports torch

ROOT = Path(__file__).resolve().parents[1]
LAYERNORM_ANSWER = ROOT / "answers" / "layernorm_backward.py"
CHEATS = ROOT / "tests" / "fixtures" / "cheats"


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"], deep=True)


def judged(judge, cards, card_id, source):
    return judge.run(kernel_job(cards.cards[card_id]), source, timeout=300)


def answer_with(old: str, new: str) -> str:
    text = LAYERNORM_ANSWER.read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


# -- the deck entry ---------------------------------------------------------------------------------------------
def test_the_card_passes_the_deep_check_and_allows_only_scratch_buffers(cards):
    assert cards.problems == []
    card = cards.cards["layernorm-backward"]
    assert card.kind == "kernel" and card.fields["language"] == "triton"
    files = kernel_files(card)
    consts = harness_constants(files.harness)
    assert consts["LANGUAGE"] == "triton" and consts["ENTRY"] == ("layernorm_backward",)
    assert consts["ALLOWED"] == ("allocation", "views", "fill")  # no copies: a gradient made elsewhere cannot land
    assert files.starter.read_text() != files.solution.read_text()


def test_the_card_and_its_recall_card_are_in_the_kernels_track(cards):
    import yaml

    tracks = yaml.safe_load((paths.cards_dir() / "data" / "tracks.yaml").read_text())["tracks"]
    [kernels] = [t for t in tracks if t["id"] == "kernels"]
    recall = load_decks([paths.cards_dir() / "fusion.yaml"]).cards["fusion-ledger-layernorm-backward"]
    assert recall.kind == "memory_ledger" and recall.sources
    assert recall.topic in kernels["topics"]
    assert cards.cards["layernorm-backward"].topic in kernels["topics"]


# -- the byte counts --------------------------------------------------------------------------------------------
def test_layernorm_backward_bytes_at_the_timed_shape():
    rows, cols = 16384, 4096
    small = 4 * (2 * rows + 3 * cols)  # hand-derived: mean, rstd; γ, dγ, dβ in float32
    assert kernel_traffic.layernorm_backward_floor_bytes(rows, cols, 4) == 12 * rows * cols + small
    assert kernel_traffic.layernorm_backward_two_kernel_bytes(rows, cols, 4) == 20 * rows * cols + small + 8 * rows
    # 132 SMs, 4 groups each: ⌈16384 / 528⌉ = 32 rows a group, 512 groups
    assert kernel_traffic.layernorm_backward_groups(rows, 132) == 512
    assert kernel_traffic.layernorm_backward_scratch_bytes(rows, cols, 132) == 512 * cols * 4 * 2 * 2
    fused = kernel_traffic.layernorm_backward_fused_bytes(rows, cols, 4, 132)
    assert 0.04 < fused / kernel_traffic.layernorm_backward_floor_bytes(rows, cols, 4) - 1 < 0.045


def test_fewer_rows_than_groups_give_one_row_a_group_and_the_scratch_share_grows_as_rows_shrink():
    assert kernel_traffic.layernorm_backward_groups(100, 132) == 100
    share = [
        kernel_traffic.layernorm_backward_scratch_bytes(r, 4096, 132)
        / kernel_traffic.layernorm_backward_floor_bytes(r, 4096, 2)
        for r in (4096, 16384, 65536)
    ]
    assert share[0] > share[1] > share[2]


@pytest.mark.parametrize("bad", [{"rows": 0}, {"cols": -1}, {"elem_bytes": 0}])
def test_impossible_sizes_are_refused_by_name(bad):
    args = {"rows": 8, "cols": 8, "elem_bytes": 2} | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        kernel_traffic.layernorm_backward_floor_bytes(**args)


def test_cards_can_call_the_byte_counts():
    for name in kernel_traffic.CARD_FUNCTIONS:
        assert FUNCTIONS[name] is kernel_traffic.CARD_FUNCTIONS[name]


# -- the judge on a CPU, for real -------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["starter", "solution"])
@needs_torch
@one_judge
def test_the_starter_and_the_answer_are_correct_with_their_own_kernels_seen(cpu_judge, cards, which):
    card = cards.cards["layernorm-backward"]
    verdict = judged(cpu_judge, cards, "layernorm-backward", getattr(kernel_files(card), which).read_text())
    assert verdict.correct is True, (verdict.errors, [(c.name, c.message) for c in verdict.cases if not c.ok])
    assert [c.name for c in verdict.cases][-1] == "23x300 mean 10000"
    [evidence] = verdict.evidence
    assert evidence.ok is True and evidence.where == "cpu"
    assert "of your file's Triton kernels" in evidence.words and "not yours" not in evidence.words


@needs_torch
@one_judge
def test_the_answers_streamed_path_for_long_rows_is_correct(cpu_judge, cards):
    source = answer_with("WHOLE_ROW_MAX = 8192", "WHOLE_ROW_MAX = 64")
    verdict = judged(cpu_judge, cards, "layernorm-backward", source)
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]
    assert "rows_streamed" in verdict.evidence[0].words


@needs_torch
@one_judge
def test_torchs_layernorm_backward_in_the_file_is_refused_with_the_op_and_line(cpu_judge, cards):
    verdict = judged(cpu_judge, cards, "layernorm-backward", (CHEATS / "layernorm_backward_torch_call.py").read_text())
    assert verdict.correct is False and verdict.exit_code() == 1
    named = "not your kernel: torch ran aten.native_layer_norm_backward (your line 14)"
    assert verdict.cases and all(not c.ok for c in verdict.cases)
    # torch's own backward (x·a + b, the mean folded into b) also loses x̂'s digits around 10⁴: wrong there anyway
    refused = [c.message for c in verdict.cases if c.name != "23x300 mean 10000"]
    assert refused and all(named in message for message in refused), refused
    assert verdict.evidence[0].ok is False and "aten.native_layer_norm_backward" in verdict.evidence[0].refused


@needs_torch
@one_judge
def test_scaling_before_subtracting_the_mean_is_wrong_on_activations_far_from_zero(cpu_judge, cards):
    source = answer_with(
        "        xhat = tl.where(mask, (x - mean) * rstd, 0.0)\n        g = dy * w\n        mean_g",
        "        xhat = tl.where(mask, x * rstd - mean * rstd, 0.0)\n        g = dy * w\n        mean_g",
    )
    verdict = judged(cpu_judge, cards, "layernorm-backward", source)
    assert verdict.correct is False
    wrong = [c.name for c in verdict.cases if not c.ok]
    assert wrong == ["23x300 mean 10000"], [(c.name, c.message) for c in verdict.cases]


@needs_torch
@one_judge
def test_a_second_stage_that_drops_the_last_groups_partial_sums_is_wrong(cpu_judge, cards):
    source = answer_with(
        "sum_partials[(strips,)](part_w, part_b, dweight, dbias, programs, cols,",
        "sum_partials[(strips,)](part_w, part_b, dweight, dbias, max(1, programs - 1), cols,",
    )
    verdict = judged(cpu_judge, cards, "layernorm-backward", source)
    assert verdict.correct is False
    bad = [c for c in verdict.cases if not c.ok]
    assert any("300x17" == c.name and "dw" in c.message for c in bad), [(c.name, c.message) for c in bad]
