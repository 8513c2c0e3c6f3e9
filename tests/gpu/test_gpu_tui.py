"""The whole path on a GPU: the review app opens a kernel card, the learner's edit is judged
by the real judge child, the answer is revealed and the grade lands in the database.

Needs textual and sqlmodel beside torch/triton (on the lent GPU they travel as wheels).
"""

import datetime as dt
import sqlite3

import pytest

pytestmark = pytest.mark.gpu

textual = pytest.importorskip("textual", reason="the app's UI packages are not installed here")

from drill import paths  # noqa: E402
from drill.start import AppOptions  # noqa: E402
from drill.store.reader import DB_NAME  # noqa: E402
from drill.ui.app import make_app  # noqa: E402
from drill.ui.kernel_screen import KernelScreen  # noqa: E402


async def settle(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("card_id, answer", [("reduce", "reduce.cu"), ("softmax", "softmax.py")])
async def test_kernel_card_from_review_to_grade(tmp_path, card_id, answer):
    data = tmp_path / "data"
    app = make_app(AppOptions(data, None, clock=lambda: dt.datetime(2026, 5, 10, 12)))
    app.session.queue = [card_id]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KernelScreen)
        screen.editor.load_text((paths.answers_dir() / answer).read_text())
        await pilot.press("f5")
        for _ in range(600):  # the first run starts the judge and compiles
            await settle(pilot)
            if screen.verdict is not None:
                break
            await pilot.pause(0.1)
        verdict = screen.verdict
        assert verdict is not None and verdict.gpu and verdict.compiled and verdict.correct, verdict.errors
        assert verdict.timing is not None and verdict.timing.pct_of_ceiling > 50
        print(card_id, f"{verdict.timing.gbps:.0f} GB/s", f"{verdict.timing.pct_of_ceiling:.1f} %")
        await pilot.press("f9")
        await settle(pilot)
        await pilot.press("enter")  # accept the suggested grade
        await settle(pilot)
        assert not isinstance(app.screen, KernelScreen)
    conn = sqlite3.connect(data / DB_NAME)
    (grade,) = conn.execute("SELECT grade FROM review_log WHERE card_id=?", (card_id,)).fetchone()
    (attempts,) = conn.execute("SELECT count(*) FROM kernel_attempt WHERE card_id=?", (card_id,)).fetchone()
    assert grade >= 4 and attempts == 1
