"""`drill mock --round KIND` opens the setup with a round's length; a quick mock with the quiz's."""

import datetime as dt

import pytest
from textual.widgets import Input

from drill import paths
from drill.mock.plan import DEFAULT_MINUTES
from drill.mock.rounds import DEFAULT_ROUND_MINUTES
from drill.start import AppOptions, MockAsked
from drill.ui.app import make_app
from drill.ui.mock_setup import MockSetupScreen
from tests.conftest import FixedClock
from tests.conftest import settle as settle_app

NOW = dt.datetime(2026, 5, 10, 12, 0)
SERVING = paths.cards_dir() / "scenarios-serving.yaml"


@pytest.mark.parametrize(
    "options, minutes",
    [
        ({"round": "serving"}, DEFAULT_ROUND_MINUTES),
        ({"quick": True}, DEFAULT_MINUTES),
        ({}, DEFAULT_MINUTES),
        ({"round": "serving", "minutes": 38}, 38),
    ],
    ids=["round", "quick", "neither", "round with --minutes"],
)
async def test_the_setup_opens_with_the_length_the_command_line_asked_for(tmp_path, options, minutes):
    assert DEFAULT_ROUND_MINUTES != DEFAULT_MINUTES
    app = make_app(AppOptions(tmp_path / "data", [SERVING], clock=FixedClock(NOW), mock=MockAsked(**options)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_app(pilot, pauses=2)
        assert isinstance(app.screen, MockSetupScreen)
        assert app.screen.query_one("#minutes", Input).value == str(minutes)
