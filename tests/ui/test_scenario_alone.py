"""A scenario card is asked only in a mock round: neither `drill --card` nor the browser opens it on its own,
where it had no answer form and a space then a digit typed at it revealed and graded it."""

import datetime as dt

import pytest

from drill import paths
from drill.cli import main
from drill.start import AppOptions
from drill.store.reader import DB_NAME
from drill.study.choice import MockOnlyCard
from drill.ui.app import make_app
from drill.ui.browser import BrowserScreen
from tests.conftest import FixedClock, rows, settle, type_keys
from tests.ui.test_browser import open_browser, search, shown_ids

NOW = dt.datetime(2026, 5, 10, 12, 0)
SERVING = paths.cards_dir() / "scenarios-serving.yaml"
SCENARIO = "scenario-serve-chat-70b"


def test_drill_card_refuses_a_scenario_and_says_where_it_is_asked(tmp_path, capsys):
    with pytest.raises(MockOnlyCard):
        make_app(AppOptions(tmp_path / "data", [SERVING], clock=FixedClock(NOW), card_id=SCENARIO))
    assert main(["--card", SCENARIO, "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert f"'{SCENARIO}' is a scenario card, asked in stages in a mock round (`drill mock --round`)" in err
    assert not (tmp_path / "data" / DB_NAME).exists()  # refused before any store was opened


async def test_enter_on_a_scenario_in_the_browser_says_so_and_grades_nothing(tmp_path, concept_deck):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [SERVING, concept_deck(1)], clock=FixedClock(NOW), seed=1))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await open_browser(pilot)
        await search(pilot, f"id:{SCENARIO}")
        assert shown_ids(app) == [SCENARIO]
        await type_keys(pilot, "tab", "enter", *"hello 4", "enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert any(
            f"{SCENARIO} is a scenario card, asked in stages in a mock round" in n.message for n in app._notifications
        )
        assert rows(data, "SELECT count(*) FROM review_log") == [(0,)]
