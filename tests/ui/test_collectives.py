"""Collective cards in the rest of drill: the verdict's NCCL ratio (text, grade, kernel screen), stats' kernel
progress, the kernels track, and mocks that offer them only where two GPUs are."""

import datetime as dt
import sys

import pytest
from textual.app import App
from textual.widgets import Static

from drill import paths
from drill.cards.loader import load_decks
from drill.judge.fake import COLLECTIVE_TIMING
from drill.kernel.client import JudgeClient
from drill.kernel.verdict import VerdictBuilder, format_verdict, suggest_kernel_grade
from drill.mock.plan import load_tracks, make_plan
from drill.store.reader import read_progress
from drill.store.store import Store
from drill.study.standing import topic_figures
from drill.ui.kernel_screen import KernelScreen
from drill.ui.verdict_view import one_line
from tests.conftest import settle, stretched, type_keys, until


@pytest.fixture(scope="module")
def cards():
    return load_decks([paths.cards_dir() / "collective-kernels.yaml"]).cards


def collective_verdict():
    builder = VerdictBuilder("ring-allreduce")
    builder.feed({"event": "started", "card": "ring-allreduce", "device": "2 GPUs", "gpu": True})
    builder.feed({"event": "compiled", "ok": True, "log": "", "messages": [], "resources": []})
    builder.feed({"event": "case", "name": "float32 n=7", "ok": True, "message": "", "max_error": 0.0, "tolerance": 0})
    builder.feed(dict(COLLECTIVE_TIMING))
    builder.feed({"event": "finished"})
    return builder.result()


def test_the_verdict_reads_as_a_ratio_to_nccl_bus_bandwidth():
    verdict = collective_verdict()
    assert verdict.errors == [] and verdict.impossible == []
    assert one_line(verdict) == "correct, 0.80× NCCL's bus bandwidth at 256 MiB"
    text = format_verdict(verdict)
    assert (
        "time 256 MiB: 1.200 ms, algbw 224 GB/s, busbw 224 GB/s on 2 GPUs; NCCL 0.960 ms, busbw 280 GB/s: 0.80× NCCL"
        in text
    )
    assert suggest_kernel_grade(verdict, 85) == 5  # 80 % of NCCL against a target of 85: within 90 % of it


def test_a_collective_attempt_counts_in_the_topics_kernel_progress(tmp_path, cards):
    store = Store(tmp_path)
    store.record_kernel_attempt("ring-allreduce", "src", collective_verdict().to_json())
    store.close()
    today = dt.date.today()
    figures = {t.topic: t for t in topic_figures(cards, read_progress(tmp_path, today), today)}
    assert figures["collectives"].kernel_best_pct_of_target == pytest.approx(80.0 / 85 * 100, abs=0.1)


def test_the_kernels_track_has_the_collective_cards():
    assert "collectives" in load_tracks()["kernels"]["topics"]


@pytest.mark.parametrize("gpus, offered", [(0, False), (1, False), (2, True), (4, True)])
def test_mocks_offer_a_collective_card_only_with_two_gpus(gpus, offered):
    deck = load_decks([paths.cards_dir() / "collectives.yaml", paths.cards_dir() / "collective-kernels.yaml"]).cards
    asked = set()
    for seed in range(10):
        plan = make_plan(deck, {}, minutes=45, judge_available=True, gpus=gpus, seed=seed)
        asked |= {q.card_id for q in plan.questions if q.kind == "kernel"}
    assert bool(asked) is offered


class Host(App):
    def __init__(self, screen):
        super().__init__()
        self.kernel = screen

    def on_mount(self):
        self.push_screen(self.kernel)


class NoStore:
    def record_kernel_attempt(self, card_id, source, result):
        return 1


def verdict_text(screen):
    return str(screen.query_one("#kverdict", Static).render())


async def test_the_kernel_screen_shows_the_ratio_to_nccl(tmp_path, cards):
    judge = JudgeClient([sys.executable, "-m", "drill.judge.fake", "--gpu"], start_timeout=stretched(30))
    screen = KernelScreen(cards["ring-allreduce"], store=NoStore(), data_dir=tmp_path, judge=judge)
    try:
        async with Host(screen).run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            assert "def all_reduce" in screen.editor.text
            screen.editor.insert("# fake: collective\n", (0, 0))
            await type_keys(pilot, "f5")
            await until(pilot, lambda: "256 MiB" in verdict_text(screen), "the fake judge's verdict")
            text = verdict_text(screen)
            assert "busbw 224 GB/s on 2 GPUs; NCCL 0.960 ms, busbw 280 GB/s: 0.80× NCCL" in text
            assert "correct, 0.80× NCCL's bus bandwidth at 256 MiB · suggested grade 5" in text
    finally:
        judge.close()


@pytest.mark.xdist_group("collectives")  # the worker of the collective judge tests, whose CPU judge it shares
async def test_the_kernel_screen_judges_the_starter_with_gloo_and_says_timing_needs_gpus(tmp_path, cards, cpu_judge):
    pytest.importorskip("torch.distributed")
    screen = KernelScreen(cards["ring-allreduce"], store=NoStore(), data_dir=tmp_path, judge=cpu_judge)
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "f5")
        await until(pilot, lambda: "timing needs two GPUs" in verdict_text(screen), "the gloo verdict", seconds=120)
        text = verdict_text(screen)
        assert "✓ 4 ranks: bfloat16 n=65,537" in text and "\ncorrect\n" in text
