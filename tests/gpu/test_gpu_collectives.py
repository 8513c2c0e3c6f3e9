"""On two GPUs or more: the collective cards judged over NCCL, one rank per GPU (run with `pytest -m gpu`).

The starters and answers correct and timed against NCCL; faults on NCCL (a hang, a rank that dies, a built-in
collective reached at run time, a buffer read before its receive completed) reported in words, with no rank
process and no GPU memory of theirs left behind.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from drill import paths
from drill.cards.loader import load_decks
from drill.kernel.cards import kernel_files
from drill.kernel.client import JudgeClient
from drill.kernel.job import kernel_job

pytestmark = pytest.mark.gpu

CARDS = ("ring-allreduce", "reduce-scatter", "all-gather")
SIZES = ("256 MiB", "16 MiB", "1 MiB")
RESULTS: dict[str, dict] = {}


def gpus() -> int:
    import torch

    return torch.cuda.device_count()


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "collective-kernels.yaml"]).cards


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    if gpus() < 2:
        pytest.skip("collective cards are timed on two GPUs or more")
    client = JudgeClient(data_dir=tmp_path_factory.mktemp("data"))
    yield client
    client.close()
    folder = os.environ.get("DRILL_GPU_LOG_DIR")
    if folder:
        Path(folder, "gpu_collective_verdicts.json").write_text(json.dumps(RESULTS, indent=1))


def judged(judge, cards, card_id, source, key, timing="all", timeout=180):
    verdict = judge.run(kernel_job(cards[card_id]), source, timeout=timeout, timing=timing)
    RESULTS[key] = verdict.to_json()
    return verdict


def rank_processes() -> list[str]:
    """Every process running a rank (their command lines), on this machine."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if "drill.judge.collective.rank_process" in cmdline:
                out.append(f"{entry.name}: {cmdline}")
    return out


def gpu_apps(judge, wait_s: float = 5.0) -> list[str]:
    """Processes holding GPU memory, other than the judge itself (the driver may take a moment to let go)."""
    deadline = time.monotonic() + wait_s
    while True:
        text = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        held = [line for line in text.splitlines() if line.strip() and line.split(",")[0].strip() != str(judge.pid)]
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.2)


@pytest.mark.parametrize("card_id", CARDS)
@pytest.mark.parametrize("which", ["starter", "solution"])
def test_bundled_collectives_are_correct_and_timed_against_nccl(judge, cards, card_id, which):
    source = getattr(kernel_files(cards[card_id]), which).read_text()
    verdict = judged(judge, cards, card_id, source, f"{card_id}:{which}")
    assert verdict.errors == []
    assert verdict.correct is True, [(c.name, c.message) for c in verdict.cases if not c.ok]
    assert [t.name for t in verdict.timings] == list(SIZES)
    for t in verdict.timings:
        assert t.world == gpus() and t.baseline == "NCCL"
        assert t.gbps > 0 and t.ceiling_gbps and t.vs_torch and t.vs_torch > 0
    assert verdict.pct_of_ceiling == pytest.approx(100 * verdict.vs_torch)


HANG = (
    "import torch\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n"
    "    other = torch.empty_like(tensor)\n    dist.recv(other, src=(dist.get_rank() + 1) % dist.get_world_size())\n"
)
DIES = (
    "import os\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n"
    "    if dist.get_rank() == 1:\n        os._exit(7)\n    dist.recv(tensor, src=1)\n    tensor.sum().item()\n"
)
INDIRECT = "import torch.distributed as dist\n\nadd_up = getattr(dist, 'all_' + 'reduce')\n\n\ndef all_reduce(tensor):\n    add_up(tensor)\n"
EARLY = (
    "import torch\nimport torch.distributed as dist\n\n\ndef all_reduce(tensor):\n"
    "    right, left = (dist.get_rank() + 1) % dist.get_world_size(), (dist.get_rank() - 1) % dist.get_world_size()\n"
    "    got = torch.empty_like(tensor)\n"
    "    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, tensor, right), dist.P2POp(dist.irecv, got, left)])\n"
    "    tensor += got\n    for w in works:\n        w.wait()\n"
)


@pytest.mark.parametrize(
    "name, source, words",
    [
        ("hang", HANG, ["no progress", "rank 0", "rank 1", "recv from rank 1"]),
        ("dies", DIES, ["rank 1 died", "exited with code 7"]),
        ("indirect", INDIRECT, ["torch.distributed.all_reduce is a built-in collective", "line 7"]),
    ],
)
def test_faults_on_nccl_end_in_words_leaving_no_rank_and_no_gpu_memory(judge, cards, name, source, words):
    started = time.monotonic()
    verdict = judged(judge, cards, "ring-allreduce", source, f"fault:{name}", timing="none", timeout=90)
    assert time.monotonic() - started < 90
    assert verdict.correct is False and not verdict.timed_out, verdict.errors
    text = " ".join(verdict.errors)
    for word in words:
        assert word in text, text
    assert rank_processes() == []
    assert gpu_apps(judge) == []


def test_a_buffer_read_before_its_receive_completed_is_nan_on_nccl(judge, cards):
    verdict = judged(judge, cards, "ring-allreduce", EARLY, "fault:early", timing="none")
    failed = [c for c in verdict.cases if not c.ok]
    assert verdict.correct is False and failed
    assert "NaN" in failed[0].message and "wait()" in failed[0].message
