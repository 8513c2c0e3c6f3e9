"""A verdict line shows the learner's answer trimmed, with single spaces; the log keeps it as typed."""

from __future__ import annotations

from textual.widgets import Static

from tests.conftest import settle, type_keys
from tests.ui.test_keys import make_app


def verdict_text(app) -> str:
    return str(app.screen.query_one("#verdict", Static).render())


async def test_a_ledger_verdict_echoes_the_answer_without_stray_spaces(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"  1.5625   GiB ", "enter")
        await settle(pilot)
        verdict = verdict_text(app)
        assert "KV cache: 1.5625 GiB" in verdict, verdict
        assert "1.5625  " not in verdict and ":  " not in verdict
        assert app.screen.answer_record["given"] == ["  1.5625   GiB "]


async def test_a_shape_verdict_echoes_each_step_without_stray_spaces(tmp_path, write_deck):
    app, _ = make_app(tmp_path, write_deck, "t-shape")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        first = app.screen.form.inputs()[0]
        app.screen.set_focus(first)
        await settle(pilot)
        await type_keys(pilot, *" (B,  S, D) ", "enter", *"(B, H, S, Dh)", "enter", *"(B,   H, S, T)", "enter")
        await settle(pilot)
        verdict = verdict_text(app)
        assert "1. (B, S, D)" in verdict, verdict
        assert "3. (B, H, S, T)" in verdict, verdict
        assert "  S" not in verdict and "   H" not in verdict
        assert app.screen.answer_record["steps"][0] == " (B,  S, D) "
