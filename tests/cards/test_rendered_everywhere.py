"""What a learner reads of a parameterised card is rendered wherever it is shown, and states its numbers.

The review form, the CSV and Anki exports, the mock report and the browser's
preview each draw the card's numbers and render its prompt, answer, answer
labels and ledger terms and formulas: no template text reaches the learner.
"""

import random

import pytest

from drill.browse import preview_prompt
from drill.cards.ledger_check import TEMPLATE_MARKS
from drill.cards.templating import draw_params, render
from drill.exchange.flat import flatten
from drill.mock.report import sides
from tests.conftest import bundled_cards

CARDS = bundled_cards()
LEDGERS = sorted(cid for cid, c in CARDS.items() if c.kind == "memory_ledger")


def _marks(text):
    return [m for m in TEMPLATE_MARKS if m in text]


@pytest.mark.parametrize("card_id", LEDGERS)
def test_every_place_a_ledger_card_is_shown_is_rendered(card_id):
    card = CARDS[card_id]
    shown = render(card, draw_params(card, random.Random(1)))
    texts = {"prompt": shown.prompt, "answer": shown.answer}
    texts |= {f"label {a.label}": a.label for a in shown.answers}
    texts |= {f"term {t.term}": f"{t.term} {t.formula}" for t in shown.ledger}
    flat = flatten(card)
    texts |= {"export prompt": flat.prompt, "export answer": flat.answer}
    texts |= dict(zip(("report question", "report answer"), sides(card, None)))
    texts["browser preview"] = preview_prompt(card)
    assert {where: _marks(text) for where, text in texts.items() if _marks(text)} == {}


def test_the_weights_card_names_its_dtype_in_the_ledger_the_export_and_the_preview():
    card = CARDS["memory-accounting-weights-vs-hbm"]
    shown = render(card, {"model": "llama-2-7b", "dt": "int4", "gpu": "h100-sxm"})
    assert shown.ledger[1].term == "bytes per parameter in int4"
    assert "bytes per parameter in {{" not in flatten(card).answer
    assert "| bytes per parameter in " in flatten(card).answer


def test_the_browser_preview_shows_a_draw_not_the_template():
    card = CARDS["long-context-ledger-kv-cache"]
    assert "{{ model.title }}" in card.prompt
    preview = preview_prompt(card)
    assert preview.startswith("Take the attention shape of Llama") and "layers" in preview


@pytest.mark.parametrize(
    "card_id",
    ["long-context-ledger-attention-flops", "capacity-cost-ledger-batch-limits", "compilers-ledger-launch-overhead"],
)
def test_ledgers_that_count_parameters_state_the_exact_count_and_what_it_includes(card_id):
    from drill.calc.expressions import params

    card = CARDS[card_id]
    for seed in range(4):
        draw = draw_params(card, random.Random(seed))
        prompt = render(card, draw).prompt
        assert f"{params(draw['model']):,}" in prompt
        assert "embeddings" in prompt
