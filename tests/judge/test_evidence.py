"""The judge credits only the learner's own work: what ran during each call, and the verdict it leads to.

On a CPU the judge records every ATen op and every Triton launch of a call (the interpreter); on a GPU the kernel
names in its CUPTI records. These tests run the real judge child under the interpreter on the bundled starters and
answers and on files that let torch do the work (tests/fixtures/cheats), and check the GPU rules on recorded names.
"""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.judge import cupti
from drill.judge.evidence import (
    Allowance,
    Seen,
    Work,
    WorkKind,
    learner_kernel_names,
    parse_allowed,
    short_kernel_name,
    sort_gpu_work,
)
from drill.kernel.cards import kernel_files
from drill.kernel.job import kernel_job
from drill.kernel.verdict import VerdictBuilder, format_verdict
from tests.conftest import stretched

CHEATS = Path(__file__).parents[1] / "fixtures" / "cheats"
TRITON_CARDS = ("softmax", "rmsnorm", "matmul", "attention")
missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
needs_torch = pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')")
one_judge = pytest.mark.xdist_group("triton-judge")  # one worker, so one judge child (cpu_judge) imports torch

# Kernel names as CUPTI reports them on an H200 (torch 2.x, CUDA 12): ATen's are mangled C++
ATEN_SOFTMAX = "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi4EfffNS1_22SoftMaxForwardEpilogueEEEvPT2_PKT0_i"
ATEN_FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
ATEN_AMAX = "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_6MaxOpsIfEEjfLi4ELi4EEEEEvT1_"
CUBLAS = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"
CUTLASS = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
ATEN_COPY = (
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseE"
    "ENKUlvE1_clEvENKUlvE7_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_"
)
TRITON_ALLOWED = parse_allowed(("allocation", "views", "fill", "copy"))


def kernel(name: str) -> Work:
    return Work(WorkKind.KERNEL, name)


# -- the GPU's records ----------------------------------------------------------------------------------------
def test_a_call_that_ran_only_the_files_kernels_is_the_learners_and_says_so():
    seen = sort_gpu_work([kernel("softmax_kernel"), kernel("softmax_kernel")], frozenset({"softmax_kernel"}), ())
    assert seen.ok is True and seen.refusal() == ""
    assert seen.words() == "kernels seen in 1 checked call: 2 from your file (softmax_kernel ×2), nothing else"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (ATEN_SOFTMAX, "at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float"),
        (ATEN_AMAX, "at::native::reduce_kernel"),
        (CUBLAS, CUBLAS),
        (CUTLASS, "sm90_xmma_gemm"),
    ],
    ids=["torch.softmax", "a row maximum in torch", "cuBLAS", "CUTLASS"],
)
def test_a_library_kernel_in_a_call_is_refused_by_its_name(name, shown):
    seen = sort_gpu_work([kernel("my_kernel"), kernel(name)], frozenset({"my_kernel"}), TRITON_ALLOWED)
    assert seen.ok is False
    assert seen.refusal().startswith("not your kernel: ") and shown in seen.refusal()
    assert seen.refusal().endswith(" ran")


def test_a_call_that_launched_none_of_the_files_kernels_is_refused_even_when_nothing_else_ran():
    seen = sort_gpu_work([Work(WorkKind.MEMSET)], frozenset({"softmax_kernel"}), TRITON_ALLOWED)
    assert seen.ok is False and seen.refusal() == "no kernel from your file ran in 1 of 1 calls"


def test_fills_copies_and_memsets_pass_only_where_the_card_allows_them():
    work = [
        kernel("mine"),
        kernel(ATEN_FILL),
        Work(WorkKind.MEMSET),
        kernel(ATEN_COPY),
        Work(WorkKind.MEMCPY, copy_kind=8),
    ]
    allowed = sort_gpu_work(work, frozenset({"mine"}), TRITON_ALLOWED)
    assert allowed.ok is True
    assert dict(allowed.allowed) == {"fill kernel": 1, "memset": 1, "copy kernel": 1, "device copy": 1}
    strict = sort_gpu_work(work, frozenset({"mine"}), ())
    assert strict.ok is False
    assert set(strict.foreign) == {
        short_kernel_name(ATEN_FILL),
        "a memset",
        short_kernel_name(ATEN_COPY),
        "a copy device to device",
    }


def test_a_copy_between_host_and_device_is_never_allowed():
    seen = sort_gpu_work([kernel("mine"), Work(WorkKind.MEMCPY, copy_kind=2)], frozenset({"mine"}), TRITON_ALLOWED)
    assert seen.ok is False and seen.refusal() == "not your kernel: a copy device to host ran"


def test_the_files_kernel_names_are_its_functions_less_the_names_libraries_kernels_have():
    source = (
        "import triton\n"
        "@triton.jit\ndef softmax_kernel(x): pass\n"
        "def outer():\n    def inner(): pass\n"
        "def nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT(): pass\n"
        "def triton_per_fused__softmax_0(): pass\n"
        "def _ZN2at6native13reduce_kernel(): pass\n"
    )
    assert learner_kernel_names(source, "k.py") == {"softmax_kernel", "outer", "inner"}


def test_a_mangled_name_is_shown_as_cpp_writes_it_without_its_parameters():
    name = short_kernel_name(ATEN_FILL)
    assert name.startswith("at::native::vectorized_elementwise_kernel<4, at::native::Fill") and len(name) <= 70
    assert "(int" not in name


def test_the_work_of_each_call_is_what_the_cuda_calls_inside_its_window_asked_for():
    no_library = SimpleNamespace(cuptiActivityGetNextRecord=SimpleNamespace(), cuptiGetResultString=SimpleNamespace())
    recorder = cupti.Recorder(no_library)  # type: ignore[arg-type]
    recorder.called_at = {1: 100, 2: 150, 3: 260, 4: 300, 5: 420}
    recorder.work = [
        (1, kernel("judges_flush")),  # before the first call
        (2, kernel("mine")),
        (3, kernel("between_calls")),
        (4, kernel("mine")),
        (4, Work(WorkKind.MEMSET)),  # a graph launch's work shares its call
        (5, kernel(ATEN_SOFTMAX)),
        (6, kernel("no_call_recorded")),
    ]
    calls = recorder.work_of_calls([(140, 200), (290, 450)])
    assert calls == [[kernel("mine")], [kernel("mine"), Work(WorkKind.MEMSET), kernel(ATEN_SOFTMAX)]]


def test_an_unknown_allowance_in_a_harness_is_an_error_and_none_given_means_the_default():
    with pytest.raises(ValueError):
        parse_allowed(("everything",))
    assert Allowance.COPY not in parse_allowed(None)


# -- the verdict ----------------------------------------------------------------------------------------------
def _verdict(*evidence: Seen):
    builder = VerdictBuilder("softmax")
    builder.feed({"event": "started", "card": "softmax", "device": "H200", "gpu": True})
    builder.feed({"event": "compiled", "ok": True, "log": "", "messages": [], "resources": []})
    builder.feed(
        {
            "event": "case",
            "name": "3x33",
            "ok": True,
            "message": "",
            "max_error": 0.0,
            "tolerance": 1e-6,
            "seconds": 0.1,
        }
    )
    for phase, seen in zip(("check", "timing"), evidence):
        builder.feed(seen.event(phase, TRITON_ALLOWED))
    builder.feed({"event": "finished"})
    return builder.result()


def test_right_results_from_torchs_kernels_are_not_correct_and_the_verdict_names_the_kernel():
    mine = sort_gpu_work([kernel("softmax_kernel")], frozenset({"softmax_kernel"}), TRITON_ALLOWED)
    torch_did_it = sort_gpu_work([kernel(ATEN_SOFTMAX)], frozenset({"softmax_kernel"}), TRITON_ALLOWED)
    verdict = _verdict(mine, torch_did_it)
    assert verdict.correct is False and verdict.exit_code() == 1
    text = format_verdict(verdict)
    assert "kernels seen in 1 checked call: 1 from your file (softmax_kernel), nothing else" in text
    assert "not your kernel: at::native::" in text and "cunn_SoftMaxForward" in text
    assert "the card also allows allocation, views, fills and memsets, copies on the device" in text
    assert [e["ok"] for e in verdict.to_json()["evidence"]] == [True, False]


def test_the_verdict_panel_shows_what_ran_and_what_was_refused():
    from drill.ui.verdict_view import render_verdict

    mine = sort_gpu_work([kernel("softmax_kernel")], frozenset({"softmax_kernel"}), TRITON_ALLOWED)
    torch_did_it = sort_gpu_work([kernel(ATEN_SOFTMAX)], frozenset({"softmax_kernel"}), TRITON_ALLOWED)
    panel = render_verdict(_verdict(mine, torch_did_it), "", 70.0, 1).plain
    assert "kernels seen in 1 checked call: 1 from your file (softmax_kernel), nothing else" in panel
    assert "kernels seen in 1 timed call: none from your file; not yours: at::native::" in panel
    assert ": no kernel from your file ran in 1 of 1 calls; not your kernel: at::native::" in panel


def test_right_results_whose_kernels_were_not_seen_are_not_called_correct():
    verdict = _verdict(Seen("gpu", calls=1, unseen="CUPTI could not be loaded"))
    assert verdict.correct is None
    assert any("CUPTI could not be loaded" in n for n in verdict.not_checked)


# -- the judge on a CPU, for real -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "kernels.yaml"]).cards


def judged(judge, cards, card_id, source):
    return judge.run(kernel_job(cards[card_id]), source, timeout=stretched(180))


@pytest.mark.parametrize("card_id", TRITON_CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
@needs_torch
@one_judge
def test_bundled_files_are_correct_with_the_evidence_that_their_kernels_did_the_work(cpu_judge, cards, card_id, which):
    verdict = judged(cpu_judge, cards, card_id, getattr(kernel_files(cards[card_id]), which).read_text())
    assert verdict.correct is True, (verdict.errors, [(c.name, c.message) for c in verdict.cases if not c.ok])
    [evidence] = verdict.evidence
    assert evidence.ok is True and evidence.where == "cpu" and evidence.phase == "check"
    assert evidence.words.startswith(f"ops seen on the CPU in {2 * len(verdict.cases)} checked calls: ")
    assert "of your file's Triton kernels" in evidence.words and "not yours" not in evidence.words


@pytest.mark.parametrize(
    ("card_id", "cheat", "named"),
    [
        ("softmax", "softmax_torch_call.py", "not your kernel: torch ran aten.softmax (your line 7)"),
        ("softmax", "softmax_partial_torch.py", "not your kernel: torch ran aten.amax (your line 20)"),
        ("softmax", "softmax_torch_in_kernel.py", "not your kernel: torch ran aten.softmax (your line 11)"),
        (
            "softmax",
            "softmax_no_launch.py",
            "no Triton kernel from your file ran in 1 of 1 calls; not your kernel: torch",
        ),
        (
            "rmsnorm",
            "rmsnorm_torch_call.py",
            "not your kernel: torch ran aten.pow (your line 7), and 4 more: aten.mean; aten.add; …",
        ),
        ("matmul", "matmul_torch_call.py", "not your kernel: torch ran aten.mm (your line 7)"),
        ("matmul", "matmul_operator.py", "not your kernel: torch ran aten.mm (your line 7)"),
        (
            "attention",
            "attention_sdpa.py",
            "not your kernel: torch ran aten._scaled_dot_product_flash_attention_for_cpu (your line 8)",
        ),
    ],
)
@needs_torch
@one_judge
def test_a_file_that_lets_torch_do_the_work_is_refused_with_the_op_and_line(cpu_judge, cards, card_id, cheat, named):
    verdict = judged(cpu_judge, cards, card_id, (CHEATS / cheat).read_text())
    assert verdict.correct is False and verdict.exit_code() == 1
    assert verdict.cases and all(not c.ok for c in verdict.cases)
    assert all(named in c.message for c in verdict.cases), [c.message for c in verdict.cases]
    [evidence] = verdict.evidence
    assert evidence.ok is False and named.split(" (")[0].split(" in 1 of 1 calls")[0] in evidence.refused
    assert evidence.words.startswith("ops seen on the CPU in ")
    assert named.split(" (")[0].split(" in 1 of 1 calls")[0] in format_verdict(verdict)
