"""The newest kernel cards as a learner drives them, started with `drill --card ID`: open the editor, type a line,
run the file in the real judge on this machine's CPU, read the verdict, reveal the answer and grade it once.

No GPU here: the Triton cards run under the Triton interpreter on small shapes (correctness only), and the CUDA card
is compiled with NVRTC and not run, so its verdict says correctness and timing need a GPU.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.widgets import Static

from drill import paths
from drill.kernel.client import JudgeClient
from drill.start import AppOptions
from drill.store.reader import DB_NAME
from drill.ui.app import make_app
from drill.ui.kernel_screen import KernelScreen
from drill.ui.markdown_view import MarkdownView
from tests.conftest import FixedClock, settle, stretched, type_keys, until

JUDGE_SECONDS = 600.0  # a cold judge imports torch and triton, then interprets every case: slow on a loaded machine

# one worker runs the module, so one judge child (the `judge` fixture) imports torch and triton for all its cards
pytestmark = pytest.mark.xdist_group("kernel-cards-app")
CPU_NOTE = "CPU (no GPU): CUDA kernels are compiled only; Triton runs in its interpreter"
TRITON_SPEED_NOTE = "not checked: speed: no GPU here; the Triton interpreter checked correctness on small shapes only"
CUDA_NOT_RUN = "not checked: correctness and speed: no GPU here, so the CUDA kernel was only compiled"
NO_SUGGESTION = "no suggested grade: reveal the reference and grade yourself"


@dataclass(frozen=True)
class NewCard:
    """One of the new kernel cards, the file it starts from, and the grade key the learner presses at the answer."""

    card_id: str
    starter: str
    comment: str  # a comment line in the card's language, typed above the starter
    grade_key: str  # "enter" takes the suggested grade

    @property
    def language(self) -> str:
        return "cuda" if self.starter.endswith(".cu") else "triton"

    @property
    def fence(self) -> str:
        """The code fence of the reference shown at the answer."""
        return "cuda" if self.language == "cuda" else "python"


NEW_CARDS = [
    NewCard("layernorm-backward", "layernorm_backward.py", "# my notes: two stages for the column sums", "enter"),
    NewCard("paged-decode-attention", "paged_decode_attention.py", "# my notes: one program per KV head", "4"),
    NewCard("fused-cross-entropy", "fused_cross_entropy.py", "# my notes: online log-sum-exp", "2"),
    NewCard("scan", "scan.cu", "// my notes: decoupled look-back", "5"),
    NewCard("fp8-block-gemm", "fp8_block_gemm.py", "# my notes: scale each 128-wide step", "enter"),
    NewCard("moe-grouped-gemm-kernel", "moe_grouped_gemm.py", "# my notes: one flat list of tiles", "3"),
]


class LentJudge(JudgeClient):
    """The judge the app would start (this machine's, no options), lent to one app after another: an app closes
    its judge when it exits, and this one stays warm for the next card's app. A learner's app keeps its judge warm
    from one kernel card to the next the same way; what each test checks is the card, not the judge's start."""

    def close(self) -> None:
        pass

    def close_for_good(self) -> None:
        super().close()


@pytest.fixture(scope="module")
def judge():
    client = LentJudge()
    yield client
    client.close_for_good()


def widget_text(screen: KernelScreen, widget_id: str) -> str:
    return str(screen.query_one(widget_id, Static).render())


def triton_kernels(source: str) -> list[str]:
    """The names of the @triton.jit functions a file defines."""
    return re.findall(r"@triton\.jit\s*\ndef (\w+)", source)


def review_rows(data_dir):
    conn = sqlite3.connect(data_dir / DB_NAME)
    try:
        return conn.execute("SELECT card_id, grade FROM review_log").fetchall()
    finally:
        conn.close()


def check_verdict(card: NewCard, starter: str, verdict: str) -> None:
    """What the verdict of the starter file, run on the CPU, says for this card."""
    assert CPU_NOTE in verdict, verdict
    if card.language == "triton":
        assert "correct · suggested grade" in verdict.splitlines()[0], verdict
        assert "\ncorrect\n" in verdict and "WRONG" not in verdict, verdict
        assert re.search(r"^✓ \S", verdict, re.MULTILINE), verdict  # the cases the interpreter checked
        assert "✗" not in verdict, verdict
        assert TRITON_SPEED_NOTE in verdict, verdict
        [evidence] = [line for line in verdict.splitlines() if line.startswith("ops seen on the CPU in ")]
        assert "launches of your file's Triton kernels" in evidence, evidence
        kernels = triton_kernels(starter)
        assert kernels, starter
        for name in kernels:
            assert f"{name} ×" in evidence, evidence
    else:
        assert verdict.startswith(CUDA_NOT_RUN), verdict
        assert re.search(r"^scan: \d+ regs · \d+ B shared · \d+ B stack$", verdict, re.MULTILINE), verdict
        assert NO_SUGGESTION in verdict, verdict
        assert "\ncorrect\n" not in verdict and "WRONG" not in verdict, verdict


@pytest.mark.parametrize("card", NEW_CARDS, ids=[c.card_id for c in NEW_CARDS])
async def test_a_new_kernel_card_is_edited_run_revealed_and_graded_once(tmp_path, card, judge):
    data_dir = tmp_path / "data"
    starter = (paths.kernels_dir() / card.starter).read_text()
    # the judge's time limit as a learner on a busy machine would set it: the interpreter runs every case
    Path(os.environ["DRILL_CONFIG"]).write_text(f"judge_timeout = {stretched(120):.0f}\n")
    app = make_app(
        AppOptions(
            data_dir,
            [paths.cards_dir() / "kernels.yaml"],
            clock=FixedClock(dt.datetime(2026, 5, 10, 12, 0)),
            card_id=card.card_id,
        ),
        judge_factory=lambda data_dir: judge,
    )
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.session.current.id == card.card_id
        await type_keys(pilot, "space")  # open the editor
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, KernelScreen) and screen.card.id == card.card_id
        assert screen.editor.has_focus and screen.language == card.language
        assert screen.editor.text == starter
        assert "Not run yet" in widget_text(screen, "#kstatus")

        await type_keys(pilot, "home", *card.comment, "enter")
        assert screen.editor.text == card.comment + "\n" + starter

        await type_keys(pilot, "f5")
        await until(pilot, lambda: not screen.running, "the judge's verdict", JUDGE_SECONDS)
        await until(pilot, lambda: widget_text(screen, "#kverdict").strip() != "", "the verdict shown")
        verdict = widget_text(screen, "#kverdict")
        check_verdict(card, starter, verdict)
        suggested = screen.suggested
        if card.language == "triton":
            assert suggested is not None and f"suggested grade {suggested}" in verdict
        else:
            assert suggested is None

        await type_keys(pilot, "f9")  # reveal
        await settle(pilot)
        answer = screen.query_one("#kanswer-md", MarkdownView).source
        reference = (paths.answers_dir() / card.starter).read_text().rstrip()
        assert f"```{card.fence}\n{reference}" in answer
        writeup = (paths.answers_dir() / card.starter).with_suffix(".md").read_text()
        assert writeup.splitlines()[0] in answer
        assert f"--- yours/{card.starter}\n+++ answer/{card.starter}" in answer
        assert "\n-" + card.comment + "\n" in answer  # the learner's line, gone from the reference
        last_run = "correctness not checked" if card.language == "cuda" else "correct"
        assert f"**Your last run:** {last_run}\n" in answer
        bar = widget_text(screen, "#kbar")
        assert ("suggested" in bar) == (suggested is not None), bar

        await type_keys(pilot, card.grade_key)
        await settle(pilot)
        assert not isinstance(app.screen, KernelScreen)
    grade = suggested if card.grade_key == "enter" else int(card.grade_key)
    assert review_rows(data_dir) == [(card.card_id, grade)]
