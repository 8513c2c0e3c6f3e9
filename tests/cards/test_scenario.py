"""Scenario cards: the format's check with file:line problems, and the stage cards that share one draw."""

import random
import re

import pytest

from drill.cards.loader import load_decks
from drill.cards.scenario import (
    Dimension,
    StageType,
    is_clarify,
    scenario_of,
    stage_card,
    stages_of,
)
from drill.mock.answers import grade_answer

SCENARIO = """\
deck: Test scenarios
cards:
  - id: sc-decode
    kind: scenario
    round: debug
    topic: serving
    params:
      model: {model: [llama-3-8b]}
      gpu: {gpu: [h100-sxm]}
      b: {choices: [16, 32]}
      c: {choices: [2048, 4096]}
    opening: |
      A decode service on {{ model.title }} is slower than its team expected.
    prompt: |
      {{ model.title }} in bf16 decodes on one {{ gpu.title }}
      ({{ gpu.hbm_bandwidth / 1e12 }} TB/s) at batch {{ b }}, each sequence
      holding {{ c | thousands }} tokens of context.
    answer: Decode reads the weights and the KV cache every step.
    stages:
      - type: clarify
        prompt: Which numbers would you ask for?
        asks:
          - "batch size actually running"
          - "context length per sequence"
          - "measured tokens per second"
      - type: estimate
        prompt: What is the decode step's lower bound?
        answers:
          - label: decode step lower bound
            expr: "decode_time_lower_bound(model, gpu, batch=b, context=c)"
            unit: seconds
        ledger:
          - term: "KV, read per step"
            formula: "KV bytes/token × {{ c }} × {{ b }}"
            expr: "kv_bytes(model, tokens=c, batch=b)"
            unit: bytes
      - type: diagnose
        prompt: Throughput is 40 % of the bound at batch {{ b }}. What do you look at first?
        rubric:
          - "gaps between kernels from CPU launch overhead, closed by CUDA graphs"
          - "achieved HBM bandwidth of the decode kernels against the peak"
      - type: twist
        set: {b: 64}
        prompt: "**Twist: batch {{ b }}.** The step's lower bound now?"
        answers:
          - label: decode step lower bound at the new batch
            expr: "decode_time_lower_bound(model, gpu, batch=b, context=c)"
            unit: seconds
    sources: [FACTS.md]
"""


def load(write_deck, text, name="deck.yaml"):
    return load_decks([write_deck(text, name)], deep=True)


def test_a_scenario_loads_and_passes_the_deck_check(write_deck):
    decks = load(write_deck, SCENARIO)
    assert decks.problems == []
    card = decks.cards["sc-decode"]
    stages = stages_of(card)
    assert [s.type for s in stages] == [StageType.CLARIFY, StageType.ESTIMATE, StageType.DIAGNOSE, StageType.TWIST]
    assert [s.dimension for s in stages] == [
        Dimension.CLARIFYING,
        Dimension.ESTIMATION,
        Dimension.DEBUGGING,
        Dimension.ESTIMATION,
    ]
    assert stages[3].changes == {"b": 64}


def test_the_bundled_serving_scenarios_pass_the_deck_check():
    from drill import paths

    decks = load_decks([paths.cards_dir() / "scenarios-serving.yaml"], deep=True)
    assert decks.problems == [] and len(decks.cards) >= 2
    for card in decks.cards.values():
        assert card.kind == "scenario" and card.sources
        assert len([s for s in stages_of(card) if not s.twist]) >= 3


def line_of(text: str) -> int:
    """The line of SCENARIO that starts with `text` (after its indent)."""
    return next(i for i, line in enumerate(SCENARIO.splitlines(), 1) if line.strip().startswith(text))


# (what is changed, into what, the line the problem is reported at, the problem): a stage's keys are checked as
# the deck loads, at the stage's line; what a stage renders to is checked by `drill check`, at the card's line
BROKEN = [
    ("type: diagnose", "type: diagnosis", line_of("- type: diagnose"), r"stages\[2\]: `type` must be one of"),
    ("set: {b: 64}", "set: {q: 64}", line_of("- type: twist"), r"stages\[3\]: set: `q` is not one of the scenario's"),
    ("round: debug", "round: games", line_of("round:"), r"round: must be one of serving, training, debug, topology"),
    (
        "        asks:\n",
        "        rubric:\n",
        line_of("- type: clarify"),
        r"stages\[0\]: unknown key `rubric` for a clarify",
    ),
    (
        '            expr: "decode_time_lower_bound(model, gpu, batch=b, context=c)"\n            unit: seconds\n        ledger:',
        '            expr: "decode_time_lower_bound(model, gpu, batch=b, context=c + 50000)"\n            unit: seconds\n'
        "        ledger:",
        3,
        r"stages\[1\]: answers\[0\]: computed from .*which the prompt does not state",
    ),
    ("{{ b }}. What do you look at first?", "{{ bb }}. What do you look at first?", 3, r"stages\[2\]: prompt: .*bb"),
]


@pytest.mark.parametrize(("old", "new", "line", "message"), BROKEN, ids=[m[:30] for _, _, _, m in BROKEN])
def test_the_deck_check_names_the_file_line_and_stage_of_each_problem(write_deck, old, new, line, message):
    assert old in SCENARIO
    decks = load(write_deck, SCENARIO.replace(old, new, 1))
    lines = [str(p) for p in decks.problems]
    assert any(re.search(rf"deck\.yaml:{line}: sc-decode: " + message, problem) for problem in lines), lines
    assert "sc-decode" not in decks.cards or line == 3  # a stage that cannot be read keeps its card out


def test_a_scenario_needs_three_stages_before_its_twists_and_a_twist_one_way_to_answer(write_deck):
    two = SCENARIO.replace(
        """      - type: diagnose
        prompt: Throughput is 40 % of the bound at batch {{ b }}. What do you look at first?
        rubric:
          - "gaps between kernels from CPU launch overhead, closed by CUDA graphs"
          - "achieved HBM bandwidth of the decode kernels against the peak"
""",
        "",
    )
    lines = [str(p) for p in load(write_deck, two).problems]
    assert any("a scenario asks at least 3 stages before its twists" in line for line in lines), lines
    both = SCENARIO.replace(
        'prompt: "**Twist: batch {{ b }}.** The step\'s lower bound now?"', 'prompt: "now?"\n        rubric: [x y z]'
    )
    lines = [str(p) for p in load(write_deck, both).problems]
    assert any("one of them" in line for line in lines), lines


def test_a_scenario_has_a_twist_and_stage_minutes_a_round_can_scale(write_deck):
    twistless = SCENARIO[: SCENARIO.index("      - type: twist")] + "    sources: [FACTS.md]\n"
    lines = [str(p) for p in load(write_deck, twistless).problems]
    assert any("needs at least one twist" in line for line in lines), lines
    long = SCENARIO.replace("      - type: estimate\n", "      - type: estimate\n        minutes: 30\n", 1)
    lines = [str(p) for p in load(write_deck, long).problems]
    assert any("give 44 minutes in all; give 15 to 40" in line for line in lines), lines


def draw_card(write_deck):
    card = load(write_deck, SCENARIO).cards["sc-decode"]
    return card, {"model": "llama-3-8b", "gpu": "h100-sxm", "b": 32, "c": 4096}


def test_every_stage_is_asked_with_the_one_draw_and_a_twist_changes_only_its_parameter(write_deck):
    from drill.cards.templating import draw_params, render

    card, draw = draw_card(write_deck)
    stages = stages_of(card)
    estimate = stage_card(card, stages[1], draw)
    diagnose = stage_card(card, stages[2], draw)
    twist = stage_card(card, stages[3], draw)
    assert estimate.kind == "memory_ledger" and diagnose.kind == "concept" and twist.kind == "memory_ledger"
    assert {estimate.id, diagnose.id, twist.id} == {"sc-decode#2", "sc-decode#3", "sc-decode#4"}
    assert scenario_of(twist.id) == "sc-decode"
    # any draw of a stage card is the round's draw: its parameters are pinned
    for seed in range(5):
        assert draw_params(estimate, random.Random(seed)) == draw
        assert draw_params(twist, random.Random(seed)) == {**draw, "b": 64}
    shown = render(estimate, draw)
    assert "batch 32" in shown.prompt and "4,096 tokens" in shown.prompt
    assert "batch 32" in diagnose.prompt and "4,096 tokens" in diagnose.prompt
    later = render(twist, {**draw, "b": 64})
    assert "batch 64" in later.prompt and "4,096 tokens" in later.prompt
    assert later.answers[0].value > shown.answers[0].value  # more KV read per step at the larger batch


def test_the_clarifying_stage_shows_the_opening_without_the_numbers(write_deck):
    card, draw = draw_card(write_deck)
    clarify = stage_card(card, stages_of(card)[0], draw)
    assert is_clarify(clarify) and clarify.kind == "concept"
    assert "slower than its team expected" in clarify.prompt
    assert "4,096" not in clarify.prompt and "32" not in clarify.prompt


def test_a_clarifying_stage_is_graded_by_the_asks_its_answer_names(write_deck):
    card, draw = draw_card(write_deck)
    clarify = stage_card(card, stages_of(card)[0], draw)
    two = grade_answer(clarify, {"typed": "what batch size, and how long is the context?"})
    assert two.score == pytest.approx(2 / 3) and two.evidence == pytest.approx(2 / 3)
    assert two.missed == ("measured tokens per second",)
    assert grade_answer(clarify, {"typed": "cost"}).score == 0.0


def test_an_estimate_stage_earns_step_credit_through_the_mock_grading(write_deck):
    from drill.calc.expressions import GiB
    from drill.cards.templating import render

    card, draw = draw_card(write_deck)
    estimate = stage_card(card, stages_of(card)[1], draw)
    shown = render(estimate, draw)
    kv = shown.ledger[0].value
    right = grade_answer(estimate, {"draw": draw, "given": [f"{shown.answers[0].value} s"], "working": ""})
    steps_only = grade_answer(estimate, {"draw": draw, "given": ["1 s"], "working": f"KV {kv / GiB:.4f} GiB"})
    nothing = grade_answer(estimate, {"draw": draw, "given": ["1 s"], "working": ""})
    assert right.score == 1.0
    assert nothing.score == 0.0
    assert 0 < steps_only.score < 1 and steps_only.evidence == steps_only.score


def test_the_browser_shows_a_scenario_drawn_and_exports_leave_it_to_drill(write_deck):
    from drill.browse import preview_prompt
    from drill.exchange.flat import exportable

    card = load(write_deck, SCENARIO).cards["sc-decode"]
    shown = preview_prompt(card)
    assert "{{" not in shown and "Llama 3 8B" in shown and "drill mock --round" in shown
    assert "1. clarify (clarifying" in shown and "4. twist (estimation" in shown
    assert exportable({card.id: card}) == []
