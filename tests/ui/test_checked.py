"""Pilot tests of the checked kinds: typed shapes, typed numbers, a picked bottleneck."""

import datetime as dt
import json

from textual.widgets import Input, OptionList, Static

from drill.start import AppOptions
from drill.ui.app import make_app
from drill.ui.markdown_view import MarkdownView
from tests.conftest import FixedClock, refresh, rows, settle, type_keys

NOW = dt.datetime(2026, 5, 10, 12, 0)

DECK = """\
cards:
  - id: t-shape
    kind: shape_trace
    topic: transformer-shapes
    prompt: Trace multi-head attention.
    given: "X: (B, S, D); H heads; Dh = D/H"
    aliases: {Dh: ["D/H"]}
    steps:
      - {label: "Q = X Wq", shape: "(B, S, D)"}
      - {label: "Q split into heads", shape: "(B, H, S, Dh)"}
      - {label: "scores", shape: "(B, H, S, S)"}
    answer: Scores are S by S per head.
    sources: [FACTS.md]
  - id: t-ledger
    kind: memory_ledger
    topic: serving
    params:
      model: {model: [opt-13b]}
      t: {choices: [2048]}
    prompt: "KV cache of {{ model.title }} for {{ t }} tokens in fp16?"
    answers:
      - {label: KV cache, expr: "kv_bytes(model, tokens=t, dtype='fp16')", unit: bytes}
    ledger:
      - {term: per token, formula: "2 × {{ model.layers }} × {{ model.hidden }} × 2 B", expr: "kv_bytes_per_token(model, dtype='fp16')", unit: bytes}
    answer: "vLLM quotes 800 KB a token for OPT-13B."
    sources: ["vLLM, arXiv:2309.06180"]
  - id: t-diag
    kind: diagnosis
    topic: profiling
    evidence: |
      dram__throughput.avg.pct_of_peak_sustained_elapsed   92.1 %
      sm__throughput.avg.pct_of_peak_sustained_elapsed     11.4 %
    prompt: What bounds this kernel?
    choices: [compute-bound, memory-bound, communication-bound]
    correct: memory-bound
    answer: DRAM is near peak while the SMs idle.
    rubric: [fuse the neighbouring elementwise op and re-measure DRAM bytes]
    sources: [FACTS.md]
"""


async def test_three_checked_kinds(tmp_path, write_deck):
    deck = write_deck(DECK)
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=3, new_order="deck"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        # shape trace: two steps right (different spellings), one wrong
        inputs = list(app.screen.query(Input))
        assert len(inputs) == 3
        inputs[0].value = "[B x S x D]"
        inputs[1].value = "B, H, S, D/H"
        inputs[2].value = "(B, S, S)"
        inputs[2].focus()
        await type_keys(pilot, "enter")
        await refresh(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "2/3 steps right" in verdict and "expected (B, H, S, S)" in verdict
        assert app.screen.suggested == 3
        assert "Scores are S by S" in app.screen.query_one("#answer", MarkdownView).source
        await type_keys(pilot, "enter")  # accept the suggestion
        await settle(pilot)
        (log,) = rows(data, "SELECT card_id, grade, answer FROM review_log")
        assert log[:2] == ("t-shape", 3) and json.loads(log[2])["right"] == 2

        # memory ledger: 2,048 tokens of OPT-13B at 819,200 B each, typed in the wrong unit family
        prompt = app.screen.query_one("#prompt", MarkdownView).source
        assert "2048 tokens" in prompt and "OPT" in prompt
        box = app.screen.query_one(Input)
        box.value = "1.5625 GB"  # 1.5625 GiB is right; written as GB it is not
        box.focus()
        await type_keys(pilot, "enter")
        await refresh(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "0/1 right" in verdict and "you wrote GB (1e9) but the value matches GiB (2^30)" in verdict
        assert app.screen.suggested == 1
        answer = app.screen.query_one("#answer", MarkdownView).source
        assert "2 × 40 × 5120 × 2 B" in answer
        await type_keys(pilot, "2")  # override the suggestion
        await settle(pilot)
        grade, answer_json = rows(data, "SELECT grade, answer FROM review_log WHERE card_id='t-ledger'")[0]
        assert grade == 2 and json.loads(answer_json)["draw"] == {"model": "opt-13b", "t": 2048}

        # diagnosis: pick memory-bound (wherever this review's order put it), type an experiment
        options = app.screen.query_one(OptionList)
        options.focus()
        await refresh(pilot)
        await type_keys(pilot, *["down"] * app.screen.form.choices.index("memory-bound"), "enter")
        assert app.screen.focused is app.screen.query_one("#experiment", Input)
        assert not app.screen.revealed  # enter on the choices only moves on
        await type_keys(pilot, *"fuse", "enter")
        await refresh(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "you chose memory-bound" in verdict
        assert app.screen.suggested in (4, 5)
        await type_keys(pilot, "enter")
        await settle(pilot)
        (answer_json,) = rows(data, "SELECT answer FROM review_log WHERE card_id='t-diag'")[0]
        record = json.loads(answer_json)
        assert {k: record[k] for k in ("choice", "correct", "experiment")} == {
            "choice": "memory-bound",
            "correct": True,
            "experiment": "fuse",
        }
        assert sorted(record["order"]) == ["communication-bound", "compute-bound", "memory-bound"]


async def test_wrong_diagnosis_names_the_right_one(tmp_path, write_deck):
    deck = write_deck(DECK)
    app = make_app(AppOptions(tmp_path / "d", [deck], clock=FixedClock(NOW), seed=1))
    app.session.queue = ["t-diag"]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.screen.query_one(OptionList).focus()
        await refresh(pilot)
        wrong = next(i for i, c in enumerate(app.screen.form.choices) if c != "memory-bound")
        await type_keys(pilot, *["down"] * wrong, "enter", "enter")
        await refresh(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert f"you chose {app.screen.form.choices[wrong]}" in verdict and "points to memory-bound" in verdict
        assert app.screen.suggested == 1


async def test_no_choice_made_is_not_checked_and_back_to_the_choices(tmp_path, write_deck):
    deck = write_deck(DECK)
    app = make_app(AppOptions(tmp_path / "d", [deck], clock=FixedClock(NOW), seed=1))
    app.session.queue = ["t-diag"]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "tab", "tab", *"fuse")  # past the choices, into the experiment: the last field
        assert app.screen.focused is app.screen.query_one("#experiment", Input)
        await type_keys(pilot, "enter")
        await refresh(pilot)
        verdict = str(app.screen.query_one("#verdict", Static).render())
        assert "choose a reading first" in verdict and "you chose" not in verdict
        assert not app.screen.revealed and app.screen.suggested is None
        assert app.screen.focused is app.screen.query_one(OptionList)
        await type_keys(pilot, "enter", "enter")  # the highlighted reading, then the experiment typed already
        await refresh(pilot)
        assert app.screen.revealed and app.screen.answer_record["experiment"] == "fuse"
        assert app.screen.answer_record["choice"] == app.screen.form.choices[0]


async def test_tab_reaches_the_choices_on_a_fresh_card_and_after_a_grade(tmp_path, write_deck):
    deck = write_deck(DECK)
    data = tmp_path / "d"
    app = make_app(AppOptions(data, [deck], clock=FixedClock(NOW), seed=1))
    app.session.queue = ["t-diag", "t-shape", "t-diag"]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "tab")
        assert app.screen.focused is app.screen.query_one(OptionList)
        await type_keys(pilot, "tab", *"try it", "shift+tab", "enter")  # back to the choices to choose one
        assert app.screen.query_one("#experiment", Input).value == "try it"
        assert app.screen.focused is app.screen.query_one("#experiment", Input)
        await type_keys(pilot, "enter", "2")  # check, then grade
        await settle(pilot)
        # the shape card: answer it and grade, leaving focus nowhere
        for box in app.screen.query(Input):
            box.value = "(B, S, D)"
        app.screen.query(Input).last().focus()
        await type_keys(pilot, "enter", "3")
        await settle(pilot)
        assert app.screen.card.id == "t-diag"
        await type_keys(pilot, "tab")
        assert app.screen.focused is app.screen.query_one(OptionList)
        await type_keys(pilot, "down", "enter", *"measure", "enter")
        await refresh(pilot)
        assert app.screen.revealed and app.screen.answer_record["experiment"] == "measure"


def one_card(tmp_path, write_deck, card_id):
    """The app on one card of DECK, its draws fixed."""
    return make_app(AppOptions(tmp_path / "data", [write_deck(DECK)], clock=FixedClock(NOW), seed=3, card_id=card_id))


def verdict_text(app):
    return str(app.screen.query_one("#verdict", Static).render())


async def test_a_number_that_cannot_be_read_is_sent_back_to_mend_not_marked_wrong(tmp_path, write_deck):
    data = tmp_path / "data"
    app = one_card(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"1.5625 GiBB", "enter")
        await settle(pilot)
        verdict = verdict_text(app)
        assert "KV cache:" in verdict and "Mend it, or clear it to count it wrong" in verdict
        assert not app.screen.revealed and app.screen.suggested is None
        box = app.screen.query_one(Input)
        assert app.screen.focused is box and not box.disabled
        assert rows(data, "SELECT count(*) FROM review_log") == [(0,)]
        await type_keys(pilot, "backspace", "enter")  # mended: 1.5625 GiB is right
        await settle(pilot)
        assert "1/1 right" in verdict_text(app)
        assert "right: " in verdict_text(app) and "expected" not in verdict_text(app)  # the value said once
        assert app.screen.revealed


async def test_a_blank_number_is_checked_as_wrong(tmp_path, write_deck):
    app = one_card(tmp_path, write_deck, "t-ledger")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "enter")
        await settle(pilot)
        assert "0/1 right" in verdict_text(app)
        assert app.screen.revealed


async def test_a_right_reading_with_no_next_experiment_suggests_4_at_most(tmp_path, write_deck):
    app = one_card(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.query_one(OptionList).focus()
        await refresh(pilot)
        await type_keys(pilot, *["down"] * app.screen.form.choices.index("memory-bound"), "enter", "enter")
        await settle(pilot)
        verdict = verdict_text(app)
        assert "you chose memory-bound" in verdict and "No next experiment written" in verdict
        assert app.screen.suggested == 4


async def burst(app, keys):
    """Queue every key at once, as a fast typist or a paste-like burst hands them to the terminal."""
    from textual import events

    for key in keys:
        app.post_message(events.Key({" ": "space"}.get(key, key), key if len(key) == 1 else None))


async def test_a_burst_from_the_evidence_into_the_choices_and_the_experiment_loses_nothing(tmp_path, write_deck):
    app = one_card(tmp_path, write_deck, "t-diag")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.screen.focused is app.screen.query_one("#body")  # a diagnosis opens on its evidence
        down = ["down"] * app.screen.form.choices.index("memory-bound")
        await burst(app, ["tab", *down, "enter", *"fuse it"])
        await settle(pilot)
        assert app.screen.form.choices[app.screen.form.chosen] == "memory-bound"
        assert app.screen.query_one("#experiment", Input).value == "fuse it"
        assert not app.screen.revealed


async def test_enter_then_text_in_a_burst_goes_back_into_the_field(tmp_path, concept_deck):
    app = make_app(AppOptions(tmp_path / "data", [concept_deck(1)], clock=FixedClock(NOW)))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await type_keys(pilot, *"warps", "escape")
        await settle(pilot)
        await burst(app, ["enter", *" of 32"])
        await settle(pilot)
        assert app.screen.query_one(Input).value == "warps of 32" and not app.screen.revealed


async def test_choosing_a_reading_takes_away_the_choose_first_words(tmp_path, write_deck):
    deck = write_deck(DECK)
    app = make_app(AppOptions(tmp_path / "d", [deck], clock=FixedClock(NOW), seed=1))
    app.session.queue = ["t-diag"]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_keys(pilot, "tab", "tab", "enter")  # to the experiment, then a check with no reading
        await refresh(pilot)
        assert "choose a reading first" in str(app.screen.query_one("#verdict", Static).render())
        await type_keys(pilot, "down", "enter")  # a reading chosen: the words no longer apply
        await settle(pilot)
        assert "choose a reading first" not in str(app.screen.query_one("#verdict", Static).render())
        assert not app.screen.revealed
