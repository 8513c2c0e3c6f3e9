"""A numeric field's label names its unit once, on review cards and on a scenario's stages alike."""

import random

from drill import paths
from drill.cards.loader import load_decks
from drill.cards.scenario import stage_card, stages_of
from drill.cards.templating import draw_params
from drill.ui.answering import LedgerForm, field_label


def test_a_label_gets_its_unit_once():
    assert field_label("gradient buffer", "bytes") == "gradient buffer (bytes)"
    assert field_label("KV cache of one prompt (bytes)", "bytes") == "KV cache of one prompt (bytes)"
    # another unit in brackets is not the field's unit: it stays, and the unit is added
    assert field_label("states (per GPU)", "bytes") == "states (per GPU) (bytes)"


def test_every_numeric_stage_of_a_bundled_scenario_names_its_unit_once():
    cards = load_decks([paths.cards_dir()]).cards
    scenarios = [c for c in cards.values() if c.kind == "scenario"]
    assert scenarios
    labels = []
    for scenario in scenarios:
        rng = random.Random(scenario.id)
        draw = draw_params(scenario, rng)
        for stage in stages_of(scenario):
            if not stage.numeric:
                continue
            form = LedgerForm(stage_card(scenario, stage, draw), rng)
            labels += [label for label, _, _ in form.field_specs()]
    assert any(label == "KV cache of one prompt (bytes)" for label in labels)
    doubled = [label for label in labels if any(label.endswith(f"({u}) ({u})") for u in ("bytes", "seconds", "count"))]
    assert doubled == []
