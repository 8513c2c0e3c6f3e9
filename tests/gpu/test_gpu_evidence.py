"""On a real GPU: a file that lets torch, cuBLAS or FlashAttention do the work is refused by the kernel's name in
the judge's CUPTI records, and every bundled starter and answer is credited with the kernels of its own file
(run with `pytest -m gpu`)."""

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
CARDS = ("reduce", "transpose", "softmax", "rmsnorm", "matmul", "attention")
SEEN: dict[str, dict] = {}  # each verdict's evidence, kept for the log folder


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
        Path(folder, "gpu_evidence.json").write_text(json.dumps(SEEN, indent=1))


def judged(judge, cards, card_id, source, key, timing="first"):
    verdict = judge.run(kernel_job(cards[card_id]), source, timeout=300, timing=timing)
    SEEN[key] = {
        "correct": verdict.correct,
        "errors": verdict.errors,
        "cases": [(c.name, c.ok, c.message) for c in verdict.cases],
        "evidence": [e.__dict__ for e in verdict.evidence],
    }
    return verdict


@pytest.mark.parametrize("card_id", CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_files_are_credited_with_their_own_kernels_checked_and_timed(judge, cards, card_id, which):
    source = getattr(kernel_files(cards[card_id]), which).read_text()
    verdict = judged(judge, cards, card_id, source, f"{card_id}:{which}")
    assert verdict.correct is True and verdict.errors == [], SEEN[f"{card_id}:{which}"]
    assert [e.phase for e in verdict.evidence] == ["check", "timing"]
    for evidence in verdict.evidence:
        assert evidence.ok is True and evidence.where == "gpu", evidence
        assert " from your file (" in evidence.words and "not yours" not in evidence.words
    assert verdict.timing is not None and verdict.pct_of_ceiling is not None


@pytest.mark.parametrize(
    ("card_id", "cheat", "library"),
    [
        ("softmax", "softmax_torch_call.py", "softmax"),
        ("softmax", "softmax_partial_torch.py", "at::native::"),
        ("rmsnorm", "rmsnorm_torch_call.py", "at::native::"),
        ("matmul", "matmul_torch_call.py", ""),  # cuBLAS: nvjet, sm90_xmma or cutlass, as this GPU's cuBLAS picks
        ("matmul", "matmul_operator.py", ""),
        ("attention", "attention_sdpa.py", ""),  # FlashAttention's or the efficient-attention kernel
    ],
)
def test_a_file_that_lets_a_library_do_the_work_is_refused_by_the_kernels_name(judge, cards, card_id, cheat, library):
    verdict = judged(judge, cards, card_id, (CHEATS / cheat).read_text(), f"{card_id}:{cheat}")
    assert verdict.correct is False and verdict.exit_code() == 1
    refused = [c.message for c in verdict.cases if not c.ok]
    # a case whose numbers the library got wrong at the card's tolerance (cuBLAS on one bf16 shape) says so first
    assert len(refused) == len(verdict.cases)
    assert all("not your kernel: " in m or " elements wrong" in m for m in refused), refused
    assert "not your kernel: " in refused[0] and library.lower() in refused[0].lower()
    assert verdict.evidence[0].ok is False and "not yours: " in verdict.evidence[0].words
    assert verdict.timings == []  # nothing of torch's is timed as the learner's


def test_a_file_that_hands_only_the_timed_size_to_torch_is_refused_there(judge, cards):
    verdict = judged(judge, cards, "softmax", (CHEATS / "softmax_torch_when_large.py").read_text(), "softmax:large")
    assert all(c.ok for c in verdict.cases if not c.name.startswith("timing "))
    [timed] = [c for c in verdict.cases if c.name.startswith("timing ")]
    assert not timed.ok and "not your kernel: " in timed.message and "softmax" in timed.message.lower()
    assert verdict.correct is False and verdict.timings == []
    assert [e.ok for e in verdict.evidence] == [True, False]
