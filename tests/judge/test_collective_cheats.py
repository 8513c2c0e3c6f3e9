"""Collective cards answered without building the collective are refused, in words that say what happened.

Each cheat in tests/fixtures/collective_cheats/ is judged on the CPU with gloo, as CI and a laptop judge it: a
built-in collective brought back (through what its stand-in keeps, the garbage collector's list, a fresh copy of
torch's module, the backend's own method, a torch.ops operator restored with delattr, the C++ broadcast helper
DistributedDataParallel uses), the expected result looked for in the judge's frames and heap (it is not in the
rank's process), and sums made through a side channel (files, shared memory, sockets of the learner's own, the
process group's store, a ring that goes round with one element) with a token sent for synchronisation: those move
less over the ranks' connections than the collective must, and are refused with both
figures. The traffic rules, the words and NCCL's record are tested on their own below.
"""

import tempfile
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.job import kernel_job
from drill.kernel_shared import collective_sizes as sizes
from tests.conftest import stretched

pytestmark = pytest.mark.xdist_group("collectives")

CHEATS = Path(__file__).parents[1] / "fixtures" / "collective_cheats"
BUILT_IN = r"is a built-in collective"
TOO_LITTLE = r"rank \d moved too little for an all-reduce of 3.91 KiB over 2 ranks: sent \d+ B, received \d+ B, of 3.91 KiB sent and 3.91 KiB received required \(gloo's connections"


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "collective-kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(cpu_judge):
    """The worker's CPU judge, shared with tests/judge/test_collectives.py (the same xdist group)."""
    pytest.importorskip("torch.distributed")
    cpu_judge.start()
    started = cpu_judge.pid
    yield cpu_judge
    for pid in {started, cpu_judge.pid}:  # the ranks' parent: the judge, or the one that replaced it
        for folder in (Path(tempfile.gettempdir()), Path("/dev/shm")):  # what the side channels left
            for left in folder.glob(f"drill-cheat-*{pid}-*"):
                left.unlink(missing_ok=True)


def run(judge, cards, source, card_id="ring-allreduce", world=2):
    job = kernel_job(cards[card_id])
    job["world"] = world
    return judge.run(job, source, timeout=stretched(90.0), timing="none")


def words(verdict) -> str:
    return " ".join([*verdict.errors, *(c.message for c in verdict.cases if not c.ok)])


@pytest.mark.parametrize(
    "cheat, said",
    [
        ("closure_of_the_stub.py", "rank \\d at line 21: torch.distributed.all_reduce " + BUILT_IN),
        ("heap_walk.py", "rank \\d at line \\d+: (torch.ops.c10d.allreduce_|ProcessGroup.allreduce) " + BUILT_IN),
        ("reloaded_module.py", "rank \\d at line 16: ProcessGroup.allreduce " + BUILT_IN),
        ("backend_method.py", "rank \\d at line 9: ProcessGroup.allreduce " + BUILT_IN),
        ("operator_restored.py", "rank \\d at line 17: torch.ops.c10d.allreduce_ " + BUILT_IN),
        ("cpp_helper.py", "rank \\d at line 15: torch.ops.c10d.broadcast_ " + BUILT_IN),
    ],
)
def test_a_built_in_collective_brought_back_is_refused(judge, cards, cheat, said):
    import re

    verdict = run(judge, cards, (CHEATS / cheat).read_text())
    assert verdict.compiled is True  # the source reader did not see it: the ranks refused it when it ran
    assert verdict.correct is False
    assert re.search(said, words(verdict)), words(verdict)


def test_the_expected_result_is_not_in_the_ranks_process(judge, cards):
    """The judge's frames, the heap and any kit are searched for a reference or the built-ins: nothing is found, the
    tensor is left as it was, and the first case is wrong."""
    verdict = run(judge, cards, (CHEATS / "frame_walk.py").read_text())
    assert verdict.correct is False
    first = next(c for c in verdict.cases if not c.ok)
    assert first.name == "float32 n=1" and "elements wrong" in first.message and "expected" in first.message


@pytest.mark.parametrize(
    "cheat",
    ["file_side_channel.py", "shared_memory.py", "socket_side_channel.py", "ring_that_skips_its_work.py"],
)
def test_a_sum_made_through_a_side_channel_is_refused_with_both_figures(judge, cards, cheat):
    import re

    verdict = run(judge, cards, (CHEATS / cheat).read_text())
    assert verdict.correct is False
    failed = [c for c in verdict.cases if not c.ok]
    assert failed and failed[0].name == "float32 n=1,000"  # the sum was right: only the traffic gave it away
    assert re.search(TOO_LITTLE, failed[0].message), failed[0].message
    assert "the result did not come through your sends and receives" in failed[0].message
    [evidence] = verdict.evidence
    assert evidence.ok is False and evidence.refused == failed[0].message


def test_the_process_groups_own_store_is_a_side_channel_too(judge, cards):
    verdict = run(judge, cards, (CHEATS / "store_side_channel.py").read_text())
    assert verdict.correct is False
    failed = next(c for c in verdict.cases if not c.ok)
    assert failed.name == "float32 n=1" and "sent 0 B, received 0 B, of 4 B sent and 4 B received required" in (
        failed.message
    )


@pytest.mark.parametrize(
    "card_id, cheat, said",
    [
        ("all-gather", "all_gather_through_files.py", "moved too little for an all-gather of 3.91 KiB over 2 ranks"),
        (
            "reduce-scatter",
            "reduce_scatter_through_files.py",
            "moved too little for a reduce-scatter of 3.91 KiB over 2 ranks",
        ),
    ],
)
def test_the_halves_through_files_are_refused_too(judge, cards, card_id, cheat, said):
    verdict = run(judge, cards, (CHEATS / cheat).read_text(), card_id)
    assert verdict.correct is False
    assert said in words(verdict), words(verdict)


def test_the_answer_is_credited_with_the_traffic_the_judge_counted(judge, cards):
    verdict = run(judge, cards, kernel_files(cards["ring-allreduce"]).solution.read_text(), world=3)
    assert verdict.correct is True, words(verdict)
    [evidence] = verdict.evidence
    assert evidence.ok is True and evidence.where == "cpu"
    assert evidence.words.startswith("3 ranks over gloo: traffic per rank for an all-reduce of 256 KiB over 3 ranks")
    assert "read by the judge from the kernel's counters" in evidence.words


def test_the_starter_through_rank_0_moves_enough_in_all_though_not_evenly(judge, cards):
    """A star is an all-reduce too: rank 0 moves 2(n-1) tensors, the others one each way; the ranks together move
    the 2(n-1) tensors every all-reduce must."""
    verdict = run(judge, cards, kernel_files(cards["ring-allreduce"]).starter.read_text(), world=3)
    assert verdict.correct is True, words(verdict)
    assert "rank 0 sent 512 KiB" in verdict.evidence[0].words


# -- the rules and the words, on their own -------------------------------------------------------------------
@pytest.mark.parametrize(
    "world, ring_per_rank",
    [(2, 1.0), (3, 4 / 3), (4, 1.5)],
    ids=["2 ranks", "3 ranks", "4 ranks"],
)
def test_a_ring_meets_the_all_reduce_floor_exactly_in_all(world, ring_per_rank):
    case = {"dtype": "float32", "numel": 3 * 4 * 1024}
    floor = sizes.all_reduce_floor(case, world)
    size = case["numel"] * 4
    assert floor.sent == (size,) * world and floor.received == (size,) * world
    assert floor.total == pytest.approx(world * ring_per_rank * size)  # 2(n-1)/n of the tensor per rank


def test_the_halves_floors_follow_each_ranks_part():
    case = {"dtype": "bfloat16", "numel": 7}
    gather = sizes.all_gather_floor(case, 3)  # parts of 3, 2, 2 elements
    assert gather.sent == (6, 4, 4) and gather.received == (8, 10, 10) and gather.total == 28
    scatter = sizes.reduce_scatter_floor(case, 3)
    assert scatter.sent == (8, 10, 10) and scatter.received == (6, 4, 4) and scatter.total == 28


def test_a_shortfall_names_the_rank_and_both_figures():
    from drill.judge.collective.traffic import Reading, shortfall, traffic_words

    floor = sizes.all_reduce_floor({"dtype": "float32", "numel": 393216}, 2)  # 1.5 MiB
    honest = [Reading(1572864 + 96, 1572864 + 96), Reading(1572864 + 96, 1572864 + 96)]
    assert shortfall(floor, honest, "counted") is None
    assert traffic_words(floor, honest, "counted") == (
        "traffic per rank for an all-reduce of 1.5 MiB over 2 ranks: sent 1.5 MiB, received 1.5 MiB of 1.5 MiB "
        "required; 3 MiB in all at the least (counted)"
    )
    token = [Reading(52, 52), Reading(52, 52)]
    assert shortfall(floor, token, "counted") == (
        "rank 0 moved too little for an all-reduce of 1.5 MiB over 2 ranks: sent 52 B, received 52 B, of 1.5 MiB sent "
        "and 1.5 MiB received required (counted); the result did not come through your sends and receives"
    )
    uneven = [Reading(1572864, 1572864), Reading(1572864, 1572864), Reading(1572864, 1572864)]
    three = sizes.all_reduce_floor({"dtype": "float32", "numel": 393216}, 3)
    assert "the ranks together sent 4.5 MiB, and an all-reduce of 1.5 MiB over 3 ranks needs 6 MiB" in str(
        shortfall(three, uneven, "counted")
    )
    assert shortfall(floor, [Reading(0, 0, ["NCCL's AllReduce (1.5 MiB)"]), *honest[1:]], "counted") == (
        "rank 0: NCCL's AllReduce (1.5 MiB) ran in your call (counted): build it from sends and receives"
    )


def test_nccls_record_is_read_for_bytes_sent_and_received_and_for_collectives():
    from drill.judge.collective.traffic import nccl_operations, nccl_reading

    text = (CHEATS / "nccl_coll.log").read_text()
    operations = nccl_operations(text)
    assert [op.name for op in operations] == [
        "AllReduce",
        "Send",
        "Recv",
        "Send",
        "Recv",
        "Send",
        "Recv",
        "ReduceScatter",
    ]
    reading = nccl_reading(operations)
    assert reading.sent == 2 * 131072 * 4 + 500002 * 2
    assert reading.received == 2 * 131072 * 4 + 500001 * 2
    assert reading.collectives == ["NCCL's AllReduce (4 B)", "NCCL's ReduceScatter (512 KiB)"]
    after_the_start = nccl_reading(nccl_operations(text.split("\n", 4)[4]))  # the judge's own all-reduce is before
    assert after_the_start.collectives == ["NCCL's ReduceScatter (512 KiB)"]


def test_nccls_record_is_counted_per_window_from_a_file(tmp_path):
    from drill.judge.collective.traffic import NcclLogs, nccl_log_path

    lines = (CHEATS / "nccl_coll.log").read_text().splitlines(keepends=True)
    logs = NcclLogs(tmp_path, 1)
    nccl_log_path(tmp_path, 0).write_text("".join(lines[:4]))
    before = logs.read()[0]
    nccl_log_path(tmp_path, 0).write_text("".join(lines[:8]))
    window = logs.read()[0].since(before)
    assert (window.sent, window.received, window.collectives) == (2 * 131072 * 4, 2 * 131072 * 4, [])


@pytest.mark.parametrize(
    "kernel, collective",
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "AllReduce"),
        ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE", "ReduceScatter"),
        ("ncclKernel_AllGather_RING_LL_Sum_int8_t", "AllGather"),
        ("ncclDevKernel_SendRecv", None),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", None),
        ("_ring_step_kernel", None),
    ],
)
def test_an_nccl_kernel_name_says_whether_a_built_in_collective_ran(kernel, collective):
    from drill.judge.collective.traffic import nccl_collective_kernel

    assert nccl_collective_kernel(kernel) == collective


def test_inputs_drawn_from_a_seed_are_the_same_each_time_exact_in_their_type_and_never_zero():
    torch = pytest.importorskip("torch")
    from drill.judge.collective.inputs import drawn

    for dtype in (torch.float32, torch.bfloat16):
        a = drawn(12345, 0, 100003, dtype, torch.device("cpu"))
        assert torch.equal(a, drawn(12345, 0, 100003, dtype, torch.device("cpu")))
        assert not torch.equal(a, drawn(12346, 0, 100003, dtype, torch.device("cpu")))
        assert not torch.equal(a, drawn(12345, 1, 100003, dtype, torch.device("cpu")))
        assert bool((a != 0).all()) and float(a.abs().max()) < 2
        assert torch.equal(a.double().to(dtype), a)  # exact in its type
        assert 0.9 < float(a.double().abs().mean()) < 1.1  # spread over (-2, 2)


KEEPS_NOTHING = """
import gc, tempfile, types
import torch, torch.distributed as dist
import torch.distributed._functional_collectives
dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)
from drill.judge.collective.point_to_point import refuse_collectives
from drill.kernel_shared.collective_source import MODULE_COLLECTIVES
refuse_collectives()
left = sorted(
    f"{o.__module__}.{o.__qualname__}"
    for o in gc.get_objects()
    if isinstance(o, types.FunctionType) and o.__name__ in MODULE_COLLECTIVES
    and o.__module__.startswith("torch.distributed")
)
stand_in = dist.all_reduce
print("left:", left)
kept = [cell.cell_contents for cell in stand_in.__closure__ or ()] + list(stand_in.__defaults__ or ())
kept.append(getattr(stand_in, "__wrapped__", None))
print("kept:", [type(k).__name__ for k in kept])
"""


def test_the_refusal_keeps_nothing_that_leads_back_to_a_built_in(tmp_path):
    """After the refusal no function of torch.distributed's collectives is left anywhere in the heap, and the stand-in
    holds nothing but its name (no function in a closure cell, a default or __wrapped__)."""
    pytest.importorskip("torch.distributed")
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", KEEPS_NOTHING], capture_output=True, text=True, timeout=stretched(300), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "left: []" in done.stdout, done.stdout
    assert "kept: ['str', 'NoneType']" in done.stdout, done.stdout  # its own name, and nothing else
