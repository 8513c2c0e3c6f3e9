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

CATALOGUE = load_catalogue(None, None, None)

# --- training estimates and communication/topology

TRAINING_DECK = "scenarios-training.yaml"
TOPOLOGY_DECK = "scenarios-topology.yaml"
TRAINING_AND_TOPOLOGY = {TRAINING_DECK: "training", TOPOLOGY_DECK: "topology"}


@functools.cache
def _deck(name):
    decks = load_decks([paths.cards_dir() / name], deep=True)
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
