"""Parameterised cards at every draw: they render, and no fixed sentence of theirs is contradicted by a draw."""

import dataclasses
import re

import pytest

from drill.cards.draw_prose import (
    ClaimKind,
    card_claims,
    combinations,
    draw_prose_problems,
    fixed_text,
    sentence_claims,
)
from drill.cards.ledger_check import check_ledger_card
from drill.cards.rendering import load_catalogue, render
from drill.quantities import format_quantity
from tests.conftest import bundled_cards

CARDS = bundled_cards()
CATALOGUE = load_catalogue(None, None, None)
PARAMETERISED = sorted(cid for cid, c in CARDS.items() if c.fields.get("params"))

# The answers the bundled decks carried before they followed the draw: each was wrong at some draw.
OLD_SINGLE_GPU_ANSWER = """\
The states alone (16Ψ) exceed an "80 GB" GPU (79.6–80 GiB) for both
models (7B: ~108·10⁹ B = 100 GiB; it fits an H200's 140 GiB only
before activations); activations
add more at longer sequences. The ledger tells you which lever to
pull: shard the 16Ψ (ZeRO/FSDP over N GPUs) and, if activations
still dominate, recompute or split the sequence.
"""
OLD_GRID_STRIDE_ANSWER = """\
With hundreds of elements per thread, the tree (log2 of the block
size steps, a few barriers) and the final atomic per block are a
rounding error; the loop streams memory with several loads in
flight per thread. Sizing the grid from the SM count keeps every SM
busy without launching millions of short-lived blocks.
"""


def every_draw(card_id):
    for draw in combinations(CARDS[card_id], max_draws=None):
        yield draw, rendered_at(card_id, draw)


def rendered_at(card_id, draw):
    return render(CARDS[card_id], draw, functions=CATALOGUE.names, models=CATALOGUE.models, gpus=CATALOGUE.gpus)


def each_draw(card_id):
    """Every combination of a card's listed options, for a test per draw: rendered in the test, not as the tests
    are collected (by every worker), and named by the draw's values."""
    return [
        pytest.param(draw, id=", ".join(f"{k}={v}" for k, v in draw.items()))
        for draw in combinations(CARDS[card_id], max_draws=None)
    ]


def test_every_parameterised_card_is_covered():
    assert len(PARAMETERISED) >= 110


@pytest.mark.parametrize("card_id", PARAMETERISED)
def test_every_draw_renders_and_no_fixed_sentence_is_contradicted(card_id):
    """Every combination of the listed options: the text renders, the answers are finite, and the fixed prose
    holds at each of them (not only at the sample the deck check evaluates)."""
    count = 0
    for draw, rendered in every_draw(card_id):
        count += 1
        for field in (rendered.prompt, rendered.answer):
            assert "{{" not in field and "{%" not in field, draw
        assert all(a.value == a.value and abs(a.value) != float("inf") for a in rendered.answers), draw
    assert count >= 1
    assert draw_prose_problems(CARDS[card_id], CATALOGUE, max_draws=None) == []


# --- memory-accounting-single-gpu-ledger: the answer says what this draw's ledger says


def _single_gpu_draws():
    return list(every_draw("memory-accounting-single-gpu-ledger"))


def test_single_gpu_ledger_has_36_draws_and_all_three_outcomes():
    draws = _single_gpu_draws()
    assert len(draws) == 36
    ratios = sorted(r.answers[1].value for _, r in draws)
    assert ratios[0] < 1 < ratios[-1]  # some draws fit, some do not: the text must tell them apart


@pytest.mark.parametrize("index", range(36))
def test_single_gpu_ledger_answer_agrees_with_its_numbers(index):
    draw, rendered = _single_gpu_draws()[index]
    text = " ".join(rendered.answer.split())
    total = rendered.answers[0].value
    ratio = rendered.answers[1].value
    hbm = total / ratio
    states = sum(t.value for t in rendered.ledger[:3])
    activations = rendered.ledger[3].value
    assert format_quantity(states, "bytes") in text
    if states > hbm:
        assert "more than the" in text and "before a single activation" in text
        assert "fits" not in text and "fit in" not in text
    elif ratio > 1:
        assert "which fit in the" in text and "push the total past its HBM" in text
        assert format_quantity(activations, "bytes") in text
    else:
        assert "the total fits in the" in text
        assert format_quantity(hbm - total, "bytes") in text
    assert "both models" not in text
    gpu = CATALOGUE.gpus[draw["gpu"]]["title"]
    assert gpu in text


def test_single_gpu_ledger_h200_llama_s1024_b4_fits_as_its_ledger_says():
    """The audit's draw: 0.979× of an H200's HBM, which the old text said would not fit with activations."""
    draw = {"model": "llama-2-7b", "s": 1024, "b": 4, "gpu": "h200"}
    rendered = render(CARDS["memory-accounting-single-gpu-ledger"], draw)
    assert rendered.answers[1].value == pytest.approx(0.979, abs=0.001)
    assert "the total fits in the NVIDIA H200" in " ".join(rendered.answer.split())


# --- cuda-reduction-ledger-grid-stride: the answer shows this draw's elements per thread and block count


@pytest.mark.parametrize("draw", each_draw("cuda-reduction-ledger-grid-stride"))
def test_grid_stride_answer_shows_the_draws_elements_per_thread(draw):
    rendered = rendered_at("cuda-reduction-ledger-grid-stride", draw)
    text = " ".join(rendered.answer.split())
    per_thread = rendered.answers[1].value
    assert f"With about {round(per_thread):,} elements per thread" in text
    assert f"{draw['n'] // draw['t']:,} short-lived blocks" in text
    assert "hundreds" not in text


def test_grid_stride_draws_span_hundreds_to_tens_of_thousands():
    values = [r.answers[1].value for _, r in every_draw("cuda-reduction-ledger-grid-stride")]
    assert min(values) < 300 and max(values) > 19_000


# --- the rule: the old answers fail it, in the deck check too


def test_the_old_single_gpu_answer_fails_the_deck_check():
    old = dataclasses.replace(CARDS["memory-accounting-single-gpu-ledger"], answer=OLD_SINGLE_GPU_ANSWER)
    problems = check_ledger_card(old)
    assert any("fits" in p and "gpu=h200" in p for p in problems), problems


def test_the_old_grid_stride_answer_fails_the_deck_check():
    old = dataclasses.replace(CARDS["cuda-reduction-ledger-grid-stride"], answer=OLD_GRID_STRIDE_ANSWER)
    problems = check_ledger_card(old)
    assert any("'hundreds of elements'" in p and "elements per thread" in p for p in problems), problems


def test_the_current_answers_pass_the_deck_check():
    for card_id in ("memory-accounting-single-gpu-ledger", "cuda-reduction-ledger-grid-stride"):
        assert check_ledger_card(CARDS[card_id]) == []


# --- the rule on small cards


def ledger_card(answer, *, params=None, answers=None, ledger=None, prompt="Sum {{ n }} values on {{ gpu.title }}."):
    """The grid-stride card with other text, parameters or answers."""
    base = CARDS["cuda-reduction-ledger-grid-stride"]
    fields = dict(base.fields)
    if params is not None:
        fields["params"] = params
    if answers is not None:
        fields["answers"] = answers
    if ledger is not None:
        fields["ledger"] = ledger
    return dataclasses.replace(base, prompt=prompt, answer=answer, fields=fields)


COUNT = {"n": {"choices": [100, 5000]}, "gpu": {"gpu": ["h100-sxm"]}}
COUNT_ANSWER = [{"label": "items", "expr": "n", "unit": "count"}]


def test_fixed_text_leaves_out_conditioned_text_and_output():
    pieces = fixed_text("A {{ n }} B {% if n > 1 %}hundreds{% else %}few{% endif %} C")
    assert "".join(pieces) == "A  B  C"


@pytest.mark.parametrize(
    "words, kind, low, high",
    [
        ("hundreds of elements", ClaimKind.MAGNITUDE, 100, 1000),
        ("tens of thousands of tokens", ClaimKind.MAGNITUDE, 1e4, 1e5),
        ("tens of MB", ClaimKind.MAGNITUDE, 1e7, 1e8),
        ("it fits", ClaimKind.FIT, 1, 1),
        ("100 GiB", ClaimKind.FIGURE, 100 * 2**30, 100 * 2**30),
        ("4×", ClaimKind.FIGURE, 4, 4),
        ("twice", ClaimKind.FIGURE, 2, 2),
    ],
)
def test_claims_read_from_a_sentence(words, kind, low, high):
    (claim,) = sentence_claims("answer", f"Here {words} always.")
    assert claim.kind is kind
    assert (claim.low, claim.high) == pytest.approx((low, high))


def test_a_word_inside_another_is_no_claim():
    assert sentence_claims("answer", "Each tensor is moved by the attention heads.") == []


def test_magnitude_words_contradicted_by_a_draw():
    card = ledger_card("Hundreds of items per thread.", params=COUNT, answers=COUNT_ANSWER, ledger=[])
    (problem,) = draw_prose_problems(card, CATALOGUE)
    assert "'Hundreds of items'" in problem and "5,000 with n=5000" in problem


def test_magnitude_words_true_at_every_draw_pass():
    params = {"n": {"choices": [100, 500]}, "gpu": {"gpu": ["h100-sxm"]}}
    card = ledger_card("Hundreds of items per thread.", params=params, answers=COUNT_ANSWER, ledger=[])
    assert draw_prose_problems(card, CATALOGUE) == []


def test_magnitude_words_made_a_template_pass():
    answer = "{% if n < 1000 %}Hundreds{% else %}Thousands{% endif %} of items per thread."
    card = ledger_card(answer, params=COUNT, answers=COUNT_ANSWER, ledger=[])
    assert draw_prose_problems(card, CATALOGUE) == []


def test_magnitude_words_about_the_gpu_pass():
    """ "tens of MB" about the L2 is true on every GPU drawn, though the bytes read are not tens of MB."""
    answers = [{"label": "bytes read", "expr": "n * 1e5", "unit": "bytes"}]
    card = ledger_card("The L2 holds tens of MB.", params=COUNT, answers=answers, ledger=[])
    assert draw_prose_problems(card, CATALOGUE) == []


FIT_PARAMS = {"n": {"choices": [1, 2]}, "gpu": {"gpu": ["h100-sxm", "h200"]}}
FIT_ANSWERS = [{"label": "bytes", "expr": "n * 100e9", "unit": "bytes"}]


def test_a_fit_that_a_draw_breaks_is_reported():
    card = ledger_card("It fits on one GPU.", params=FIT_PARAMS, answers=FIT_ANSWERS, ledger=[])
    (problem,) = draw_prose_problems(card, CATALOGUE)
    assert "'fits'" in problem and "HBM" in problem


def test_a_fit_stated_as_a_rule_passes():
    card = ledger_card("A ratio above 1 does not fit.", params=FIT_PARAMS, answers=FIT_ANSWERS, ledger=[])
    assert draw_prose_problems(card, CATALOGUE) == []


def test_a_fit_about_a_named_gpu_is_checked_on_that_gpu_only():
    """On the H200 (141 GB) 100 GB fits and 200 GB does not: contradicted. On the H100 neither fits: true."""
    on_h200 = ledger_card("It fits on an H200.", params=FIT_PARAMS, answers=FIT_ANSWERS, ledger=[])
    assert len(draw_prose_problems(on_h200, CATALOGUE)) == 1
    params = {"n": {"choices": [1, 2]}, "gpu": {"gpu": ["h100-sxm", "h200"]}}
    answers = [{"label": "bytes", "expr": "n * 90e9", "unit": "bytes"}]
    on_h100 = ledger_card("It does not fit on an H100.", params=params, answers=answers, ledger=[])
    assert draw_prose_problems(on_h100, CATALOGUE) == []


def test_a_figure_written_for_one_draw_is_reported():
    answers = [{"label": "bytes", "expr": "n * 1e9", "unit": "bytes"}]
    card = ledger_card("That is 100 GB in all.", params=COUNT, answers=answers, ledger=[])
    (problem,) = draw_prose_problems(card, CATALOGUE)
    assert "'100 GB'" in problem and "n=100" in problem and "n=5000" in problem


def test_a_figure_in_a_worked_example_naming_its_option_passes():
    answers = [{"label": "bytes", "expr": "n * 1e9", "unit": "bytes"}]
    card = ledger_card("For n = 5,000 that is 5 TB.", params=COUNT, answers=answers, ledger=[])
    assert draw_prose_problems(card, CATALOGUE) == []


def test_claims_of_the_bundled_single_gpu_card_sit_in_conditioned_text():
    """The answer's fit words are all inside {% if %}: nothing is left for the rule to check."""
    claims = card_claims(CARDS["memory-accounting-single-gpu-ledger"], CATALOGUE)
    assert not [c for c in claims if c.kind is ClaimKind.FIT]


def test_every_bundled_ledger_card_passes_the_rule():
    problems = {
        cid: draw_prose_problems(card, CATALOGUE)
        for cid, card in CARDS.items()
        if card.kind == "memory_ledger" and draw_prose_problems(card, CATALOGUE)
    }
    assert problems == {}


def test_the_message_says_how_to_fix_it():
    card = ledger_card("Hundreds of items per thread.", params=COUNT, answers=COUNT_ANSWER, ledger=[])
    (problem,) = draw_prose_problems(card, CATALOGUE)
    assert re.search(r"\{\{ \}\}.*\{% if %\}", problem)


def test_a_sentence_listing_every_case_passes():
    """ "31.5 GB/s on Gen4 and 63 GB/s on Gen5" gives a figure for each option: a list, not one draw's value."""
    params = {"pcie": {"choices": [31.5, 63.0]}, "gpu": {"gpu": ["h100-sxm"]}}
    answers = [{"label": "link", "expr": "pcie * 1e9", "unit": "bytes_per_second"}]
    listed = ledger_card("PCIe moves 31.5 GB/s on Gen4 and 63 GB/s on Gen5.", params=params, answers=answers, ledger=[])
    assert draw_prose_problems(listed, CATALOGUE) == []
    one = ledger_card("PCIe moves 31.5 GB/s.", params=params, answers=answers, ledger=[])
    assert len(draw_prose_problems(one, CATALOGUE)) == 1


# --- other ledger cards whose fixed words a draw contradicted, now conditioned on the draw


@pytest.mark.parametrize("draw", each_draw("flashattention-ledger-intensity"))
def test_flashattention_intensity_names_the_side_of_the_ridge_this_draw_is_on(draw):
    """S = 512 is above the A100's ridge (153) and below the H100's (295): neither side holds for every draw."""
    rendered = rendered_at("flashattention-ledger-intensity", draw)
    intensity = rendered.answers[1].value
    ridge = CATALOGUE.gpus[draw["gpu"]]["bf16_flops"] / CATALOGUE.gpus[draw["gpu"]]["hbm_bandwidth"]
    side = "above" if intensity >= ridge else "below"
    assert f"{intensity:.0f} FLOP/byte is {side} the ridge" in " ".join(rendered.answer.split())


@pytest.mark.parametrize("draw", each_draw("zero-fsdp-per-gpu-ledger"))
def test_zero_ledger_names_the_larger_part_of_this_draws_total(draw):
    """Activations are 18 % to 99 % of the total across the draws: the lever named follows the share."""
    rendered = rendered_at("zero-fsdp-per-gpu-ledger", draw)
    share = rendered.answers[1].value
    text = " ".join(rendered.answer.split())
    assert f"activations are {100 * share:.0f} %" in text
    if share > 0.5:
        assert "the next lever is recompute" in text
    else:
        assert "the states are still the larger part" in text
        assert "the next lever is recompute" not in text


def test_prefill_cost_ratio_shown_is_the_answer():
    card = CARDS["capacity-cost-ledger-prefill-vs-decode-cost"]
    for _, rendered in every_draw(card.id):
        assert f"{rendered.answers[2].value:.1f}× cheaper" in " ".join(rendered.answer.split())
