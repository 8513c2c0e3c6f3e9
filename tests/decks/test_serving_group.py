"""The serving-group decks (serving, quantization, spec-disagg, memory-knobs): they load cleanly,
reach their counts, read well in a terminal, and their ledgers reproduce published figures."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from drill.calc.data import as_gpu
from drill.calc.expressions import NAMES
from drill.calc.sizes import GiB, KiB
from drill.cards.templating import render
from tests.conftest import deck_subset

TOPICS = ("serving", "quantization", "spec-disagg", "memory-knobs")


@pytest.fixture(scope="module")
def deckset(bundled_decks):
    return deck_subset(bundled_decks, TOPICS)


def every_draw(card):
    """Every combination of a ledger card's parameter options (ranges by their two ends)."""
    names, options = [], []
    for name, spec in card.fields["params"].items():
        names.append(name)
        if "model" in spec:
            options.append(spec["model"])
        elif "gpu" in spec:
            options.append(spec["gpu"])
        elif "choices" in spec:
            options.append(spec["choices"])
        else:
            options.append(list(spec["range"]))
    return [dict(zip(names, combo)) for combo in itertools.product(*options)]


def answer(deckset, card_id, draw, index):
    return render(deckset.cards[card_id], draw).answers[index].value


@pytest.mark.parametrize(
    "topic, minimum", [("serving", 30), ("quantization", 20), ("spec-disagg", 12), ("memory-knobs", 12)]
)
def test_topic_counts(deckset, topic, minimum):
    assert Counter(c.topic for c in deckset.cards.values())[topic] >= minimum


@pytest.mark.parametrize(
    "kind, minimum", [("concept", 40), ("diagnosis", 12), ("shape_trace", 7), ("memory_ledger", 16)]
)
def test_kind_counts(deckset, kind, minimum):
    assert Counter(c.kind for c in deckset.cards.values())[kind] >= minimum


def test_concept_cards_fit_an_80_column_terminal(deckset):
    for card in deckset.cards.values():
        if card.kind != "concept":
            continue
        lines = card.answer.strip().splitlines()
        assert len(lines) <= 24, card.id
        assert max(len(line) for line in lines + card.prompt.splitlines()) <= 76, card.id
        assert 3 <= len(card.rubric) <= 5, card.id


# Published figures the ledgers must reproduce: (card, draw, answer index, expected, relative tolerance).
PUBLISHED = [
    pytest.param(
        "serving-ledger-opt13b-800kb",
        {"model": "opt-13b", "s": 2048},
        0,
        800 * KiB,
        1e-9,
        id="vLLM arXiv:2309.06180: OPT-13B holds 800 KB (KiB) of KV per token",
    ),
    pytest.param(
        "serving-ledger-opt13b-800kb",
        {"model": "opt-13b", "s": 2048},
        1,
        1.6e9,
        0.05,
        id="vLLM arXiv:2309.06180: a 2,048-token OPT-13B request holds 1.6 GB",
    ),
    pytest.param(
        "serving-ledger-kv-per-token",
        {"model": "llama-3-70b", "dt": "bf16", "s": 4096},
        0,
        320 * KiB,
        1e-9,
        id="Llama-3-70B config (80 layers, 8 KV heads, dim 128): 320 KiB per token",
    ),
    pytest.param(
        "serving-ledger-decode-intensity",
        {"model": "llama-3-8b", "gpu": "h100-sxm", "b": 1},
        1,
        295,
        0.01,
        id="stas00 H100 SXM 989 TFLOP/s / 3.35 TB/s: bf16 ridge 295",
    ),
    pytest.param(
        "serving-ledger-decode-intensity",
        {"model": "llama-3-8b", "gpu": "h200", "b": 1},
        1,
        206,
        0.01,
        id="stas00 H200 989 TFLOP/s / 4.8 TB/s: bf16 ridge 206",
    ),
    pytest.param(
        "serving-ledger-decode-intensity",
        {"model": "llama-3-8b", "gpu": "a100-80gb", "b": 1},
        1,
        153,
        0.01,
        id="stas00 A100 80GB 312 TFLOP/s / 2.039 TB/s: bf16 ridge 153",
    ),
    pytest.param(
        "quantization-ledger-fp8-ridge",
        {"gpu": "h100-sxm"},
        1,
        591,
        0.01,
        id="stas00 H100 SXM 1,979 dense FP8 TFLOP/s / 3.35 TB/s: fp8 ridge 591",
    ),
    pytest.param(
        "quantization-ledger-group-overhead",
        {"model": "llama-3-8b", "g": 128, "zb": 0},
        0,
        4.125,
        1e-9,
        id="GPTQ arXiv:2210.17323 groups of 128 with an fp16 scale: 4.125 bits per weight",
    ),
    pytest.param(
        "serving-ledger-prefill-flops",
        {"model": "llama-3-8b", "gpu": "h100-sxm", "s": 1024},
        0,
        2 * 8_030_261_248 * 1024,
        1e-9,
        id="Kaplan arXiv:2001.08361 2N per token, Llama-3-8B model card 8,030,261,248 params",
    ),
    pytest.param(
        "memory-knobs-ledger-offload-pcie",
        {"model": "llama-3-8b", "gpu": "h100-sxm", "pcie": 63.0},
        2,
        3.35e12 / 63e9,
        1e-9,
        id="PCIe 5.0 x16 63 GB/s per direction vs H100 SXM 3.35 TB/s",
    ),
]


@pytest.mark.parametrize("card_id, draw, index, expected, tolerance", PUBLISHED)
def test_ledgers_reproduce_published_figures(deckset, card_id, draw, index, expected, tolerance):
    assert math.isclose(answer(deckset, card_id, draw, index), expected, rel_tol=tolerance)


def test_opt13b_kv_is_800_kib_not_800_kb(deckset):
    per_token = answer(deckset, "serving-ledger-opt13b-800kb", {"model": "opt-13b", "s": 512}, 0)
    assert per_token / KiB == 800 and per_token / 1e3 != 800


@pytest.mark.parametrize("a", [0.5, 0.6, 0.7, 0.8, 0.9])
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_expected_tokens_is_the_truncated_geometric_series(deckset, a, k):
    """Leviathan et al. arXiv:2211.17192: E = 1 + α + … + α^γ, capped by 1/(1 − α)."""
    draw = {"a": a, "k": k, "c": 0.1}
    tokens = answer(deckset, "spec-disagg-ledger-expected-tokens", draw, 0)
    assert math.isclose(tokens, sum(a**i for i in range(k + 1)), rel_tol=1e-12)
    assert tokens < 1 / (1 - a)
    speedup = answer(deckset, "spec-disagg-ledger-expected-tokens", draw, 1)
    assert math.isclose(speedup, tokens / (k * 0.1 + 1), rel_tol=1e-12)


def test_fp8_does_not_move_the_decode_crossover_batch(deckset):
    for gpu in ("h100-sxm", "h200"):
        bf16 = answer(deckset, "quantization-ledger-fp8-ridge", {"gpu": gpu}, 2)
        fp8 = answer(deckset, "quantization-ledger-fp8-ridge", {"gpu": gpu}, 3)
        assert math.isclose(bf16, fp8, rel_tol=0.01), gpu


def test_int4_decode_gain_shrinks_as_kv_grows(deckset):
    card = "quantization-ledger-int4-decode-speedup"
    small = answer(deckset, card, {"model": "llama-3-8b", "gpu": "h100-sxm", "b": 1, "c": 512}, 2)
    large = answer(deckset, card, {"model": "llama-3-8b", "gpu": "h100-sxm", "b": 64, "c": 4096}, 2)
    assert 3.9 < small < 4 and 1 < large < 2


@pytest.mark.parametrize("card_id", ["serving-ledger-concurrent-sequences", "quantization-ledger-70b-one-gpu"])
def test_capacity_cards_always_admit_a_sequence(deckset, card_id):
    card = deckset.cards[card_id]
    index = next(i for i, a in enumerate(card.fields["answers"]) if a["unit"] == "count")
    for draw in every_draw(card):
        assert render(card, draw).answers[index].value >= 1, draw


@pytest.mark.parametrize(
    "card_id, divisor",
    [
        ("serving-ledger-decode-lower-bound", None),
        ("quantization-ledger-int4-decode-speedup", None),
        ("serving-ledger-tp-decode", "tp"),
    ],
)
def test_decode_cards_only_pose_configurations_that_fit(deckset, card_id, divisor):
    """Weights and KV of every drawn configuration fit in the GPU's HBM (per GPU under TP)."""
    card = deckset.cards[card_id]
    for draw in every_draw(card):
        model = draw["model"]
        context = draw.get("c", draw.get("ctx"))
        need = NAMES["weight_bytes"](model) + NAMES["kv_bytes"](model, context, draw["b"])
        if divisor:
            need /= draw[divisor]
        assert need < as_gpu(draw["gpu"])["hbm_bytes"], draw


@pytest.mark.parametrize(
    "card_id, index",
    [
        ("serving-ledger-decode-lower-bound", 1),
        ("serving-ledger-kv-vs-weights", 1),
        ("quantization-ledger-int4-kv-scales", 1),
    ],
)
def test_fraction_answers_are_proper_fractions(deckset, card_id, index):
    card = deckset.cards[card_id]
    for draw in every_draw(card):
        assert 0 < render(card, draw).answers[index].value < 1, draw


def test_weight_ledger_asks_for_gib_and_expects_bytes(deckset):
    card = deckset.cards["quantization-ledger-weight-bytes-gib"]
    value = answer(deckset, card.id, {"model": "llama-3-8b", "dt": "int4"}, 0)
    assert "GiB" in card.prompt and card.fields["answers"][0]["unit"] == "bytes"
    assert math.isclose(value / GiB, 8_030_261_248 * 0.5 / 2**30, rel_tol=1e-9)
