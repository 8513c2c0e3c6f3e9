"""A kernel card reopened in the same review shows its last verdict and offers its suggested grade again."""

from __future__ import annotations

import datetime as dt
import sys

from textual.widgets import Static

from drill import paths
from drill.kernel.client import JudgeClient
from drill.start import AppOptions
from drill.ui.app import make_app
from drill.ui.kernel_screen import KernelScreen
from tests.conftest import FixedClock, settle, stretched, type_keys


def screen_text(screen, widget_id):
    return str(screen.query_one(widget_id, Static).render())


async def test_the_last_verdict_comes_back_when_the_kernel_card_reopens(tmp_path):
    deck = tmp_path / "decks" / "kernels.yaml"
    deck.parent.mkdir()
    deck.write_text((paths.cards_dir() / "kernels.yaml").read_text())
    judges = []

    def factory(data_dir):
        judges.append(JudgeClient([sys.executable, "-m", "drill.judge.fake", "--gpu"], start_timeout=stretched(30)))
        return judges[-1]

    app = make_app(
        AppOptions(tmp_path / "data", [deck], clock=FixedClock(dt.datetime(2026, 5, 10, 12, 0))), judge_factory=factory
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        first = app.session.current.id
        await type_keys(pilot, "space")
        await settle(pilot)
        await type_keys(pilot, "f5")
        await settle(pilot)
        ran = screen_text(app.screen, "#kverdict")
        assert "suggested grade" in ran, ran
        await type_keys(pilot, "escape", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, KernelScreen)
        await type_keys(pilot, "space")
        await settle(pilot)
        reopened = app.screen
        assert isinstance(reopened, KernelScreen) and reopened.card.id == first
        assert "Not run yet" not in screen_text(reopened, "#kstatus")
        assert screen_text(reopened, "#kverdict") == ran
        suggested = reopened.suggested
        assert suggested is not None
        await type_keys(pilot, "f9")
        await settle(pilot)
        assert screen_text(reopened, "#kbar").startswith(f"suggested {suggested} (enter)")
