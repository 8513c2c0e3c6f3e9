"""On a real GPU: every starter and answer judged, and the fault matrix (run with `pytest -m gpu`)."""

import json
import os
import re
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job

pytestmark = pytest.mark.gpu

CARDS = ("reduce", "transpose", "softmax", "rmsnorm", "matmul", "attention")
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


@pytest.mark.parametrize("card_id", ["reduce", "transpose", "matmul", "attention"])
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
    source = answer.replace("= tile[VEC * tx + j][k];", "= tile[k][VEC * tx + j];")  # the element-wise path
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


# -- kernels written to cheat or to fail: each gets WRONG or an impossible measurement -------------
def edited(cards, card_id, old, new):
    answer = text(cards, card_id, "solution")
    assert old in answer, old
    return answer.replace(old, new, 1)


def failed_cases(verdict):
    return {c.name: c.message for c in verdict.cases if not c.ok}


# the reduce answer, adding 1000 to the sum only at the timed size
WRONG_AT_TIMED_SIZE = (
    "    float sum = warp_sum((a + b) + (c + d));\n",
    "    float sum = warp_sum((a + b) + (c + d));\n"
    "    if (n == (1 << 28) && blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(out, 1000.0f);\n",
)


def test_wrong_only_at_the_timed_size_is_wrong_and_names_the_size(judge, cards):
    source = edited(cards, "reduce", *WRONG_AT_TIMED_SIZE)
    verdict = judged(judge, cards, "reduce", source, key="cheat:wrong-at-timed-size")
    assert verdict.correct is False and verdict.exit_code() == 1
    failed = failed_cases(verdict)
    assert list(failed) == ["timing n=2^28"], failed
    assert failed["timing n=2^28"].startswith("wrong at the timed size n=2^28, though the small cases passed: ")
    assert verdict.timings == [] and verdict.pct_of_ceiling is None


def test_skipping_half_the_rows_at_the_timed_shape_is_wrong_not_a_record(judge, cards):
    # unchecked, this ran at about twice the copy ceiling (issue 11)
    source = edited(
        cards,
        "softmax",
        "    rows, cols = x.shape\n",
        "    rows, cols = x.shape\n"
        "    if rows == 32768:\n"
        "        x, out, rows = x[: rows // 2], out[: rows // 2], rows // 2\n",
    )
    verdict = judged(judge, cards, "softmax", source, key="cheat:half-the-rows")
    assert verdict.correct is False
    failed = failed_cases(verdict)
    assert list(failed) == ["timing 32768x2048"], failed
    assert "wrong at the timed size 32768x2048" in failed["timing 32768x2048"] and "NaN" in failed["timing 32768x2048"]
    assert verdict.timings == []


CACHING_REDUCE = (
    (
        'extern "C" __global__ void __launch_bounds__(THREADS)\nreduce_sum(',
        "__device__ float cached_sum;\n__device__ unsigned int blocks_done;\n__device__ int cached;\n\n"
        'extern "C" __global__ void __launch_bounds__(THREADS)\nreduce_sum(',
    ),
    (
        "    const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n",
        "    const int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (n == (1 << 28) && *(volatile int*)&cached) {   // the timed size again: answer from the cache\n"
        "        if (tid == 0) out[0] = *(volatile float*)&cached_sum;\n"
        "        return;\n"
        "    }\n",
    ),
    (
        "        if (lane == 0)\n            atomicAdd(out, sum);\n",
        "        if (lane == 0) {\n"
        "            atomicAdd(out, sum);\n"
        "            if (n == (1 << 28)) {\n"
        "                atomicAdd(&cached_sum, sum);\n"
        "                __threadfence();\n"
        "                if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) cached = 1;\n"
        "            }\n"
        "        }\n",
    ),
)


def test_a_result_cached_across_timed_launches_is_an_impossible_measurement(judge, cards):
    # right answers (the inputs do not change between the timed launches), but only the first launch did the work
    source = text(cards, "reduce", "solution")
    for old, new in CACHING_REDUCE:
        assert old in source, old
        source = source.replace(old, new, 1)
    verdict = judged(judge, cards, "reduce", source, key="cheat:cached-result")
    assert verdict.correct is True  # what the timed launches left was the right sum
    assert verdict.exit_code() == 1 and verdict.pct_of_ceiling is None and verdict.vs_torch is None
    [reason] = verdict.impossible
    assert "× the copy ceiling: the kernel cannot have moved the bytes it claims" in reason
    assert any(e.startswith("timing n=2^28: impossible measurement: ") for e in verdict.errors)
    from drill.kernel.verdict import suggest_kernel_grade

    assert suggest_kernel_grade(verdict, 90) == 1


SIDE_STREAM = (
    "_side = None\n\n\n"
    "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    "    global _side\n"
    "    _side = _side or torch.cuda.Stream()\n"
    "    _side.wait_stream(torch.cuda.current_stream())\n"
    "    hidden = x.shape[0] * {share} // {whole}\n"
    "    with torch.cuda.stream(_side):\n"
    "        _softmax(x[:hidden], out[:hidden])\n"
    "    if hidden < x.shape[0]:\n"
    "        _softmax(x[hidden:], out[hidden:])\n\n\n"
    "def _softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
)


def assert_not_scored_for_another_stream(verdict, shape):
    assert verdict.correct is True  # every output was right once the device was synchronised
    assert verdict.exit_code() == 1 and verdict.pct_of_ceiling is None and verdict.vs_torch is None
    [reason] = verdict.impossible
    assert reason.startswith(f"{shape}: the launch put GPU work on another stream ("), reason
    assert any(e.startswith(f"timing {shape}: impossible measurement: the launch put GPU work") for e in verdict.errors)


def test_work_hidden_on_another_stream_is_not_scored(judge, cards):
    # right answers, but the kernels run outside the stream the judge times
    header = "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    source = edited(cards, "softmax", header, SIDE_STREAM.format(share=1, whole=1))
    verdict = judged(judge, cards, "softmax", source, key="cheat:other-stream")
    assert_not_scored_for_another_stream(verdict, "32768x2048")


def test_half_the_work_hidden_on_another_stream_is_not_scored_though_the_figure_looks_possible(judge, cards):
    # the slow starter with half its rows on a side stream: a figure well under the copy ceiling, so the
    # physical bound alone would have scored it
    starter = text(cards, "softmax", "starter")
    header = "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    assert header in starter
    source = starter.replace(header, SIDE_STREAM.format(share=1, whole=2), 1)
    verdict = judged(judge, cards, "softmax", source, key="cheat:half-on-another-stream")
    assert_not_scored_for_another_stream(verdict, "32768x2048")
    [timing] = verdict.timings
    assert timing.gbps < timing.ceiling_gbps  # only the audit stands between this figure and a score


def test_work_launched_from_another_thread_is_not_scored(judge, cards):
    # the answer's kernels launched by a helper thread: right outputs, but not launched by the call the judge times
    header = "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    threaded = (
        "import threading\n\n\n"
        "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
        "    helper = threading.Thread(target=_softmax, args=(x, out))\n"
        "    helper.start()\n"
        "    helper.join()\n\n\n"
        "def _softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    )
    verdict = judged(judge, cards, "softmax", edited(cards, "softmax", header, threaded), key="cheat:other-thread")
    assert verdict.correct is True and verdict.exit_code() == 1 and verdict.pct_of_ceiling is None
    [reason] = verdict.impossible
    assert re.search(r"from (another thread|\d+ other threads) \(\d+ kernels\)", reason), reason


def test_a_file_that_slows_the_judges_clock_is_not_scored_and_the_judge_is_replaced(judge, cards):
    clock = (
        "_elapsed = torch.cuda.Event.elapsed_time\n"
        "torch.cuda.Event.elapsed_time = lambda self, end: 0.8 * _elapsed(self, end)\n\n\n"
        "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    )
    header = "def softmax(x: torch.Tensor, out: torch.Tensor) -> None:\n"
    first_pid = judge.pid
    verdict = judged(judge, cards, "softmax", edited(cards, "softmax", header, clock), key="cheat:judge-clock")
    assert verdict.correct is False and verdict.exit_code() == 1 and verdict.timings == []
    assert any("the file changed the judge's own code (torch.cuda.Event.elapsed_time)" in e for e in verdict.errors)
    assert_answer_still_right(judge, cards, "softmax")  # in a fresh judge process, its clock its own again
    assert judge.pid != first_pid


def test_a_race_without_the_barrier_is_wrong(judge, cards):
    source = edited(cards, "transpose", "    __syncthreads();\n", "")
    verdict = judged(judge, cards, "transpose", source, key="fault:race")
    assert verdict.correct is False
    assert any("elements wrong" in m for m in failed_cases(verdict).values())


def test_no_tail_handling_is_wrong(judge, cards):
    source = edited(cards, "reduce", "    if (tid < (n & 3))", "    if (false)")
    verdict = judged(judge, cards, "reduce", source, key="fault:no-tail")
    assert verdict.correct is False
    assert "n=1" in failed_cases(verdict)


def test_softmax_without_the_max_subtraction_is_wrong_on_large_logits(judge, cards):
    source = edited(cards, "softmax", "    x = x - tl.max(x, axis=0)\n", "")
    verdict = judged(judge, cards, "softmax", source, key="fault:unstable-softmax")
    assert verdict.correct is False
    assert "NaN" in failed_cases(verdict)["7x777 large logits"]


def test_the_timed_output_of_a_right_kernel_is_checked_and_passes(judge, cards):
    verdict = (
        RESULTS.get("reduce:solution") or judged(judge, cards, "reduce", text(cards, "reduce", "solution")).to_json()
    )
    timed = [c for c in verdict["cases"] if c["name"] == "timing n=2^28"]
    assert timed and timed[0]["ok"] is True
    assert verdict["impossible"] == [] and verdict["host_launch_us"] is not None


def test_short_launches_are_timed_from_their_own_records_not_event_pairs(judge, cards):
    # an event pair also counts 1-3 µs of launch latency: a quarter of the 4096 x 1024 softmax. The judge
    # chooses its method from a first launch that must not count the host's time to issue it (a Triton
    # launch from a fresh judge can take 0.1 ms of Python), or short kernels drift onto the event pair.
    for card_id in ("softmax", "matmul"):
        verdict = judged(
            judge, cards, card_id, text(cards, card_id, "solution"), key=f"{card_id}:methods", timing="all"
        )
        assert verdict.correct is True
        short = [t for t in verdict.timings if t.ms < 0.05]
        assert short, [(t.name, t.ms) for t in verdict.timings]
        assert all(t.method == "records" for t in short), [(t.name, t.ms, t.method, t.method_note) for t in short]


# -- the compute-bound cards: GEMM and attention ------------------------------------------------------
def test_a_matmul_that_ignores_the_tail_of_k_is_wrong(judge, cards):
    source = edited(cards, "matmul", "for k in range(0, tl.cdiv(K, BLOCK_K)):", "for k in range(0, K // BLOCK_K):")
    verdict = judged(judge, cards, "matmul", source, key="fault:matmul-no-k-tail")
    assert verdict.correct is False
    failed = failed_cases(verdict)
    assert "128x128x1000 bfloat16" in failed and "1x1x1 float16" in failed, failed
    assert "4096x4096x4096 bf16" not in str(failed)  # K = 4096 has no tail: the small shapes catch it


def test_a_matmul_that_accumulates_in_16_bits_is_wrong(judge, cards):
    source = edited(
        cards, "matmul", "acc = tl.dot(a, b, acc)", "acc = (acc + tl.dot(a, b)).to(tl.bfloat16).to(tl.float32)"
    )
    verdict = judged(judge, cards, "matmul", source, key="fault:matmul-16-bit-sum")
    assert verdict.correct is False
    assert "16x1000x4097 bfloat16" in failed_cases(verdict)


def test_a_matmul_that_copies_back_a_cached_product_is_refused_for_the_calls_that_ran_none_of_its_kernels(judge, cards):
    source = edited(
        cards,
        "matmul",
        "def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:\n",
        "_seen = {}\n\n\ndef matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:\n"
        "    key = (a.data_ptr(), b.data_ptr(), tuple(a.shape), tuple(b.shape))\n"
        "    if key in _seen:\n"
        "        c.copy_(_seen[key])\n"
        "        return\n"
        "    _matmul(a, b, c)\n"
        "    _seen[key] = c.clone()\n\n\n"
        "def _matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:\n",
    )
    verdict = judged(judge, cards, "matmul", source, key="cheat:matmul-cached")
    # a case's second run copies the first run's product back: right numbers, but no kernel of the file made them
    # (once it was timed as an impossible figure; now no figure is reached)
    assert verdict.correct is False and verdict.exit_code() == 1 and verdict.timings == []
    assert any("no kernel from your file ran in 1 of 1 calls" in c.message for c in verdict.cases)
    assert verdict.evidence[0].ok is False


def test_attention_without_the_causal_mask_on_the_diagonal_is_wrong(judge, cards):
    source = edited(
        cards,
        "attention",
        "keep = (offs_m[:, None] >= keys[None, :]) & (keys[None, :] < S)",
        "keep = keys[None, :] < S",
    )
    verdict = judged(judge, cards, "attention", source, key="fault:attention-not-causal")
    assert verdict.correct is False
    assert "b1 h2 s17 d64" in failed_cases(verdict)


def test_attention_without_the_running_maximum_overflows(judge, cards):
    source = edited(cards, "attention", "m_new = tl.maximum(m_i, tl.max(scores, 1))", "m_new = tl.zeros_like(m_i)")
    verdict = judged(judge, cards, "attention", source, key="fault:attention-unstable")
    assert verdict.correct is False
    assert list(failed_cases(verdict)) == ["b1 h2 s300 d64 large logits"]


def test_attention_that_skips_half_the_heads_at_the_timed_shape_is_wrong(judge, cards):
    source = edited(
        cards,
        "attention",
        '        return (triton.cdiv(S, meta["BLOCK_M"]), batch * heads)',
        '        return (triton.cdiv(S, meta["BLOCK_M"]), batch * heads // (2 if S == 4096 else 1))',
    )
    verdict = judged(judge, cards, "attention", source, key="cheat:attention-half-the-heads")
    assert verdict.correct is False
    failed = failed_cases(verdict)
    assert list(failed) == ["timing b2 h16 s4096 d128"], failed
    assert "NaN" in failed["timing b2 h16 s4096 d128"] and verdict.timings == []
