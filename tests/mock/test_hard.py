"""Hard mode: a numeric question withholds the GPU and model figures, its answers are checked within the looser
tolerance against the values the true figures give, and a mock asked so says it in its report."""

import dataclasses
import datetime as dt
import random

from textual.widgets import Input, OptionList

from drill.cards.loader import load_decks
from drill.cards.templating import render
from drill.mock.answers import grade_answer
from drill.mock.hard import HARD_TOLERANCE, hard_question
from drill.mock.render import render_markdown
from drill.start import AppOptions
from drill.ui.app import make_app
from drill.ui.mock_forms import MockLedgerForm
from drill.ui.mock_report_screen import MockReportScreen
from drill.ui.mock_screen import MockScreen
from drill.ui.mock_setup import MockSetupScreen
from tests.conftest import FixedClock, refresh, rows, type_keys
from tests.conftest import settle as settle_app

NOW = dt.datetime(2026, 5, 10, 12, 0)

# A batch of 32 beside Llama 3 8B's 32 layers: the card's own number stays, the model's figure goes.
DECODE = """\
cards:
  - id: h-decode
    kind: memory_ledger
    topic: serving
    params:
      model: {model: [llama-3-8b]}
      gpu: {gpu: [h200]}
      batch: {choices: [32]}
    prompt: >-
      {{ model.title }} ({{ params(model)|thousands }} parameters, {{ model.layers }} layers) decodes a
      batch of {{ batch }} sequences on one {{ gpu.title }} ({{ gpu.hbm_bandwidth / 1e12 }} TB/s of HBM
      bandwidth, {{ hbm_statement(gpu) }}). How long does one step take to read the bf16 weights once,
      and how many weights would fit?
    answers:
      - {label: weight read time per step, expr: "2 * params(model) / gpu.hbm_bandwidth", unit: seconds}
      - {label: models that fit in HBM, expr: "hbm_bytes(gpu) / (2 * params(model))", unit: count}
    ledger:
      - {term: bf16 weights, formula: "2 B × parameters", expr: "2 * params(model)", unit: bytes}
    answer: "Decode reads every weight once per step."
    sources: [FACTS.md]
"""


def decode_card(write_deck):
    return load_decks([write_deck(DECODE)]).cards["h-decode"]


DRAW = {"model": "llama-3-8b", "gpu": "h200", "batch": 32}


def test_a_hard_question_withholds_the_figures_and_keeps_the_cards_own_numbers(write_deck):
    card = decode_card(write_deck)
    true = render(card, DRAW)
    # the figures the prompt states in normal mode
    for figure in ("8,030,261,248", "4.8 TB/s", "143,771 MiB", "140.4 GiB", '"141 GB"', "SXM 141 GB"):
        assert figure in true.prompt
    asked = hard_question(card, DRAW)
    prompt = asked.rendered.prompt
    for figure in ("8,030,261,248", "4.8", "143,771", "140.4", "141", "32 layers"):
        assert figure not in prompt, figure
    assert "batch of 32 sequences" in prompt  # the card's own number is asked with
    assert "NVIDIA H200 SXM (" in prompt and "Llama 3 8B" in prompt
    assert {w.what for w in asked.withheld} == {
        "Llama 3 8B: parameter count",
        "Llama 3 8B: number of layers",
        "NVIDIA H200 SXM: HBM bandwidth",
        "NVIDIA H200 SXM: HBM capacity",
    }
    for w in asked.withheld:
        assert f"**{w.marker}**" in prompt and f"{w.marker} is {w.what}" in " ".join(prompt.split())
    assert f"±{HARD_TOLERANCE:.0%}" in prompt
    # the answers are the true figures' values, checked more loosely
    assert [a.value for a in asked.rendered.answers] == [a.value for a in true.answers]
    assert all(a.tolerance == HARD_TOLERANCE for a in asked.rendered.answers)


def test_a_figure_only_the_answers_read_is_named_from_memory_not_given(write_deck):
    deck = write_deck(
        DECODE.replace("{{ model.title }} ({{ params(model)|thousands }} parameters, {{ model.layers }} layers)", "A")
    )
    card = load_decks([deck]).cards["h-decode"]
    true = render(card, DRAW)
    assert "**Given:** Llama 3 8B: 8,030,261,248 parameters" in " ".join(true.prompt.split())
    asked = hard_question(card, DRAW)
    prompt = " ".join(asked.rendered.prompt.split())
    assert "8,030,261,248" not in prompt and "Given" not in prompt
    assert "also from memory: Llama 3 8B: parameter count" in prompt
    assert "Llama 3 8B: parameter count" in asked.from_memory


def test_every_numbered_ledger_card_of_the_decks_can_be_asked_hard():
    """Every numeric card renders in hard mode with a checkable answer per expected answer, each the true value."""
    cards = [c for c in load_decks().cards.values() if c.kind == "memory_ledger"]
    assert len(cards) > 50
    from drill.cards.templating import draw_params

    withheld = 0
    for card in cards:
        draw = draw_params(card, random.Random(card.id))
        asked = hard_question(card, draw)
        true = render(card, draw)
        assert [a.value for a in asked.rendered.answers] == [a.value for a in true.answers], card.id
        assert all(a.tolerance >= HARD_TOLERANCE for a in asked.rendered.answers)
        withheld += bool(asked.from_memory)
    assert withheld > len(cards) // 2


def ledger_record(card, given, working="", hard=True):
    record = {"draw": DRAW, "given": given, "working": working}
    return {**record, "hard": True} if hard else record


def test_a_hard_answer_within_the_loose_tolerance_is_accepted_and_outside_it_refused(write_deck):
    card = decode_card(write_deck)
    true = render(card, DRAW)
    read_s = true.answers[0].value
    fits = true.answers[1].value
    # recalled as "8B parameters at 4.8 TB/s": 0.4 % off the true figures' value
    near = [f"{2 * 8e9 / 4.8e12:.6g} s", f"{fits * 0.9:.6g}"]  # and the count 10 % off
    far = [f"{read_s * 1.2:.6g} s", f"{fits * 0.8:.6g}"]  # 20 % off each
    assert grade_answer(card, ledger_record(card, near)).score == 1.0
    assert grade_answer(card, ledger_record(card, far)).score == 0.0
    # in normal mode the card's own 2 % refuses the 10 % slip on the count
    assert grade_answer(card, ledger_record(card, near, hard=False)).score < 1.0
    # a step of the working recalled within the loose tolerance earns its credit
    wrong = ["1 s", "1"]
    step = grade_answer(card, ledger_record(card, wrong, working=f"weights {2 * 8e9 / 1e9:.4g} GB"))
    assert step.score > 0.0
    assert grade_answer(card, ledger_record(card, wrong, working="weights 20 GB")).score == 0.0


async def settle(pilot):
    await settle_app(pilot, pauses=2)


async def test_a_hard_mode_mock_from_setup_to_report(tmp_path, write_deck):
    """The learner turns hard mode on, reads the question without its figures, answers from memory (within the
    loose tolerance, not the card's), and the report says the mock was hard mode."""
    deck = write_deck(DECODE)
    data = tmp_path / "d"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=4))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "ctrl+o")
        await settle(pilot)
        setup = app.screen
        assert isinstance(setup, MockSetupScreen)
        await type_keys(pilot, "ctrl+r")  # hard mode
        await refresh(pilot)
        assert "hard mode" in str(setup.query_one("#stop").render())
        setup.query_one("#minutes", Input).value = "10"
        await refresh(pilot)
        setup.query_one("#mix", OptionList).focus()
        await type_keys(pilot, "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MockScreen) and screen.hard
        form = screen.form
        assert isinstance(form, MockLedgerForm) and form.hard
        shown = str(screen.query_one("#mprompt").source)
        assert "8,030,261,248" not in shown and "4.8" not in shown and "Hard mode, from memory" in shown
        assert "hard mode" in str(screen.query_one("#mtop").render())
        # from memory: 8e9 parameters, 4.8 TB/s, 141 GB (the label, 1.9 % under the reported capacity)
        boxes = form.inputs()
        boxes[0].value = "weights 16 GB"
        boxes[1].value = f"{2 * 8e9 / 4.8e12 * 1e3:.4g} ms"
        boxes[2].value = f"{141e9 / 16e9:.3g}"
        boxes[2].focus()
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, MockReportScreen)
        report = app.screen.report
    assert report.questions[0]["score"] == 1.0
    assert report.hard.startswith("Hard mode")
    assert f"±{HARD_TOLERANCE:.0%}" in render_markdown(report)
    ((stored,),) = rows(data, "SELECT answer FROM mock_answer")
    assert '"hard": true' in stored


async def test_drill_mock_hard_opens_the_setup_with_hard_mode_on(tmp_path, write_deck):
    from drill.cli import build_parser
    from drill.cli.app import app_options
    from drill.cli.mock import mock_asked

    deck = write_deck(DECODE)
    argv = ["mock", "--hard", "--quick", "--data-dir", str(tmp_path / "d"), "--decks", str(deck)]
    args = build_parser(argv)[0].parse_args(argv)
    options = app_options(args, mock=mock_asked(args))  # as `drill mock` opens the app
    app = make_app(dataclasses.replace(options, clock=FixedClock(NOW)))
    assert app.mock_asked is not None and app.mock_asked.hard is True
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        setup = app.screen
        assert isinstance(setup, MockSetupScreen) and setup.hard
        assert "hard mode" in str(setup.query_one("#stop").render())
        await type_keys(pilot, "ctrl+r")  # and off again
        await refresh(pilot)
        assert not setup.hard and "hard mode" not in str(setup.query_one("#stop").render())
