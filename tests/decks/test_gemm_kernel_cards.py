"""The kernel cards for an FP8 block-scaled GEMM and a mixture-of-experts grouped GEMM: the judge on the CPU (Triton
interpreter) credits the bundled starters and answers, refuses files that hand the work to torch and files that are
wrong where the cards' lessons lie; the deck entries, harness allowances and recall cards; the counts behind them."""

import importlib.util
from pathlib import Path

import pytest

from drill import paths
from drill.calc import block_scales, gemm, grouped_gemm
from drill.calc.expressions import FUNCTIONS
from drill.cards.loader import load_decks
from drill.cards.rendering import render
from drill.judge.calibration import FP8_CEILING
from drill.kernel.cards import harness_constants, kernel_files
from drill.kernel.job import kernel_job
from tests.conftest import stretched

missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
needs_torch = pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')")
one_judge = pytest.mark.xdist_group("triton-judge")  # one worker, so one judge child (cpu_judge) imports torch

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "fixtures" / "cheats"
FP8 = "fp8-block-gemm"
MOE = "moe-grouped-gemm-kernel"


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"], deep=True)


def judged(judge, cards, card_id, source):
    return judge.run(kernel_job(cards.cards[card_id]), source, timeout=stretched(300))


def answer_with(card_id: str, old: str, new: str) -> str:
    text = kernel_files(load_decks([paths.cards_dir() / "kernels.yaml"]).cards[card_id]).solution.read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


def wrong_cases(verdict):
    return [(c.name, c.message) for c in verdict.cases if not c.ok]


# -- the deck entries -------------------------------------------------------------------------------------------
def test_both_cards_pass_the_deep_check_and_allow_only_scratch_buffers(cards):
    assert cards.problems == []
    for card_id, entry in ((FP8, ("fp8_block_matmul",)), (MOE, ("grouped_matmul",))):
        card = cards.cards[card_id]
        assert card.kind == "kernel" and card.fields["language"] == "triton" and card.topic == "gemm"
        files = kernel_files(card)
        consts = harness_constants(files.harness)
        assert consts["LANGUAGE"] == "triton" and consts["ENTRY"] == entry
        assert consts["ALLOWED"] == ("allocation", "views", "fill")  # no copies: a result made elsewhere cannot land
        assert files.starter.read_text() != files.solution.read_text()


def test_the_fp8_card_is_scored_against_fp8s_ceiling_and_the_moe_card_against_the_matmul_ceiling(cards):
    # a bf16 matmul's ceiling is one an FP8 kernel may pass: the FP8 harness names FP8's own
    fp8 = harness_constants(kernel_files(cards.cards[FP8]).harness)
    assert fp8["BOUND"] == "compute" and "flops" in fp8["__functions__"]
    assert fp8["COMPUTE_CEILING"] == FP8_CEILING.key
    moe = harness_constants(kernel_files(cards.cards[MOE]).harness)
    assert moe["BOUND"] == "compute" and "flops" in moe["__functions__"]


def test_the_cards_and_their_recall_cards_are_in_the_kernels_track(cards):
    import yaml

    tracks = yaml.safe_load((paths.cards_dir() / "data" / "tracks.yaml").read_text())["tracks"]
    [kernels] = [t for t in tracks if t["id"] == "kernels"]
    recall = load_decks([paths.cards_dir() / "gemm.yaml"]).cards
    for recall_id in ("gemm-shape-fp8-block-scales", "gemm-ledger-fp8-block-scales", "gemm-ledger-moe-grouped-waves"):
        assert recall[recall_id].sources and recall[recall_id].topic in kernels["topics"]
    assert cards.cards[FP8].topic in kernels["topics"] and cards.cards[MOE].topic in kernels["topics"]


# -- the counts -------------------------------------------------------------------------------------------------
def test_deepseek_v3_dense_gate_proj_has_a_144_by_56_scale_tensor():
    # DeepSeek-V3 config.json: intermediate_size 18432, hidden_size 7168, weight_block_size [128, 128]
    assert block_scales.block_scale_count(18432, 7168) == 144 * 56 == 8064
    assert block_scales.block_scale_share(18432, 7168) == pytest.approx(4 / 16384)
    # activations: 1 x 128 tiles, a row of 7168 has 56 scales
    assert block_scales.block_scale_count(4096, 7168, 1, 128) == 4096 * 56
    assert block_scales.block_scale_share(4096, 7168, 1, 128) == pytest.approx(4 / 128)
    assert block_scales.block_scale_count(200, 300) == 2 * 3  # partial blocks count whole


def test_one_expert_is_one_gemm_in_waves_as_nvidias_guide_counts_them():
    # Matrix Multiplication Background User's Guide: an A100 (108 SMs) runs one 256 x 128 tile per SM
    for rows, n in ((1728, 1024), (2048, 4096)):
        tiles = gemm.gemm_tiles(rows, n, 256, 128)
        assert grouped_gemm.moe_loop_waves(rows, 1, n, 256, 128, 108) == gemm.gemm_waves(tiles, 108)
        assert grouped_gemm.moe_grouped_waves(rows, 1, n, 256, 128, 108) == gemm.gemm_waves(tiles, 108)


def test_many_small_experts_waste_waves_in_a_loop_and_a_few_large_ones_do_not():
    # the kernel card's shapes on an H200 (132 SMs), 128 x 128 tiles, balanced: 384 rows x 11 column tiles an expert
    assert grouped_gemm.moe_loop_waves(24576, 64, 1408, 128, 128, 132) == 64
    assert grouped_gemm.moe_grouped_waves(24576, 64, 1408, 128, 128, 132) == 16  # 64 x 33 tiles = 2112
    # Mixtral's: 1,024 rows x 112 column tiles = 896 tiles, 7 waves each
    assert grouped_gemm.moe_loop_waves(8192, 8, 14336, 128, 128, 132) == 56
    assert grouped_gemm.moe_grouped_waves(8192, 8, 14336, 128, 128, 132) == 55


@pytest.mark.parametrize("imbalance", [1, 1.5, 4, 64])
def test_skewed_groups_keep_every_row_and_the_hottest_is_the_given_multiple_of_the_mean(imbalance):
    sizes = grouped_gemm.moe_group_sizes(24576, 64, imbalance)
    assert sum(sizes) == 24576 and len(sizes) == 64
    assert sizes[0] == round(imbalance * 384) and max(sizes) == sizes[0]
    tiles = grouped_gemm.moe_row_tiles(24576, 64, 128, imbalance)
    assert 24576 / 128 <= tiles <= 24576 // 128 + 64  # at most one partial tile a group


def test_skew_barely_moves_the_grouped_count():
    balanced = grouped_gemm.moe_grouped_waves(24576, 64, 1408, 128, 128, 132)
    skewed = grouped_gemm.moe_grouped_waves(24576, 64, 1408, 128, 128, 132, 4)
    assert skewed - balanced <= 1


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: grouped_gemm.moe_group_sizes(100, 4, 0.5), "imbalance"),
        (lambda: grouped_gemm.moe_group_sizes(100, 4, 5), "imbalance"),
        (lambda: grouped_gemm.moe_group_sizes(0, 4), "rows"),
        (lambda: grouped_gemm.moe_row_tiles(100, 4, 0), "block_m"),
        (lambda: block_scales.block_scale_count(10, 10, 0, 128), "row_block"),
        (lambda: block_scales.block_scale_share(10, 10, scale_bytes=0), "scale_bytes"),
    ],
)
def test_impossible_arguments_are_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_cards_can_call_the_counts():
    for table in (block_scales.CARD_FUNCTIONS, grouped_gemm.CARD_FUNCTIONS):
        for name, fn in table.items():
            assert FUNCTIONS[name] is fn


def test_the_recall_cards_render_the_counts_for_a_draw():
    recall = load_decks([paths.cards_dir() / "gemm.yaml"]).cards
    waves = recall["gemm-ledger-moe-grouped-waves"]
    # DeepSeek-V3: 4,096 tokens x 8 = 32,768 rows, 256 experts of 128 rows, 16 column tiles of 2048 each:
    # a loop of 256 one-wave GEMMs against ⌈4096 / 132⌉ = 32 waves grouped
    shown = render(waves, {"model": "deepseek-v3", "tokens": 4096, "imbalance": 1, "gpu": "h200"})
    assert [a.value for a in shown.answers] == [32768, 128, 256, 256, 32]
    assert "The loop takes\n256\nwaves, the grouped launch\n32:\n8.0×" in shown.answer
    # Mixtral, skewed: the hot expert 4 × 1,024 rows, the other seven 4,096 / 7 each
    shown = render(waves, {"model": "mixtral-8x7b", "tokens": 4096, "imbalance": 4, "gpu": "h100-sxm"})
    values = [a.value for a in shown.answers]
    assert values[:2] == [8192, 4096]
    assert values[3] == grouped_gemm.moe_loop_waves(8192, 8, 14336, 128, 128, 132, 4)

    scales = recall["gemm-ledger-fp8-block-scales"]
    shown = render(scales, {"model": "deepseek-v3", "tokens": 4096})
    assert [a.value for a in shown.answers][:2] == [4096 * 56, 144 * 56]
    assert shown.answers[2].value == pytest.approx(4 / 16384)


# -- the judge on a CPU, for real -------------------------------------------------------------------------------
@pytest.mark.parametrize("card_id", [FP8, MOE])
@pytest.mark.parametrize("which", ["starter", "solution"])
@needs_torch
@one_judge
def test_the_starters_and_answers_are_correct_with_their_own_kernels_seen(cpu_judge, cards, card_id, which):
    source = getattr(kernel_files(cards.cards[card_id]), which).read_text()
    verdict = judged(cpu_judge, cards, card_id, source)
    assert verdict.correct is True, (verdict.errors, wrong_cases(verdict))
    assert len(verdict.cases) == 4
    [evidence] = verdict.evidence
    assert evidence.ok is True and evidence.where == "cpu"
    assert "of your file's Triton kernels" in evidence.words and "not yours" not in evidence.words


@needs_torch
@one_judge
def test_one_scale_for_the_whole_of_k_is_wrong(cpu_judge, cards):
    # the first block's scales applied to every step: right only when K fits one block of 128
    source = answer_with(FP8, "a_s = tl.load(a_scale_ptrs + kb)", "a_s = tl.load(a_scale_ptrs)")
    verdict = judged(cpu_judge, cards, FP8, source)
    assert verdict.correct is False
    assert [name for name, _ in wrong_cases(verdict)] == ["40x130x300", "5x257x200"], wrong_cases(verdict)


@needs_torch
@one_judge
def test_a_weight_scale_per_column_instead_of_per_128_columns_is_wrong(cpu_judge, cards):
    source = answer_with(
        FP8, "b_scale_ptrs = b_scale_ptr + (rn // SCALE_BLOCK) * k_blocks", "b_scale_ptrs = b_scale_ptr + rn * k_blocks"
    )
    verdict = judged(cpu_judge, cards, FP8, source)
    assert verdict.correct is False
    assert "out of bound" in wrong_cases(verdict)[0][1] or "wrote past" in wrong_cases(verdict)[0][1]


@needs_torch
@one_judge
def test_dequantising_and_calling_torch_matmul_in_the_file_is_refused_with_the_op(cpu_judge, cards):
    verdict = judged(cpu_judge, cards, FP8, (CHEATS / "fp8_block_gemm_torch_matmul.py").read_text())
    assert verdict.correct is False and verdict.exit_code() == 1
    refused = [message for _, message in wrong_cases(verdict)]
    assert len(refused) == len(verdict.cases) and all("not your kernel: " in m for m in refused), refused
    assert verdict.evidence[0].ok is False


@needs_torch
@one_judge
def test_a_schedule_without_each_groups_partial_last_tile_is_wrong(cpu_judge, cards):
    # whole tiles only: the rows of a group past its last multiple of BLOCK_M are never computed
    source = answer_with(MOE, "tl.cdiv(ends - starts, BLOCK_M)", "(ends - starts) // BLOCK_M")
    verdict = judged(cpu_judge, cards, MOE, source)
    assert verdict.correct is False
    wrong = [name for name, _ in wrong_cases(verdict)]
    assert wrong == [c.name for c in verdict.cases], wrong_cases(verdict)  # every case has a group of 1 to 15 rows


@needs_torch
@one_judge
def test_a_schedule_that_leaves_out_empty_experts_wrongly_is_wrong(cpu_judge, cards):
    # counting experts whose prefix sum is below the tile (not at or below) gives tile 0 of expert e to e - 1
    source = answer_with(
        MOE, "expert = tl.sum((through <= tile).to(tl.int32), 0)", "expert = tl.sum((through < tile).to(tl.int32), 0)"
    )
    verdict = judged(cpu_judge, cards, MOE, source)
    assert verdict.correct is False, "an off-by-one schedule passed"


@needs_torch
@one_judge
def test_a_loop_of_torch_matmul_in_the_file_is_refused_with_the_op(cpu_judge, cards):
    verdict = judged(cpu_judge, cards, MOE, (CHEATS / "moe_grouped_gemm_torch_loop.py").read_text())
    assert verdict.correct is False and verdict.exit_code() == 1
    refused = [message for _, message in wrong_cases(verdict)]
    assert len(refused) == len(verdict.cases) and all("not your kernel: " in m for m in refused), refused
