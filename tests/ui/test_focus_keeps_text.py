"""Focus never selects an answer: tab, shift+tab or enter into a filled field puts the cursor after its text,
and the next key adds to the answer instead of replacing it."""

from __future__ import annotations

from tests.conftest import settle, type_keys
from tests.ui.test_keys import make_app


async def test_tab_shift_tab_and_enter_into_a_filled_field_keep_its_text(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-shape")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first, second = app.screen.form.inputs()[:2]
        app.screen.set_focus(first)
        await settle(pilot)
        await type_keys(pilot, *"(B, S, D)", "enter", *"(256,)")
        assert app.screen.focused is second
        await type_keys(pilot, "shift+tab", "x")
        assert app.screen.focused is first
        assert first.value == "(B, S, D)x"
        await type_keys(pilot, "tab", "5")
        assert app.screen.focused is second
        assert second.value == "(256,)5"
        await type_keys(pilot, "shift+tab", "backspace", "enter", "7")
        assert first.value == "(B, S, D)"
        assert second.value == "(256,)57"
        assert not app.screen.revealed


async def test_shift_tab_back_to_a_mock_reading_keeps_it(tmp_path, write_deck):
    from textual.widgets import Input

    from drill.start import AppOptions
    from drill.ui.app import make_app
    from tests.conftest import FixedClock
    from tests.ui.test_mock import DIAG_DECK, NOW, open_mock

    app = make_app(AppOptions(tmp_path / "d", [write_deck(DIAG_DECK)], clock=FixedClock(NOW), seed=4))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_mock(pilot, app, minutes="20")
        await type_keys(pilot, "tab", *"memory-bound", "enter", *"fuse it")
        reading = screen.query_one("#reading", Input)
        experiment = screen.query_one("#experiment", Input)
        await type_keys(pilot, "shift+tab", "Z")
        assert reading.value == "memory-boundZ"
        await type_keys(pilot, "tab", "!")
        assert experiment.value == "fuse it!"
