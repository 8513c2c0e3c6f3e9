"""Collective cards judged on the CPU with gloo (2, 3 and 4 ranks), as CI and a laptop judge them.

The bundled starters and answers pass; wrong rings are caught (a chunk skipped, the wrong neighbour, a buffer
read before its receive completed, a built-in collective called directly or through an alias); a hang and a
rank that dies end in words naming the rank and what it was doing, within the timeout, with no rank left.
"""

import os
import re
import time
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import check_kernel_card, kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job
from tests.conftest import stretched

pytestmark = pytest.mark.xdist_group("collectives")

CARDS = ("ring-allreduce", "reduce-scatter", "all-gather")
RING = """\
import torch
import torch.distributed as dist


def all_reduce(tensor):
    rank, world = dist.get_rank(), dist.get_world_size()
    chunks = tensor.tensor_split(world)
    right, left = (rank + 1) % world, (rank - 1) % world
    for step in range(world - 1):
        send = chunks[(rank - step) % world]
        mine = chunks[(rank - step - 1) % world]
        got = torch.empty_like(mine)
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, send, right), dist.P2POp(dist.irecv, got, left)])
        for w in works:
            w.wait()
        mine += got
    for step in range(world - 1):
        send = chunks[(rank + 1 - step) % world]
        mine = chunks[(rank - step) % world]
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, send, right), dist.P2POp(dist.irecv, mine, left)])
        for w in works:
            w.wait()
"""
SKIPS_A_CHUNK = RING.replace(
    "for step in range(world - 1):\n        send = chunks[(rank - step)",
    "for step in range(world - 2):\n        send = chunks[(rank - step)",
)
WRONG_NEIGHBOUR = RING.replace("right, left = (rank + 1) % world", "right, left = (rank + 2) % world")
READS_EARLY = RING.replace(
    "        for w in works:\n            w.wait()\n        mine += got\n",
    "        mine += got\n        for w in works:\n            w.wait()\n",
)
DIRECT = "import torch.distributed as dist\n\n\ndef all_reduce(tensor):\n    dist.all_reduce(tensor)\n"
ALIAS = "from torch.distributed import all_reduce as add_everywhere\n\n\ndef all_reduce(tensor):\n    add_everywhere(tensor)\n"
INDIRECT = "import torch.distributed as dist\n\nadd_up = getattr(dist, 'all_' + 'reduce')\n\n\ndef all_reduce(tensor):\n    add_up(tensor)\n"
HANGS = (
    "import torch\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n"
    "    other = torch.empty_like(tensor)\n    dist.recv(other, src=(dist.get_rank() + 1) % dist.get_world_size())\n"
)
DIES = "import os\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n    if dist.get_rank() == 1:\n        os._exit(7)\n    dist.recv(tensor, src=1)\n"
RAISES = (
    "import torch.distributed as dist\n\n\ndef all_reduce(tensor):\n    if dist.get_rank() == 1:\n"
    "        raise ValueError('rank one gives up')\n    dist.recv(tensor, src=1)\n"
)
MISMATCHED = (
    "import torch\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n    if dist.get_rank() == 0:\n"
    "        dist.send(torch.ones(tensor.numel() + 5), dst=1)\n    elif dist.get_rank() == 1:\n        dist.recv(tensor, src=0)\n"
)


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "collective-kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(cpu_judge):
    """The worker's CPU judge, shared with tests/judge/test_collective_cheats.py (the same xdist group)."""
    pytest.importorskip("torch.distributed")
    return cpu_judge


def run(judge, cards, source, card_id="ring-allreduce", world=None, timeout=None):
    """The judge's verdict on `source`, within `timeout` seconds (by default a minute stretched by the load)."""
    job = kernel_job(cards[card_id])
    if world is not None:
        job["world"] = world
    return judge.run(job, source, timeout=stretched(60) if timeout is None else timeout, timing="none")


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the judge's ranks, if any were left)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry.name))
    return out


def test_the_cards_check_clean(cards):
    assert set(CARDS) <= set(cards)
    for card_id in CARDS:
        assert check_kernel_card(cards[card_id]) == []


@pytest.mark.parametrize("card_id", CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_starters_and_answers_are_right_with_two_three_and_four_ranks(judge, cards, card_id, which):
    verdict = run(judge, cards, getattr(kernel_files(cards[card_id]), which).read_text(), card_id)
    assert verdict.errors == []
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]
    names = [c.name for c in verdict.cases]
    for world in (2, 3, 4):
        assert f"{world} ranks: float32 n=7" in names and f"{world} ranks: bfloat16 n=65,537" in names
    assert any("timing needs two GPUs" in n for n in verdict.not_checked)


def test_the_answer_cut_into_many_pieces_on_two_rings_is_right(judge, cards):
    """The answer's pipelining and second ring, exercised on small tensors by shrinking its constants."""
    answer = kernel_files(cards["ring-allreduce"]).solution.read_text()
    small = answer.replace("PIECE_BYTES = 128 * 2**20", "PIECE_BYTES = 256").replace(
        "TWO_RINGS_FROM_BYTES = 16 * 2**20", "TWO_RINGS_FROM_BYTES = 64"
    )
    assert small != answer
    verdict = run(judge, cards, small, world=3)
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]


def test_a_ring_that_skips_a_chunk_is_wrong(judge, cards):
    verdict = run(judge, cards, SKIPS_A_CHUNK, world=3)
    assert verdict.correct is False
    first = next(c for c in verdict.cases if not c.ok)
    assert "elements wrong" in first.message and "expected" in first.message


def test_a_ring_that_sends_to_the_wrong_neighbour_hangs_and_is_stopped_in_words(judge, cards):
    limit = stretched(40)
    started = time.monotonic()
    verdict = run(judge, cards, WRONG_NEIGHBOUR, world=3, timeout=limit)
    assert time.monotonic() - started < limit and not verdict.timed_out
    assert verdict.correct is False
    text = " ".join(verdict.errors)
    assert "no progress" in text and "rank 0:" in text and "isend to rank 2" in text and "(line 13)" in text
    assert children(judge.pid) == []


def test_a_ring_that_reads_a_buffer_before_its_receive_completed_is_wrong_every_time(judge, cards):
    for _ in range(2):  # deterministic: NaN is there until wait(), however fast the data came
        verdict = run(judge, cards, READS_EARLY, world=2)
        failed = [c for c in verdict.cases if not c.ok]
        assert verdict.correct is False and failed
        assert "= nan" in failed[0].message and "wait()" in failed[0].message


def test_the_ring_itself_is_right(judge, cards):
    """The ring the broken ones above are made from: their faults are the edits, not the ring."""
    verdict = run(judge, cards, RING, world=3)
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]


@pytest.mark.parametrize("source, line", [(DIRECT, 5), (ALIAS, 1)])
def test_a_built_in_collective_is_refused_before_anything_runs(judge, cards, source, line):
    verdict = run(judge, cards, source)
    assert verdict.compiled is False and verdict.cases == []
    assert verdict.messages[0]["line"] == line
    assert "all_reduce is a built-in collective" in verdict.messages[0]["message"]


def test_a_built_in_collective_reached_at_run_time_is_refused_too(judge, cards):
    verdict = run(judge, cards, INDIRECT, world=2)
    assert verdict.correct is False
    text = " ".join(verdict.errors)
    assert re.search(r"rank \d at line 7: torch\.distributed\.all_reduce is a built-in collective", text), text
    assert children(judge.pid) == []


def test_a_hang_ends_in_words_naming_each_rank_and_its_operation(judge, cards):
    limit = stretched(40)
    started = time.monotonic()
    verdict = run(judge, cards, HANGS, world=2, timeout=limit)
    assert time.monotonic() - started < limit and not verdict.timed_out
    text = " ".join(verdict.errors)
    assert "made no progress" in text
    assert "rank 0: case float32 n=1, run 1: blocked in op 1: recv from rank 1 (1 float32) (line 7)" in text
    assert "rank 1: case float32 n=1, run 1: blocked in op 1: recv from rank 0" in text
    assert children(judge.pid) == []


@pytest.mark.parametrize(
    "source, words",
    [
        (DIES, "rank 1 died: it exited with code 7 (case float32 n=1, run 1"),
        (RAISES, "rank 1 at line 6: ValueError: rank one gives up (case float32 n=1, run 1"),
        (MISMATCHED, "rank 1 died: it was killed by SIGABRT"),
    ],
)
def test_a_rank_that_dies_or_raises_is_named_and_no_rank_is_left(judge, cards, source, words):
    verdict = run(judge, cards, source, world=2)
    assert verdict.correct is False
    assert words in " ".join(verdict.errors), verdict.errors
    assert children(judge.pid) == []


def test_ranks_started_as_fresh_processes_judge_the_same(tmp_path, cards):
    """The way ranks start on GPUs (a new Python each), tried here on the CPU."""
    pytest.importorskip("torch.distributed")
    env = {"DRILL_JUDGE_CPU": "1", "DRILL_RANKS_SPAWN": "1"}
    with JudgeClient(data_dir=tmp_path, env=env) as client:
        verdict = run(client, cards, kernel_files(cards["ring-allreduce"]).solution.read_text(), world=2)
        assert verdict.correct is True
        dead = run(client, cards, DIES, world=2)
        assert "rank 1 died: it exited with code 7" in " ".join(dead.errors)
        assert children(client.pid) == []


def test_a_world_this_machine_cannot_run_is_a_usage_error(judge, cards):
    verdict = run(judge, cards, RING, world=1)
    assert verdict.correct is None and "2 to 8 ranks" in " ".join(verdict.errors)


def test_no_launch_folder_is_left_behind(judge, cards):
    run(judge, cards, RING, world=2)
    workdirs = list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"drill-judge-{judge.pid}-*"))
    assert all(not list(w.glob("ranks-*")) for w in workdirs)


def test_drill_kernel_run_takes_the_ranks_of_a_collective_card(tmp_path, capsys):
    pytest.importorskip("torch.distributed")
    from drill.cli import main

    os.environ["DRILL_JUDGE_CPU"] = "1"
    try:
        code = main(["kernel", "run", "ring-allreduce", "--world", "3", "--data-dir", str(tmp_path)])
    finally:
        del os.environ["DRILL_JUDGE_CPU"]
    out = capsys.readouterr().out
    assert code == 0 and "float32 n=7" in out and "3 ranks" in out and "2 ranks" not in out
    assert main(["kernel", "run", "reduce", "--world", "2", "--data-dir", str(tmp_path)]) == 2
    assert "--world is for collective cards" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["kernel", "run", "ring-allreduce", "--world", "9"])
    assert "2 to 8 ranks" in capsys.readouterr().err


@pytest.mark.parametrize("card_id", CARDS)
def test_the_judge_computes_each_ranks_expected_output_from_the_seeds_alone(cards, card_id):
    """What the judge runs outside the ranks: every rank's inputs drawn again from its seed, the expected output of
    each, an honest output accepted whole and sampled, a changed element refused in both."""
    torch = pytest.importorskip("torch")
    import importlib.util

    from drill.judge.collective.check import CheckKit, compare, compare_sampled, expected

    path = kernel_files(cards[card_id]).harness
    spec = importlib.util.spec_from_file_location(f"harness_{card_id.replace('-', '_')}", path)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    world = 3
    case = {"name": "n=1,001", "dtype": "bfloat16", "numel": 1001}
    seeds = [11, 22, 33]
    want = expected(harness, case, seeds)
    mine = []
    for rank, seed in enumerate(seeds):  # what each rank draws, on its own
        kit = CheckKit(rank, world)
        kit.begin_case(seed)
        mine.append(harness.make_inputs(case, kit)["x"])
    total = None if card_id == "all-gather" else sum(x.double() for x in mine)  # the parts differ in length there
    for rank in range(world):
        if card_id == "ring-allreduce":
            honest = total.to(torch.bfloat16)
        elif card_id == "all-gather":
            honest = torch.cat(mine)
        else:
            start, length = CheckKit(rank, world).shards(1001)[rank]
            honest = total[start : start + length].to(torch.bfloat16)
        assert compare(harness, want, rank, honest).ok, rank
        index = torch.arange(0, honest.numel(), 7)
        assert compare_sampled(want, rank, index, honest[index].double()).ok
        changed = honest.clone()
        changed[14] += 1.0
        check = compare(harness, want, rank, changed)
        assert not check.ok and f"rank {rank}: 1 of {honest.numel():,} elements wrong" in check.message
        assert not compare_sampled(want, rank, index, changed[index].double()).ok


WRONG_WHEN_TIMED = (
    RING
    + """

calls = [0]
_ring = all_reduce


def all_reduce(tensor):
    calls[0] += 1
    if calls[0] <= 1 or tensor.numel() < 4096:  # right in the small cases and the warm-up, then not
        _ring(tensor)
"""
)


@pytest.mark.parametrize("source, timed_ok", [("answer", True), (WRONG_WHEN_TIMED, False)], ids=["answer", "wrong"])
def test_the_timed_path_runs_on_gloo_with_the_hosts_clock(tmp_path, cards, source, timed_ok):
    """The path GPUs take to time a collective (NCCL's own timed first in the ranks, before the learner's file is
    read; each call started by the judge's word and a token round; the output sampled where the judge asks after
    the call), run here on gloo with the host's clock instead of CUDA events."""
    pytest.importorskip("torch.distributed")
    import importlib.util
    import types

    from drill.judge.collective.rank_group import RankSpec
    from drill.judge.collective.run import _launch

    files = kernel_files(cards["ring-allreduce"])
    spec_ = importlib.util.spec_from_file_location("harness_timed_ring", files.harness)
    loaded = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(loaded)
    small = [{"name": "64 KiB", "dtype": "float32", "numel": 16384, "reps": 3, "warmup": 1}]
    harness = types.SimpleNamespace(**vars(loaded))
    harness.timing_cases = lambda world: small
    text = files.solution.read_text() if source == "answer" else source
    spec = RankSpec(
        world=2,
        backend="gloo",
        harness=str(files.harness),
        learner_path="",
        filename="ring_allreduce.py",
        entry="all_reduce",
        pins={},
        pg_timeout_s=stretched(60.0),
        baseline_cases=small,
    )
    events = []
    ok = _launch(harness, spec, text, tmp_path, time.monotonic() + stretched(120), events.append, False, "time")
    assert ok is timed_ok, events
    [case] = [e for e in events if e["event"] == "case"]
    if timed_ok:
        [timing] = [e for e in events if e["event"] == "timing"]
        assert case["ok"] and timing["name"] == "64 KiB" and timing["reps"] == 3 and timing["world"] == 2
        assert timing["ms"] > 0 and timing["torch_ms"] > 0 and timing["baseline"] == "NCCL"
    else:
        assert not case["ok"] and not [e for e in events if e["event"] == "timing"]
        assert (
            "wrong at the timed size 64 KiB, though the small cases passed: timed call 1 at 64 KiB: rank"
            in (case["message"])
        )
        assert "elements wrong" in case["message"]
    assert not list(tmp_path.glob("ranks-*"))


@pytest.mark.parametrize(
    "load, cores, stall",
    [
        (0.3, 2, 8.0),  # an idle machine: the wait as written
        (2.0, 2, 8.0),  # every core busy, none waiting: still the same
        (5.0, 2, 20.0),  # two and a half runnable processes a core: two and a half times as long
        (6.0, 16, 8.0),  # a big host with a few busy cores
        (40.0, 2, 32.0),  # however busy, a hang is still called: at most four times the wait
    ],
)
def test_the_hang_wait_stretches_with_the_machines_load(monkeypatch, load, cores, stall):
    from drill.judge.collective import rank_group

    monkeypatch.setattr(rank_group.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(rank_group.os, "cpu_count", lambda: cores)
    assert rank_group.stretched_by_load(rank_group.STALL_SECONDS) == stall
