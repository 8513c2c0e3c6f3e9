"""On a real GPU: the kernel cards for LayerNorm backward, paged decode attention, fused cross-entropy and scan
(`pytest -m gpu`).

Each bundled starter and answer is correct and timed with the kernels of its own file seen; the answer beats
its starter and torch's own op at the timed shape; a file that hands the work to torch is refused by the ATen
kernel's name; an answer wrong only at the timed size is wrong there.
"""

import json
import os
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job

pytestmark = pytest.mark.gpu

CHEATS = Path(__file__).parents[1] / "fixtures" / "cheats"
CARDS = ("layernorm-backward", "paged-decode-attention", "fused-cross-entropy", "scan")
CHEAT_FILES = {
    "layernorm-backward": "layernorm_backward_torch_call.py",
    "paged-decode-attention": "paged_decode_attention_sdpa.py",
    "fused-cross-entropy": "fused_cross_entropy_torch_call.py",
}
RESULTS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    client = JudgeClient(data_dir=tmp_path_factory.mktemp("data"))
    if not client.info().get("gpu"):
        client.close()
        pytest.skip("the judge sees no GPU here")
    yield client
    client.close()
    folder = os.environ.get("DRILL_GPU_LOG_DIR")
    if folder:
        Path(folder, "gpu_new_kernel_cards.json").write_text(json.dumps(RESULTS, indent=1))


def judged(judge, cards, card_id, source, key, timing="first"):
    verdict = judge.run(kernel_job(cards[card_id]), source, timeout=300, timing=timing)
    RESULTS[key] = verdict.to_json()
    return verdict


def text(cards, card_id, which):
    return getattr(kernel_files(cards[card_id]), which).read_text()


@pytest.mark.parametrize("card_id", CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_files_are_correct_timed_and_credited_with_their_own_kernels(judge, cards, card_id, which):
    verdict = judged(judge, cards, card_id, text(cards, card_id, which), f"{card_id}:{which}")
    assert verdict.errors == [] and verdict.correct is True, [(c.name, c.message) for c in verdict.cases]
    assert [e.phase for e in verdict.evidence] == ["check", "timing"]
    for evidence in verdict.evidence:
        assert evidence.ok is True and evidence.where == "gpu", evidence
        assert " from your file (" in evidence.words and "not yours" not in evidence.words
    assert verdict.gbps and verdict.pct_of_ceiling is not None and verdict.vs_torch is not None


@pytest.mark.parametrize("card_id", CARDS)
def test_the_answer_beats_its_starter_and_torch(judge, cards, card_id):
    key = f"{card_id}:solution"
    answer = RESULTS.get(key) or judged(judge, cards, card_id, text(cards, card_id, "solution"), key).to_json()
    key = f"{card_id}:starter"
    starter = RESULTS.get(key) or judged(judge, cards, card_id, text(cards, card_id, "starter"), key).to_json()
    assert answer["gbps"] > 1.3 * starter["gbps"]
    assert answer["vs_torch"] > 1.0  # the cards' targets are bench/kernels.py's


@pytest.mark.parametrize("card_id", sorted(CHEAT_FILES))  # a CUDA file cannot call torch
def test_a_file_that_lets_torch_do_the_work_is_refused_by_the_kernels_name(judge, cards, card_id):
    source = (CHEATS / CHEAT_FILES[card_id]).read_text()
    verdict = judged(judge, cards, card_id, source, f"{card_id}:torch")
    assert verdict.correct is False and verdict.exit_code() == 1
    refused = [c.message for c in verdict.cases if not c.ok]
    assert len(refused) == len(verdict.cases)
    assert "not your kernel: " in refused[0] and "at::native::" in refused[0]
    assert verdict.evidence[0].ok is False and verdict.timings == []


def test_a_layernorm_backward_that_drops_the_last_row_group_only_at_scale_is_wrong_at_the_timed_size(judge, cards):
    # the last group's partial sums are left out above 10,000 rows: never in the checked cases (2,000 rows at
    # most), always at the timed 16384 × 4096
    source = text(cards, "layernorm-backward", "solution").replace(
        "sum_partials[(strips,)](part_w, part_b, dweight, dbias, programs, cols,",
        "sum_partials[(strips,)](part_w, part_b, dweight, dbias, programs - (rows > 10000), cols,",
    )
    assert "rows > 10000" in source
    verdict = judged(judge, cards, "layernorm-backward", source, "layernorm-backward:late")
    assert verdict.correct is False and verdict.exit_code() == 1
    failed = {c.name: c.message for c in verdict.cases if not c.ok}
    assert list(failed) == ["timing 16384x4096"], failed
    assert failed["timing 16384x4096"].startswith("wrong at the timed size 16384x4096, though the small cases passed: ")
    assert "dw" in failed["timing 16384x4096"]
    assert verdict.timings == [] and verdict.pct_of_ceiling is None


def test_a_scan_whose_look_back_stops_at_the_first_aggregate_is_wrong(judge, cards):
    # any published word ends the walk, so a predecessor's own total is taken for the whole prefix before it
    prefix_only = "__ballot_sync(FULL, flag == INCLUSIVE)"
    assert prefix_only in text(cards, "scan", "solution")
    source = text(cards, "scan", "solution").replace(prefix_only, "__ballot_sync(FULL, flag != 0ull)")
    verdict = judged(judge, cards, "scan", source, "scan:short-look-back", timing="none")
    assert verdict.correct is False and verdict.exit_code() == 1
    # one tile of 4,096 has no predecessor; from three tiles on, a tile that stops early misses earlier totals
    assert [c.ok for c in verdict.cases][:6] == [True] * 6
    assert any("out[" in c.message for c in verdict.cases if not c.ok)
