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
from tests.conftest import stretched

missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
needs_torch = pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')")
one_judge = pytest.mark.xdist_group("triton-judge")  # one worker, so one judge child (cpu_judge) imports torch

ROOT = Path(__file__).resolve().parents[2]
LAYERNORM_ANSWER = ROOT / "answers" / "layernorm_backward.py"
CHEATS = ROOT / "tests" / "fixtures" / "cheats"


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"], deep=True)


def judged(judge, cards, card_id, source):
    return judge.run(kernel_job(cards.cards[card_id]), source, timeout=stretched(300))


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


@pytest.mark.parametrize("card_id", ["paged-decode-attention", "fused-cross-entropy"])
@pytest.mark.parametrize("which", ["starter", "solution"])
@needs_torch
@one_judge
def test_a_cards_starter_and_answer_are_correct_with_their_own_kernels_seen(cpu_judge, cards, card_id, which):
    card = cards.cards[card_id]
    verdict = judged(cpu_judge, cards, card_id, getattr(kernel_files(card), which).read_text())
    assert verdict.correct is True, (verdict.errors, [(c.name, c.message) for c in verdict.cases if not c.ok])
    [evidence] = verdict.evidence
    assert evidence.ok is True and "of your file's Triton kernels" in evidence.words
    assert "not yours" not in evidence.words


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


# -- paged decode attention -------------------------------------------------------------------------------------
PAGED_ANSWER = ROOT / "answers" / "paged_decode_attention.py"


def paged_answer_with(old: str, new: str) -> str:
    text = PAGED_ANSWER.read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_paged_decode_bytes_at_the_timed_shape_and_the_gqa_re_read():
    tokens = sum(2048 + (i * 2477) % 4096 for i in range(64))
    assert tokens == 254_560  # hand-derived from the harness's lengths
    shared = kernel_traffic.paged_decode_bytes(tokens, 8, 128, 2)
    assert shared == 2 * 254_560 * 8 * 128 * 2 == 1_042_677_760
    assert kernel_traffic.paged_decode_bytes_per_query_head(tokens, 32, 128, 2) == 4 * shared


@pytest.mark.parametrize(
    ("context", "page", "pages", "empty"),
    [(1, 16, 1, 15), (16, 16, 1, 0), (17, 16, 2, 15), (4097, 32, 129, 31), (6062, 16, 379, 2)],
)
def test_a_sequence_holds_whole_pages_and_wastes_less_than_one(context, page, pages, empty):
    assert kernel_traffic.paged_pages(context, page) == pages
    assert kernel_traffic.paged_empty_slots(context, page) == empty < page


def test_the_recall_cards_render_the_byte_counts_for_a_draw():
    from drill.cards.rendering import render

    paged = load_decks([paths.cards_dir() / "flashattention.yaml"]).cards["flashattention-ledger-paged-decode"]
    draw = {"model": "llama-3-8b", "batch": 64, "context": 4097, "page": 16, "gpu": "h200"}
    values = [a.value for a in render(paged, draw).answers]
    # hand-derived: 64 · 4097 tokens, K and V of 8 heads × 128 in bf16; 32 query heads re-read each 4 times;
    # 257 pages a sequence, 257 · 16 − 4097 = 15 empty slots each
    assert values[0] == 2 * 64 * 4097 * 8 * 128 * 2 and values[1] == 4 * values[0]
    assert values[2] == pytest.approx(values[0] / 4.8e12)
    assert values[3:] == [64 * 257, 64 * 15]

    norm = load_decks([paths.cards_dir() / "fusion.yaml"]).cards["fusion-ledger-layernorm-backward"]
    draw = {"model": "llama-2-7b", "tokens": 16384, "gpu": "h200"}
    values = [a.value for a in render(norm, draw).answers]
    elements = 16384 * 4096
    small = 4 * (2 * 16384 + 3 * 4096)
    assert values[0] == 5 * elements * 2 + small + 8 * 16384
    assert values[1] == 3 * elements * 2 + small + 4 * 512 * 4096 * 4  # 512 groups on 132 SMs
    assert values[2] == pytest.approx((values[0] - values[1]) / 4.8e12)


def test_the_paged_card_allows_only_scratch_buffers_and_sits_in_the_kernels_track(cards):
    import yaml

    card = cards.cards["paged-decode-attention"]
    consts = harness_constants(kernel_files(card).harness)
    assert consts["ENTRY"] == ("paged_decode_attention",) and consts["ALLOWED"] == ("allocation", "views", "fill")
    tracks = yaml.safe_load((paths.cards_dir() / "data" / "tracks.yaml").read_text())["tracks"]
    assert all(card.topic in t["topics"] for t in tracks if t["id"] in ("kernels", "inference"))


@needs_torch
@one_judge
def test_the_paged_answer_split_across_programs_with_empty_splits_is_correct(cpu_judge, cards):
    # a short floor for a split: on the interpreter's 4 "SMs" the 70-token sequence gets 6 splits, 4 of them empty
    source = paged_answer_with("MIN_SPLIT_TOKENS = 512", "MIN_SPLIT_TOKENS = 16")
    verdict = judged(cpu_judge, cards, "paged-decode-attention", source)
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]
    assert "merge_splits" in verdict.evidence[0].words


@needs_torch
@one_judge
def test_a_paged_kernel_that_keeps_the_last_pages_rows_past_the_end_is_wrong(cpu_judge, cards):
    source = paged_answer_with('        s = tl.where(valid[None, :], s, float("-inf"))\n', "")
    verdict = judged(cpu_judge, cards, "paged-decode-attention", source)
    assert verdict.correct is False
    assert [c.name for c in verdict.cases if not c.ok] != []
    assert all("elements wrong" in c.message for c in verdict.cases if not c.ok)


@needs_torch
@one_judge
def test_a_paged_kernel_that_takes_the_pages_as_contiguous_is_wrong(cpu_judge, cards):
    source = paged_answer_with(
        "page = tl.load(table_ptr + b * table_stride + t // PAGE, mask=valid, other=0).to(tl.int64)",
        "page = (tl.load(table_ptr + b * table_stride) + t // PAGE).to(tl.int64)",
    )
    verdict = judged(cpu_judge, cards, "paged-decode-attention", source)
    assert verdict.correct is False
    # a sequence of one page is right either way; the scattered pages of the longer ones are not
    assert "b2 kv2x4 d64 page16 len 17,5" in [c.name for c in verdict.cases if not c.ok]


@needs_torch
@one_judge
def test_gathering_the_pages_and_calling_sdpa_in_the_file_is_refused_with_the_op_and_line(cpu_judge, cards):
    verdict = judged(
        cpu_judge, cards, "paged-decode-attention", (CHEATS / "paged_decode_attention_sdpa.py").read_text()
    )
    assert verdict.correct is False and verdict.exit_code() == 1
    named = "not your kernel: torch ran aten.clamp (your line 18)"
    assert verdict.cases and all(named in c.message for c in verdict.cases), [c.message for c in verdict.cases]
    words = verdict.evidence[0].words
    assert verdict.evidence[0].ok is False and "aten.index" in words.split("allowed besides")[0]


# -- fused cross-entropy ----------------------------------------------------------------------------------------
CE_ANSWER = ROOT / "answers" / "fused_cross_entropy.py"


def ce_answer_with(old: str, new: str) -> str:
    text = CE_ANSWER.read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_cross_entropy_bytes_at_the_timed_shape():
    logits = kernel_traffic.logits_bytes(8192, 128256, 2)
    assert logits == 8192 * 128256 * 2 == 2_101_346_304  # 1.96 GiB
    assert kernel_traffic.cross_entropy_fused_bytes(8192, 128256, 2) == 3 * logits
    assert kernel_traffic.cross_entropy_stored_softmax_bytes(8192, 128256, 2) == 8 * logits  # 16 B against 6


def test_the_cross_entropy_card_allows_only_small_scratch_and_its_recall_card_renders():
    from drill.cards.rendering import render

    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards["fused-cross-entropy"]
    consts = harness_constants(kernel_files(card).harness)
    assert consts["ENTRY"] == ("cross_entropy",) and consts["ALLOWED"] == ("allocation", "views", "fill")
    recall = load_decks([paths.cards_dir() / "fusion.yaml"]).cards["fusion-ledger-fused-cross-entropy"]
    values = [a.value for a in render(recall, {"model": "llama-3-8b", "tokens": 8192, "gpu": "h200"}).answers]
    logits = 8192 * 128256 * 2
    assert values[:4] == [logits, 2 * logits, 8 * logits, 3 * logits]
    assert values[4] == pytest.approx(5 * logits / 4.8e12)


@needs_torch
@one_judge
def test_a_log_sum_exp_without_the_running_maximum_overflows_on_large_logits(cpu_judge, cards):
    source = ce_answer_with(
        's = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))',
        's = tl.where(m_new == float("-inf"), 0.0, s + tl.exp(x))',
    ).replace(
        'total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)',
        "total = tl.sum(s, axis=0)",
    )
    source = source.replace("lse = row_max + tl.log(total)", "lse = tl.log(total)")
    verdict = judged(cpu_judge, cards, "fused-cross-entropy", source)
    assert verdict.correct is False
    assert [c.name for c in verdict.cases if not c.ok] == ["3x700 large logits"]


@needs_torch
@one_judge
def test_a_gradient_that_leaves_out_the_small_probabilities_is_wrong(cpu_judge, cards):
    source = ce_answer_with(
        "g = (tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)) * inv_rows",
        "p = tl.exp(x - lse)\n        g = (tl.where(p > 1e-3, p, 0.0) - tl.where(cols == target, 1.0, 0.0)) * inv_rows",
    )
    verdict = judged(cpu_judge, cards, "fused-cross-entropy", source)
    assert verdict.correct is False
    assert any("grad" in c.message for c in verdict.cases if not c.ok)


@needs_torch
@one_judge
def test_f_cross_entropy_in_the_file_is_refused_with_the_op_and_line(cpu_judge, cards):
    verdict = judged(
        cpu_judge, cards, "fused-cross-entropy", (CHEATS / "fused_cross_entropy_torch_call.py").read_text()
    )
    assert verdict.correct is False and verdict.exit_code() == 1
    named = "not your kernel: torch ran aten._to_copy (your line 15)"
    assert verdict.cases and all(named in c.message for c in verdict.cases), [c.message for c in verdict.cases]
    assert "aten._log_softmax" in verdict.evidence[0].refused


# -- scan (CUDA) ------------------------------------------------------------------------------------------------
def test_scan_bytes_and_the_two_thirds_cap_of_reduce_then_scan():
    n = 1 << 28
    assert kernel_traffic.scan_one_pass_bytes(n, 4) == 8 * n == 2_147_483_648
    assert kernel_traffic.scan_reduce_then_scan_bytes(n, 4) == 12 * n
    assert kernel_traffic.scan_tiles(n, 4096) == 65_536 and kernel_traffic.scan_tiles(4097, 4096) == 2
    from drill.cards.rendering import render

    recall = load_decks([paths.cards_dir() / "cuda-reduction.yaml"]).cards["cuda-reduction-ledger-scan-passes"]
    values = [a.value for a in render(recall, {"log_n": 28, "tile": 4096, "gpu": "h200"}).answers]
    assert values[:4] == [12 * n, 8 * n, pytest.approx(2 / 3), 65_536]
    assert values[4] == pytest.approx(8 * n / 4.8e12)


def test_the_scan_card_allows_nothing_but_its_kernel_and_sets_block_and_items(cards):
    card = cards.cards["scan"]
    consts = harness_constants(kernel_files(card).harness)
    assert card.fields["language"] == "cuda" and consts["ENTRY"] == ("scan",)
    assert consts["ALLOWED"] == () and consts["LAUNCH_KEYS"] == ("block", "items")


@pytest.mark.parametrize("which", ["starter", "solution"])
def test_the_scan_starter_and_answer_compile_with_nvrtc_without_spills(cards, which):
    from drill.kernel_shared import nvrtc

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install nvidia-cuda-nvrtc-cu12)")
    text = getattr(kernel_files(cards.cards["scan"]), which).read_text()
    result = nvrtc.compile_cuda(text, "scan.cu", arch="sm_90")
    assert result.ok and result.errors == [], result.errors
    assert "0 bytes spill stores" in result.log and "Compiling entry function 'scan'" in result.log


def test_the_scan_answer_fits_four_blocks_a_multiprocessor_without_stack(cards):
    from drill.kernel_shared import nvrtc

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install nvidia-cuda-nvrtc-cu12)")
    text = kernel_files(cards.cards["scan"]).solution.read_text()
    result = nvrtc.compile_cuda(text, "scan.cu", arch="sm_90")
    (scan,) = [r for r in result.resources if r.name == "scan"]
    # 256 threads a block: 64 registers or fewer and under 57 KB of shared memory leave room for four blocks of
    # loads in flight on each multiprocessor; a stack frame would mean local memory traffic beside the 8 bytes an element
    assert scan.registers <= 64 and scan.shared_bytes < 57_000, (scan.registers, scan.shared_bytes)
    assert scan.stack_bytes == 0 and scan.spill_store_bytes == 0 and scan.spill_load_bytes == 0


@needs_torch
@one_judge
def test_the_scan_answer_on_a_cpu_is_compiled_and_said_to_be_unchecked(cpu_judge, cards):
    verdict = judged(cpu_judge, cards, "scan", kernel_files(cards.cards["scan"]).solution.read_text())
    assert verdict.compiled is True and verdict.errors == []
    assert verdict.correct is None and verdict.cases == []
