"""Snapshots of every screen at 100×30 and 80×24: each card kind before and after checking (a diagnosis
with ncu evidence too, also scrolled sideways), the kernel screen with a verdict, the mock's setup and a
question, the browser, the start with a broken deck, and the stats screen with an interview date set (its
others are in tests/ui/test_stats.py).

A changed snapshot is reviewed by eye (`pytest --snapshot-update` after looking
at the report); the clock, the draws and the choice order are fixed here.
"""

import datetime as dt
import sys
import textwrap

import pytest

from drill import paths
from drill.config.settings import Settings
from drill.kernel.client import JudgeClient
from drill.start import AppOptions
from drill.ui.app import DrillApp, make_app
from drill.ui.markdown_view import CodeStrip
from tests.conftest import FixedClock, refresh, stretched, type_keys
from tests.ui import test_stats
from tests.ui.test_checked import DECK
from tests.ui.test_mock import MORE, open_mock
from tests.ui.test_stats import open_stats

NOW = dt.datetime(2026, 5, 10, 12, 0)
SIZE = (100, 30)
SIZES = [pytest.param(SIZE, id="100x30"), pytest.param((80, 24), id="80x24")]
seeded = test_stats.seeded  # the fixture: eight weeks of reviews, a mock and kernel runs
CONCEPT = """\
  - id: k-concept
    kind: concept
    topic: gpu-arch
    prompt: "Why is the warp the unit of scheduling on an NVIDIA GPU?"
    answer: "The 32 threads of a warp share one instruction stream; the scheduler issues for the warp."
    rubric: ["names the shared instruction stream", "names divergence as the cost"]
    sources: [FACTS.md]
  - id: k-ncu
    kind: diagnosis
    topic: flashattention
    evidence: |
      $ ncu --section LaunchStats --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed python decode_bench.py
        flash_fwd_kernel (1, 1, 32)x(128, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
          Section: Launch Statistics
          ---------------------------------------------------------- ----------- ------------
          Block Size                                                                    128
          Grid Size                                                                      32
          Waves Per SM                                                                 0.12
          ---------------------------------------------------------- ----------- ------------
          dram__throughput.avg.pct_of_peak_sustained_elapsed                   %        19.21
          gpu__time_duration.sum                                         usecond       834.57
    prompt: "Decode attention, batch 1, 32,768 cached tokens on an H100 SXM: what limits it?"
    choices: [memory-bound (HBM bandwidth), too few blocks to fill the SMs, shared-memory bank conflicts]
    correct: too few blocks to fill the SMs
    answer: "32 blocks on 132 SMs is 0.12 waves: most SMs idle, DRAM at 19 % of its peak."
    rubric: [split the KV sequence across blocks and re-measure DRAM throughput]
    sources: [FACTS.md]
"""
ANSWERS = {
    "k-concept": [*"32 threads issue together", "enter"],
    "t-shape": [*"(B, S, D)", "enter", *"(B, H, S, Dh)", "enter", *"(B, H, S, D)", "enter"],
    "t-ledger": [*"1.5625 GB", "enter"],
    "t-diag": ["tab", "down", "down", "enter", *"fuse the add", "enter"],  # a wrong reading, for its verdict
    "k-ncu": ["tab", "down", "enter", *"split the KV sequence", "enter"],
}


def app_on(tmp_path, card_id: str) -> DrillApp:
    decks = tmp_path / "decks"
    decks.mkdir(exist_ok=True)
    deck = decks / "deck.yaml"
    deck.write_text(textwrap.dedent(DECK).rstrip("\n") + "\n" + CONCEPT, encoding="utf-8")
    app = make_app(
        AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=7, new_order="deck", card_id=card_id)
    )
    return app


async def settle(pilot) -> None:
    """Wait for workers, then stop every cursor blinking so the picture does not depend on timing."""
    await pilot.app.workers.wait_for_complete()
    for field in pilot.app.screen.query("Input, TextArea"):
        field.cursor_blink = False
    await refresh(pilot)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("card_id", list(ANSWERS))
@pytest.mark.parametrize("checked", [False, True], ids=["before", "after"])
def test_card_screens(snap_compare, tmp_path, card_id, checked, size):
    async def run_before(pilot) -> None:
        await settle(pilot)
        if checked:
            await type_keys(pilot, *ANSWERS[card_id])
            await settle(pilot)

    assert snap_compare(app_on(tmp_path, card_id), terminal_size=size, run_before=run_before)


def test_ncu_evidence_scrolled_sideways_at_80x24(snap_compare, tmp_path):
    """The evidence as printed, moved sideways (as shift+wheel or its scrollbar move it) to the values column."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.screen.query_one(CodeStrip).scroll_to(x=24, animate=False)
        await settle(pilot)

    assert snap_compare(app_on(tmp_path, "k-ncu"), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.parametrize("size", [pytest.param((120, 36), id="120x36"), *SIZES])
def test_kernel_screen_with_a_verdict(snap_compare, tmp_path, size):
    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text(encoding="utf-8"), encoding="utf-8")

    def judge(_data_dir):
        return JudgeClient([sys.executable, "-m", "drill.judge.fake", "--gpu"], start_timeout=stretched(30))

    app = make_app(AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), card_id="reduce"), judge_factory=judge)

    async def run_before(pilot) -> None:
        await settle(pilot)
        await type_keys(pilot, "space")
        await settle(pilot)
        await type_keys(pilot, "f5")
        for _ in range(200):
            await settle(pilot)
            if pilot.app.screen.verdict is not None:
                break
        await settle(pilot)  # the verdict drawn and every cursor stopped, however late it came

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("step", ["setup", "question"])
def test_mock_screens(snap_compare, tmp_path, monkeypatch, step, size):
    from drill.mock.run import MockRun

    start = MockRun.__init__

    def on_a_stopped_clock(run, plan, cards, clock, **options) -> None:  # the countdown reads 30:00 at every step
        start(run, plan, cards, lambda: 1000.0, **options)

    monkeypatch.setattr(MockRun, "__init__", on_a_stopped_clock)
    deck = tmp_path / "decks" / "deck.yaml"
    deck.parent.mkdir()
    deck.write_text(textwrap.dedent(DECK) + MORE, encoding="utf-8")
    app = make_app(AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=4))

    async def run_before(pilot) -> None:
        await settle(pilot)
        if step == "setup":
            await type_keys(pilot, "ctrl+o")
        else:
            await open_mock(pilot, pilot.app)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_browser(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await type_keys(pilot, "ctrl+f")
        await settle(pilot)

    assert snap_compare(app_on(tmp_path, "t-diag"), terminal_size=size, run_before=run_before)


def test_start_with_a_broken_deck_names_it(snap_compare, tmp_path):
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "good.yaml").write_text(textwrap.dedent(DECK), encoding="utf-8")
    (decks / "broken.yaml").write_text(
        "deck: Broken\ncards:\n  - id: x\n    kind: concept\n    prompt: [unclosed\n", encoding="utf-8"
    )
    app = make_app(AppOptions(tmp_path / "data", [decks], clock=FixedClock(NOW), seed=7, new_order="deck"))

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_stats_with_an_interview_date(snap_compare, seeded, size):
    """Readiness on the date first: per topic, furthest from the target first, then today's share of the plan."""
    deck, data, _ = seeded
    settings = Settings(interview_date=dt.date(2026, 5, 27), minutes_per_day=30)
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1, settings=settings))

    async def run_before(pilot) -> None:
        await open_stats(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
