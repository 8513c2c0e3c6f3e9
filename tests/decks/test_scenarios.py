"""The bundled scenario decks: each scenario is a problem in stages with its sources, every stage is asked at every
draw of its parameters, and a round of its kind can pick it."""

import functools
import math
import random

import pytest

from drill import paths
from drill.cards.draw_prose import combinations
from drill.cards.loader import load_decks
from drill.cards.rendering import load_catalogue, render
from drill.cards.scenario import MIN_CORE_STAGES, StageType, core_stages, stage_card, stage_draw, stages_of, twists
from drill.mock.grading import check_point, key_terms, stem, words
from drill.mock.rounds import RoundKind, make_round, scenarios_for
from tests.conftest import deck_subset

CATALOGUE = load_catalogue(None, None, None)

# --- training estimates and communication/topology

TRAINING_DECK = "scenarios-training.yaml"
TOPOLOGY_DECK = "scenarios-topology.yaml"
TRAINING_AND_TOPOLOGY = {TRAINING_DECK: "training", TOPOLOGY_DECK: "topology"}


@functools.cache
def _deck(name):
    """A scenario deck's cards, loaded without the deep check: the tests are made from them as each worker collects
    (test_these_scenario_decks_pass_the_deep_check reads the run's one deep check of them)."""
    decks = load_decks([paths.cards_dir() / name])
    assert decks.problems == []
    return decks.cards


@pytest.mark.parametrize(("deck", "round_name"), sorted(TRAINING_AND_TOPOLOGY.items()))
def test_training_and_topology_decks_hold_six_sourced_scenarios_of_their_round(deck, round_name):
    cards = _deck(deck)
    assert len(cards) >= 6
    for card in cards.values():
        assert card.kind == "scenario" and card.fields["round"] == round_name, card.id
        assert card.sources, card.id
        stages = stages_of(card)
        assert len(core_stages(stages)) >= MIN_CORE_STAGES, card.id
        kinds = {s.type for s in core_stages(stages)}
        assert StageType.CLARIFY in kinds and StageType.ESTIMATE in kinds, card.id
        assert kinds & {StageType.DESIGN, StageType.DIAGNOSE}, card.id
        assert all(s.ledger for s in stages if s.type is StageType.ESTIMATE), card.id
        assert any(t.numeric for t in twists(stages)), card.id  # a twist re-asks the numbers with a change


def _training_and_topology_cards():
    return [card for deck in sorted(TRAINING_AND_TOPOLOGY) for card in _deck(deck).values()]


@pytest.mark.parametrize("card", _training_and_topology_cards(), ids=lambda c: c.id)
def test_every_stage_renders_at_every_draw_with_positive_finite_answers(card):
    draws = list(combinations(card, max_draws=None))
    assert draws
    for draw in draws:
        for stage in stages_of(card):
            asked = stage_draw(stage, draw)
            shown = stage_card(card, stage, draw)
            if stage.numeric:
                rendered = render(shown, asked, functions=CATALOGUE.names, models=CATALOGUE.models, gpus=CATALOGUE.gpus)
                texts = [rendered.prompt, rendered.answer, *(a.label for a in rendered.answers)]
                assert all(math.isfinite(a.value) and a.value > 0 for a in rendered.answers), (stage.number, draw)
                assert all(math.isfinite(t.value) for t in rendered.ledger), (stage.number, draw)
            else:
                texts = [shown.prompt, shown.answer]
            assert not any("{{" in t or "{%" in t for t in texts), (stage.number, draw)
            for name, value in stage.changes.items():
                assert asked[name] == value  # a twist is asked with its changed parameter, the rest of the draw kept


@pytest.mark.parametrize("card", _training_and_topology_cards(), ids=lambda c: c.id)
def test_each_rubric_point_names_something_the_question_does_not_and_the_model_answer_earns_it(card):
    draw = next(iter(combinations(card, max_draws=None)))
    for stage in stages_of(card):
        if not stage.rubric:
            continue
        shown = stage_card(card, stage, draw)
        asked = {stem(w) for w in words(shown.prompt)}
        for point in stage.rubric:
            assert {stem(t) for t in key_terms(point, shown.prompt)} - asked, (stage.number, point)
            # the stage's own model answer earns every point it teaches
            assert check_point(shown.answer, point, shown.prompt).passed, (stage.number, point)


def test_a_training_round_picks_every_training_scenario_and_a_mixed_round_the_topology_ones():
    cards = load_decks().cards
    training = {c.id for c in _deck(TRAINING_DECK).values()}
    topology = {c.id for c in _deck(TOPOLOGY_DECK).values()}
    assert training <= {c.id for c in scenarios_for(cards, RoundKind.TRAINING)}
    assert topology <= {c.id for c in scenarios_for(cards, RoundKind.MIXED)}
    assert not topology & {c.id for c in scenarios_for(cards, RoundKind.TRAINING)}
    picked = set()
    for seed in range(200):
        plan = make_round(cards, RoundKind.TRAINING, seed=seed)
        picked.add(plan.source_id)
        if plan.source_id in training:
            assert len([s for s in plan.stages if not s.twist]) >= MIN_CORE_STAGES
            assert any(s.twist for s in plan.stages)
    assert training <= picked
    # a round prefers a scenario not asked lately: with the others all recent, the one left is asked
    for scenario_id in sorted(topology):
        recent = {c.id for c in scenarios_for(cards, RoundKind.MIXED)} - {scenario_id}
        plan = make_round(cards, RoundKind.MIXED, seed=random.Random(scenario_id).randrange(1000), recent=recent)
        assert plan.source_id == scenario_id


# --- profile debugging and more serving design

DEBUG_DECK = "scenarios-debug.yaml"
SERVING_MORE_DECK = "scenarios-serving-more.yaml"
# deck -> (its round, the scenarios it holds, the stage a round of that kind is about)
DEBUG_AND_SERVING = {
    DEBUG_DECK: ("debug", 6, StageType.DIAGNOSE),
    SERVING_MORE_DECK: ("serving", 4, StageType.DESIGN),
}


@pytest.mark.parametrize("deck", sorted({*TRAINING_AND_TOPOLOGY, *DEBUG_AND_SERVING}))
def test_these_scenario_decks_pass_the_deep_check(bundled_decks, deck):
    checked = deck_subset(bundled_decks, [deck.removesuffix(".yaml")])
    assert checked.problems == [], "\n".join(map(str, checked.problems))
    assert sorted(checked.cards) == sorted(_deck(deck))


@pytest.mark.parametrize(("deck", "expected"), sorted(DEBUG_AND_SERVING.items()))
def test_debug_and_serving_decks_hold_sourced_scenarios_in_stages(deck, expected):
    round_name, count, central = expected
    cards = _deck(deck)
    assert len(cards) == count
    for card in cards.values():
        assert card.kind == "scenario" and card.fields["round"] == round_name, card.id
        assert card.sources, card.id
        stages = stages_of(card)
        core = core_stages(stages)
        assert len(core) >= MIN_CORE_STAGES, card.id
        assert core[0].type is StageType.CLARIFY, card.id  # the round opens with the questions to ask
        kinds = {s.type for s in core}
        assert central in kinds and StageType.ESTIMATE in kinds, card.id
        assert all(s.ledger for s in stages if s.type is StageType.ESTIMATE), card.id
        assert twists(stages), card.id


def _debug_and_serving_cards():
    return [card for deck in sorted(DEBUG_AND_SERVING) for card in _deck(deck).values()]


@pytest.mark.parametrize("card", _debug_and_serving_cards(), ids=lambda c: c.id)
def test_debug_and_serving_stages_render_at_every_draw_with_positive_finite_answers(card):
    draws = list(combinations(card, max_draws=None))
    assert draws
    for draw in draws:
        for stage in stages_of(card):
            asked = stage_draw(stage, draw)
            shown = stage_card(card, stage, draw)
            if stage.numeric:
                rendered = render(shown, asked, functions=CATALOGUE.names, models=CATALOGUE.models, gpus=CATALOGUE.gpus)
                texts = [rendered.prompt, rendered.answer, *(a.label for a in rendered.answers)]
                assert all(math.isfinite(a.value) and a.value > 0 for a in rendered.answers), (stage.number, draw)
            else:
                texts = [shown.prompt, shown.answer]
            assert not any("{{" in t or "{%" in t for t in texts), (stage.number, draw)


@pytest.mark.parametrize("card", _debug_and_serving_cards(), ids=lambda c: c.id)
def test_debug_and_serving_rubric_points_are_new_to_the_question_and_earned_by_the_model_answer(card):
    draw = next(iter(combinations(card, max_draws=None)))
    for stage in stages_of(card):
        if not stage.rubric:
            continue
        shown = stage_card(card, stage, draw)
        asked = {stem(w) for w in words(shown.prompt)}
        for point in stage.rubric:
            assert {stem(t) for t in key_terms(point, shown.prompt)} - asked, (stage.number, point)
            assert check_point(shown.answer, point, shown.prompt).passed, (stage.number, point)


def test_an_input_bound_profile_is_diagnosed_from_the_draw_it_shows():
    # the evidence and the numbers asked share one draw: the idle time the estimate expects is the gap the profile shows
    card = _deck(DEBUG_DECK)["scenario-debug-dataloader-bound"]
    draw = {"compute": 200, "load": 1600, "workers": 4, "more": 8}
    estimate = next(s for s in stages_of(card) if s.type is StageType.ESTIMATE)
    shown = stage_card(card, estimate, draw)
    rendered = render(shown, draw, functions=CATALOGUE.names, models=CATALOGUE.models, gpus=CATALOGUE.gpus)
    assert "200,000,000  :dataloader_next" in rendered.prompt  # 1,600 ms / 4 workers - 200 ms of GPU work
    values = {a.label: a.value for a in rendered.answers}
    assert values["GPU idle time per step"] == pytest.approx(0.2)
    assert values["fewest workers that keep up"] == 8


@pytest.mark.parametrize(("deck", "kind"), [(DEBUG_DECK, RoundKind.DEBUG), (SERVING_MORE_DECK, RoundKind.SERVING)])
def test_a_round_of_their_kind_picks_every_debug_and_serving_scenario(deck, kind):
    cards = load_decks().cards
    wanted = {c.id for c in _deck(deck).values()}
    assert wanted <= {c.id for c in scenarios_for(cards, kind)}
    picked = set()
    for seed in range(300):
        plan = make_round(cards, kind, seed=seed)
        picked.add(plan.source_id)
        if plan.source_id in wanted:
            assert len([s for s in plan.stages if not s.twist]) >= MIN_CORE_STAGES
    assert wanted <= picked


# How a learner types a figure of each unit.
TYPED_UNIT = {"bytes": "B", "seconds": "s", "flops": "FLOP", "flop_per_second": "FLOP/s", "fraction": "", "count": ""}


def _typed(value, unit):
    return f"{value:.6g} {TYPED_UNIT[unit]}".strip()


@pytest.mark.parametrize("card", _training_and_topology_cards(), ids=lambda c: c.id)
def test_numeric_stages_grade_right_answers_full_and_credit_every_ledger_step_in_the_working(card):
    from drill.mock.answers import grade_answer
    from drill.mock.grading import STEP_SHARE

    draw = next(iter(combinations(card, max_draws=None)))
    for stage in stages_of(card):
        if not stage.numeric:
            continue
        asked = stage_draw(stage, draw)
        shown_card = stage_card(card, stage, draw)
        shown = render(shown_card, asked, functions=CATALOGUE.names, models=CATALOGUE.models, gpus=CATALOGUE.gpus)
        right = [_typed(a.value, a.unit) for a in shown.answers]
        wrong = ["1"] * len(right)
        working = "\n".join(f"{t.term}: {_typed(t.value, t.unit)}" for t in shown.ledger)
        assert grade_answer(shown_card, {"draw": asked, "given": right, "working": ""}).score == 1.0, stage.number
        assert grade_answer(shown_card, {"draw": asked, "given": wrong, "working": ""}).score == 0.0, stage.number
        steps = grade_answer(shown_card, {"draw": asked, "given": wrong, "working": working})
        assert steps.score == pytest.approx(STEP_SHARE), stage.number
