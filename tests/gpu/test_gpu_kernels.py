"""On a real GPU: every starter and answer judged, and the fault matrix (run with `pytest -m gpu`)."""

import json
import os
import re
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files, kernel_job
from drill.kernel.client import JudgeClient

pytestmark = pytest.mark.gpu

CARDS = ("reduce", "transpose", "softmax", "rmsnorm")
RESULTS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    client = JudgeClient(data_dir=tmp_path_factory.mktemp("data"))
    info = client.info()
    if not info.get("gpu"):
        client.close()
        pytest.skip("the judge sees no GPU here")
    yield client
    client.close()
    folder = os.environ.get("DRILL_GPU_LOG_DIR")
    if folder:
        Path(folder, "gpu_verdicts.json").write_text(json.dumps(RESULTS, indent=1))


def text(cards, card_id, which):
    return getattr(kernel_files(cards[card_id]), which).read_text()


def judged(judge, cards, card_id, source, key=None, timeout=120, timing="first"):
    verdict = judge.run(kernel_job(cards[card_id]), source, timeout=timeout, timing=timing)
    RESULTS[key or f"{card_id}:run{len(RESULTS)}"] = verdict.to_json()
    return verdict


def assert_answer_still_right(judge, cards, card_id="reduce"):
    verdict = judged(judge, cards, card_id, text(cards, card_id, "solution"), timing="none")
    assert verdict.correct is True, (verdict.errors, verdict.messages, verdict.compile_log[-2000:])


@pytest.mark.parametrize("card_id", CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_kernels_are_correct_and_timed(judge, cards, card_id, which):
    verdict = judged(judge, cards, card_id, text(cards, card_id, which), key=f"{card_id}:{which}")
    assert verdict.errors == []
    assert verdict.compiled is True and verdict.correct is True, [(c.name, c.message) for c in verdict.cases]
    assert verdict.gbps and verdict.gbps > 0
    assert verdict.pct_of_ceiling is not None and verdict.vs_torch is not None


@pytest.mark.parametrize("card_id", ["reduce", "transpose"])
def test_answers_beat_their_starters(judge, cards, card_id):
    starter = (
        RESULTS.get(f"{card_id}:starter") or judged(judge, cards, card_id, text(cards, card_id, "starter")).to_json()
    )
    answer = (
        RESULTS.get(f"{card_id}:solution") or judged(judge, cards, card_id, text(cards, card_id, "solution")).to_json()
    )
    assert answer["gbps"] > 1.3 * starter["gbps"]


# -- the fault matrix: each reported in words, the judge alive afterwards ---------------------------
REDUCE_HEAD = '// drill: block=256 grid=auto\nextern "C" __global__ void reduce_sum(const float* __restrict__ x, float* __restrict__ out, int n)\n{\n'


def test_a_hang_is_stopped_and_the_next_run_works(judge, cards):
    source = REDUCE_HEAD + "    while (((volatile float*)out)[0] == 0.0f) { }\n}\n"
    before = judge.pid
    verdict = judged(judge, cards, "reduce", source, key="fault:hang", timeout=8)
    assert verdict.timed_out and verdict.correct is False
    assert any("did not finish within 8 s" in e and "case n=1" in e for e in verdict.errors)
    assert_answer_still_right(judge, cards)
    assert judge.pid != before


def test_an_illegal_address_is_reported_and_the_judge_replaced(judge, cards):
    source = REDUCE_HEAD + "    float* nowhere = (float*)0x8;\n    nowhere[threadIdx.x * 1024] = x[0];\n}\n"
    before = judge.pid
    verdict = judged(judge, cards, "reduce", source, key="fault:illegal-address")
    assert verdict.correct is False
    assert any("illegal memory access" in e and "case n=1" in e for e in verdict.errors), verdict.errors
    assert_answer_still_right(judge, cards)
    assert judge.pid != before


def test_an_out_of_bounds_write_is_caught_by_the_guard_zone(judge, cards):
    answer = text(cards, "transpose", "solution")
    source = answer.replace(
        "    __syncthreads();",
        "    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)\n"
        "        out[(size_t)rows * cols + 5] = 1.0f;\n    __syncthreads();",
        1,
    )
    assert source != answer
    verdict = judged(judge, cards, "transpose", source, key="fault:out-of-bounds-write")
    assert verdict.correct is False
    assert verdict.cases[0].message.startswith("wrote past the end of output 1: element 6 (the output has 1)")
    assert_answer_still_right(judge, cards, "transpose")


def test_a_compile_error_names_the_line(judge, cards):
    lines = text(cards, "reduce", "starter").splitlines()
    at = next(i for i, line in enumerate(lines) if "atomicAdd(out, x[i]);" in line)
    lines[at] = lines[at].replace("x[i]", "x[i] * undefined_scale")
    before = judge.pid
    verdict = judged(judge, cards, "reduce", "\n".join(lines) + "\n", key="fault:compile-error")
    assert verdict.compiled is False and verdict.correct is None
    assert verdict.messages[0]["line"] == at + 1 and "undefined_scale" in verdict.messages[0]["message"]
    assert judge.pid == before


def test_a_wrong_result_names_the_first_bad_element(judge, cards):
    answer = text(cards, "transpose", "solution")
    source = answer.replace("= tile[threadIdx.x][k];", "= tile[k][threadIdx.x];")
    assert source != answer
    before = judge.pid
    verdict = judged(judge, cards, "transpose", source, key="fault:wrong-result")
    assert verdict.correct is False
    bad = next(c for c in verdict.cases if not c.ok)
    assert re.search(r"elements wrong; first out\[\d+, \d+\] = ", bad.message), bad.message
    assert judge.pid == before


def test_out_of_memory_is_reported_and_the_judge_lives(judge, cards):
    answer = text(cards, "softmax", "solution")
    source = answer.replace(
        "    rows, cols = x.shape\n", "    rows, cols = x.shape\n    hoard = torch.empty(1 << 42, device=x.device)\n", 1
    )
    assert source != answer
    before = judge.pid
    verdict = judged(judge, cards, "softmax", source, key="fault:out-of-memory")
    assert verdict.correct is False
    assert any("out of GPU memory" in e for e in verdict.errors), verdict.errors
    assert judge.pid == before
    assert_answer_still_right(judge, cards, "softmax")


def test_a_launch_the_gpu_refuses_is_reported(judge, cards):
    answer = text(cards, "reduce", "solution")
    source = answer.replace("// drill: block=512 grid=4*sm", "// drill: block=1024 grid=4*sm")
    verdict = judged(judge, cards, "reduce", source, key="fault:launch-refused")
    assert verdict.correct is False and verdict.errors
    assert_answer_still_right(judge, cards)


def test_a_triton_compile_error_points_at_the_learners_line(judge, cards):
    answer = text(cards, "softmax", "solution")
    lines = answer.splitlines()
    at = next(i for i, line in enumerate(lines) if "cols = tl.arange(0, BLOCK)" in line)
    lines[at] = lines[at].replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK + 1)")  # not a power of two
    verdict = judged(judge, cards, "softmax", "\n".join(lines) + "\n", key="fault:triton-compile-error")
    # Triton compiles at the first launch of each block size: 1x1 (BLOCK + 1 = 2) builds, 3x33 does not
    assert verdict.compiled is False and verdict.exit_code() == 1
    assert any(f"line {at + 1}: Triton could not compile" in e for e in verdict.errors), verdict.errors
    assert_answer_still_right(judge, cards, "softmax")
