"""Snapshots of the main screens at 100×30: each card kind before and after checking,
the kernel screen with a verdict, and the start with a broken deck.

A changed snapshot is reviewed by eye (`pytest --snapshot-update` after looking
at the report); the clock, the draws and the choice order are fixed here.
"""

import datetime as dt
import sys
import textwrap

import pytest

from drill import paths
from drill.kernel.client import JudgeClient
from drill.ui.app import DrillApp
from tests.conftest import FixedClock, refresh, type_keys
from tests.test_ui_checked import DECK

NOW = dt.datetime(2026, 5, 10, 12, 0)
SIZE = (100, 30)
CONCEPT = """\
  - id: k-concept
    kind: concept
    topic: gpu-arch
    prompt: "Why is the warp the unit of scheduling on an NVIDIA GPU?"
    answer: "The 32 threads of a warp share one instruction stream; the scheduler issues for the warp."
    rubric: ["names the shared instruction stream", "names divergence as the cost"]
    sources: [FACTS.md]
"""
ANSWERS = {
    "k-concept": [*"32 threads issue together", "enter"],
    "t-shape": [*"(B, S, D)", "enter", *"(B, H, S, Dh)", "enter", *"(B, H, S, D)", "enter"],
    "t-ledger": [*"1.5625 GB", "enter"],
    "t-diag": ["tab", "down", "enter", *"fuse the add", "enter"],
}


def app_on(tmp_path, card_id: str) -> DrillApp:
    decks = tmp_path / "decks"
    decks.mkdir(exist_ok=True)
    deck = decks / "deck.yaml"
    deck.write_text(textwrap.dedent(DECK).rstrip("\n") + "\n" + CONCEPT, encoding="utf-8")
    app = DrillApp(tmp_path / "data", [deck], clock=FixedClock(NOW), seed=7, new_order="deck", card_id=card_id)
    return app


async def settle(pilot) -> None:
    """Wait for workers, then stop every cursor blinking so the picture does not depend on timing."""
    await pilot.app.workers.wait_for_complete()
    for field in pilot.app.screen.query("Input, TextArea"):
        field.cursor_blink = False
    await refresh(pilot)


@pytest.mark.parametrize("card_id", list(ANSWERS))
@pytest.mark.parametrize("checked", [False, True], ids=["before", "after"])
def test_card_screens(snap_compare, tmp_path, card_id, checked):
    async def run_before(pilot) -> None:
        await settle(pilot)
        if checked:
            await type_keys(pilot, *ANSWERS[card_id])
            await settle(pilot)

    assert snap_compare(app_on(tmp_path, card_id), terminal_size=SIZE, run_before=run_before)


def test_kernel_screen_with_a_verdict(snap_compare, tmp_path):
    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text(encoding="utf-8"), encoding="utf-8")

    def judge(_data_dir):
        return JudgeClient([sys.executable, "-m", "drill.kernel.fake_child", "--gpu"], start_timeout=30)

    app = DrillApp(tmp_path / "data", [deck], clock=FixedClock(NOW), card_id="reduce", judge_factory=judge)

    async def run_before(pilot) -> None:
        await settle(pilot)
        await type_keys(pilot, "space")
        await settle(pilot)
        await type_keys(pilot, "f5")
        for _ in range(200):
            await settle(pilot)
            if pilot.app.screen.verdict is not None:
                break

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_start_with_a_broken_deck_names_it(snap_compare, tmp_path):
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "good.yaml").write_text(textwrap.dedent(DECK), encoding="utf-8")
    (decks / "broken.yaml").write_text(
        "deck: Broken\ncards:\n  - id: x\n    kind: concept\n    prompt: [unclosed\n", encoding="utf-8"
    )
    app = DrillApp(tmp_path / "data", [decks], clock=FixedClock(NOW), seed=7, new_order="deck")

    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
