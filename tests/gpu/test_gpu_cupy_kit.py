"""On a real GPU: the CUDA cards judged with CuPy's kit (no torch on the way to the verdict), with the same
faults and cheats as torch's kit catches (run with `pytest -m gpu`)."""

import importlib.util
import re

import pytest
from test_gpu_kernels import CACHING_REDUCE, REDUCE_HEAD, WRONG_AT_TIMED_SIZE, edited, failed_cases, text

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="needs CuPy in the judge's Python"),
]


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def judge(data_dir):
    client = JudgeClient(data_dir=data_dir, env={"DRILL_JUDGE_KIT": "cupy"})
    if not client.info().get("gpu"):
        client.close()
        pytest.skip("the judge sees no GPU here")
    yield client
    client.close()


def run(judge, cards, card_id, source, **options):
    return judge.run(kernel_job(cards[card_id]), source, timeout=options.pop("timeout", 120), **options)


def assert_answer_still_right(judge, cards, card_id="reduce"):
    verdict = run(judge, cards, card_id, text(cards, card_id, "solution"), timing="none")
    assert verdict.correct is True, (verdict.errors, [(c.name, c.message) for c in verdict.cases])


@pytest.mark.parametrize("card_id", ["reduce", "transpose"])
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_cuda_kernels_are_correct_and_timed_with_cupys_kit(judge, cards, card_id, which):
    verdict = run(judge, cards, card_id, text(cards, card_id, which))
    assert verdict.errors == [] and verdict.correct is True, [(c.name, c.message) for c in verdict.cases]
    [timing] = verdict.timings
    assert timing.kit == "cupy" and timing.gbps > 0 and verdict.pct_of_ceiling is not None
    assert verdict.vs_torch is not None  # torch's own way, timed once with torch and kept for this GPU
    if which == "solution":
        assert verdict.pct_of_ceiling > 80


def test_a_new_judge_whose_first_run_is_a_cuda_card_never_imports_torch(data_dir, cards, judge):
    run(judge, cards, "reduce", text(cards, "reduce", "solution"))  # the ceilings and torch's time, kept
    fresh = JudgeClient(data_dir=data_dir)  # no kit named: chosen from its first request
    events = []
    try:
        verdict = run(fresh, cards, "reduce", text(cards, "reduce", "solution"), on_event=events.append)
        startup = fresh.info().get("startup", {})
    finally:
        fresh.close()
    assert verdict.correct is True and verdict.timings[0].kit == "cupy" and verdict.vs_torch is not None
    assert "import cupy" in startup and "import torch" not in startup, startup
    [finished] = [e for e in events if e.get("event") == "finished"]
    assert finished["torch"] is False  # not imported at any point of the run


def test_wrong_only_at_the_timed_size_is_wrong(judge, cards):
    source = edited(cards, "reduce", *WRONG_AT_TIMED_SIZE)
    verdict = run(judge, cards, "reduce", source)
    assert verdict.correct is False and list(failed_cases(verdict)) == ["timing n=2^28"]
    assert verdict.timings == [] and verdict.pct_of_ceiling is None


def test_a_cached_result_is_an_impossible_measurement(judge, cards):
    source = text(cards, "reduce", "solution")
    for old, new in CACHING_REDUCE:
        assert old in source, old
        source = source.replace(old, new, 1)
    verdict = run(judge, cards, "reduce", source)
    assert verdict.correct is True and verdict.exit_code() == 1 and verdict.pct_of_ceiling is None
    [reason] = verdict.impossible
    assert "× the copy ceiling: the kernel cannot have moved the bytes it claims" in reason


def test_a_race_a_missing_tail_and_a_wrong_element_are_wrong(judge, cards):
    race = run(judge, cards, "transpose", edited(cards, "transpose", "    __syncthreads();\n", ""))
    assert race.correct is False and any("elements wrong" in m for m in failed_cases(race).values())
    tail = run(judge, cards, "reduce", edited(cards, "reduce", "    if (tid < (n & 3))", "    if (false)"))
    assert tail.correct is False and "n=1" in failed_cases(tail)
    swapped = edited(cards, "transpose", "= tile[VEC * tx + j][k];", "= tile[k][VEC * tx + j];")
    wrong = run(judge, cards, "transpose", swapped)
    bad = next(c for c in wrong.cases if not c.ok)
    assert re.search(r"elements wrong; first out\[\d+, \d+\] = ", bad.message), bad.message


def test_an_out_of_bounds_write_is_caught_by_the_guard_zone(judge, cards):
    source = edited(
        cards,
        "transpose",
        "    __syncthreads();",
        "    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)\n"
        "        out[(size_t)rows * cols + 5] = 1.0f;\n    __syncthreads();",
    )
    verdict = run(judge, cards, "transpose", source)
    assert verdict.correct is False
    assert verdict.cases[0].message.startswith("wrote past the end of output 1: element 6 (the output has 1)")


def test_an_illegal_address_and_a_hang_are_reported_and_the_judge_replaced(judge, cards):
    before = judge.pid
    source = REDUCE_HEAD + "    float* nowhere = (float*)0x8;\n    nowhere[threadIdx.x * 1024] = x[0];\n}\n"
    verdict = run(judge, cards, "reduce", source)
    assert any("illegal memory access" in e and "case n=1" in e for e in verdict.errors), verdict.errors
    assert_answer_still_right(judge, cards)
    assert judge.pid != before
    before = judge.pid
    hang = run(
        judge, cards, "reduce", REDUCE_HEAD + "    while (((volatile float*)out)[0] == 0.0f) { }\n}\n", timeout=8
    )
    assert hang.timed_out and any("did not finish within 8 s" in e for e in hang.errors)
    assert_answer_still_right(judge, cards)
    assert judge.pid != before


def test_drills_cuda_module_finds_what_array_operations_find():
    import math

    import cupy as cp
    import numpy as np

    from drill.judge.cupy_kit import CupyKit
    from drill.judge.cupy_ops import array_stats

    kit = CupyKit()
    rng = np.random.default_rng(7)
    n = 300_007
    ref = rng.standard_normal(n)
    got = ref.astype(np.float32)
    got[[5, 77_000, n - 1]] = [np.nan, 3.0, np.inf]
    cases = [(1e-6, 1e-7, False, got, ref), (0.0, 0.0, True, got, ref), (0.5, 1.0, False, got, ref)]
    cases += [(1e-6, 1e-7, False, got.astype(np.float64), ref), (0.0, 0.0, True, got, ref.astype(np.float32))]
    cases += [(1e-3, 0.0, False, got.astype(np.float64), ref.astype(np.float32))]
    for rtol, atol, exact, mine, theirs in cases:
        want = array_stats(np, mine.astype(np.float64), theirs.astype(np.float64), rtol, atol, exact)
        found = kit.ops.compare(cp.asarray(mine), cp.asarray(theirs), rtol, atol, exact)
        assert (found.bad, found.first) == (want.bad, want.first), (rtol, atol, exact, mine.dtype, theirs.dtype)
        assert found.max_error == pytest.approx(want.max_error) and found.max_tolerance == pytest.approx(
            want.max_tolerance
        )
    # a transposed reference, read in its own order, as the transpose card's
    x = rng.standard_normal((517, 613)).astype(np.float32)
    ref_t = kit.float64(cp.asarray(x)).T
    mine = np.ascontiguousarray(x.T)
    assert kit.exact(cp.asarray(mine), ref_t).ok
    mine[400, 100] += 1.0
    check = kit.exact(cp.asarray(mine), ref_t)
    assert not check.ok and check.message.startswith("1 of 316,921 elements wrong; first out[400, 100] = ")
    # sums in float64, and the norm
    assert kit.sum64(cp.asarray(x)) == pytest.approx(math.fsum(x.astype(np.float64).ravel()), rel=1e-12, abs=1e-9)
    assert kit.norm64(cp.asarray(x)) == pytest.approx(float(np.linalg.norm(x.astype(np.float64))), rel=1e-12)
    assert kit.sum64(kit.float64(cp.asarray(x))) == pytest.approx(math.fsum(x.astype(np.float64).ravel()), rel=1e-12)
    kit.begin_case()
    out64 = kit.output(3, 5, dtype=np.float64)  # poisoned, with its guard zone, by drill's float64 fill
    assert np.isnan(kit.host(out64)).all() and kit.check_guards() is None and kit.healthy()
    # the inputs: normal, fresh each time, rounded when whole, with a NaN guard after them
    a, b = kit.host(kit.randn(1 << 20)), kit.host(kit.randn(1 << 20))
    assert abs(a.mean()) < 0.01 and abs(a.std() - 1.0) < 0.01 and not np.array_equal(a, b)
    assert (np.abs(a) < 2).mean() == pytest.approx(0.9545, abs=0.005)
    w = kit.host(kit.randn(1 << 20, scale=8.0, whole=True))
    assert np.array_equal(w, np.round(w)) and 7.9 < w.std() < 8.1
    guarded = kit.randn(1000)
    assert np.isnan(kit.host(guarded.base[1000:])).all()


def test_a_cuda_verdict_on_an_empty_cupy_cache_compiles_only_drills_own_kernels(tmp_path, cards):
    cache = tmp_path / "cupy-cache"
    env = {"DRILL_JUDGE_KIT": "cupy", "CUPY_CACHE_DIR": str(cache)}
    client = JudgeClient(data_dir=tmp_path / "data", env=env)  # a new GPU to it: it calibrates with CuPy's kit
    try:
        right = [
            run(client, cards, c, text(cards, c, w)) for c in ("reduce", "transpose") for w in ("starter", "solution")
        ]
        wrong = run(client, cards, "reduce", edited(cards, "reduce", *WRONG_AT_TIMED_SIZE))
    finally:
        client.close()
    for verdict in right:
        assert verdict.correct is True and verdict.timings[0].kit == "cupy", [
            (c.name, c.message) for c in verdict.cases
        ]
    assert wrong.correct is False
    compiled = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert 1 <= len(compiled) <= 3, compiled  # drill's two modules and the spin kernel: none of CuPy's own


def test_a_judge_that_started_without_torch_then_takes_a_triton_card_and_a_cuda_card_again(data_dir, cards, judge):
    run(judge, cards, "reduce", text(cards, "reduce", "solution"))  # the ceilings and torch's time, kept
    fresh = JudgeClient(data_dir=data_dir)  # as the app's judge can be: its first run a CUDA card
    try:
        first = run(fresh, cards, "reduce", text(cards, "reduce", "solution"))
        triton = run(fresh, cards, "softmax", text(cards, "softmax", "solution"))
        again = run(fresh, cards, "reduce", text(cards, "reduce", "solution"))
    finally:
        fresh.close()
    assert first.correct is True and first.timings[0].kit == "cupy"
    assert triton.errors == [] and triton.correct is True and triton.pct_of_ceiling is not None
    assert triton.timings[0].kit == "torch"  # torch imported for the Triton card
    assert again.correct is True and again.timings[0].kit == "torch" and again.pct_of_ceiling is not None
