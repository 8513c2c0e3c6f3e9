"""The kernel-group decks: they load cleanly, reach their counts, and their ledgers reproduce published figures."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from drill.calc.sizes import GiB
from drill.cards.templating import draw_params, render
from tests.conftest import deck_subset

TOPICS = (
    "cuda-reduction",
    "smem-coalescing",
    "triton-softmax",
    "flashattention",
    "profiling",
    "gpu-arch",
    "fusion",
    "numerics",
)


@pytest.fixture(scope="module")
def deckset(bundled_decks):
    return deck_subset(bundled_decks, TOPICS)


@pytest.mark.parametrize(
    "topic, minimum",
    [
        ("cuda-reduction", 16),
        ("smem-coalescing", 16),
        ("triton-softmax", 16),
        ("flashattention", 16),
        ("profiling", 16),
        ("gpu-arch", 12),
        ("fusion", 6),
        ("numerics", 8),
    ],
)
def test_topic_counts(deckset, topic, minimum):
    assert Counter(c.topic for c in deckset.cards.values())[topic] >= minimum


@pytest.mark.parametrize(
    "kind, minimum",
    [("concept", 50), ("diagnosis", 17), ("shape_trace", 6), ("memory_ledger", 14)],
)
def test_kind_counts(deckset, kind, minimum):
    assert Counter(c.kind for c in deckset.cards.values())[kind] >= minimum


def test_prompts_and_answers_fit_a_terminal(deckset):
    # The review screen is 80 columns wide; long lines in prose wrap badly.
    # Parameterised cards are measured as the learner sees them, rendered.
    rng = random.Random(7)
    for card in deckset.cards.values():
        texts = [card.prompt, card.answer]
        if card.kind == "memory_ledger":
            shown = render(card, draw_params(card, rng))
            texts = [shown.prompt, shown.answer]
        for text in texts:
            for line in text.splitlines():
                assert len(line) <= 80, f"{card.id}: {line!r}"


def _answer(deckset, card_id: str, draw: dict, index: int) -> float:
    return render(deckset.cards[card_id], draw).answers[index].value


@pytest.mark.parametrize(
    "card_id, draw, index, expected, rel",
    [
        pytest.param(
            "gpu-arch-ledger-ridge",
            {"gpu": "h100-sxm", "dt": "bf16"},
            0,
            295,
            0.01,
            id="FACTS ridge H100 BF16 295",
        ),
        pytest.param(
            "gpu-arch-ledger-ridge",
            {"gpu": "h200", "dt": "bf16"},
            0,
            206,
            0.01,
            id="FACTS ridge H200 BF16 206",
        ),
        pytest.param(
            "gpu-arch-ledger-ridge",
            {"gpu": "a100-80gb", "dt": "bf16"},
            0,
            153,
            0.01,
            id="FACTS ridge A100-80 BF16 153",
        ),
        pytest.param(
            "gpu-arch-ledger-hbm-gib",
            {"gpu": "h100-sxm"},
            0,
            81_559 * 2**20,
            0.001,
            id="nccl issue 1264: an H100 80GB shows 81,559 MiB",
        ),
        pytest.param(
            "gpu-arch-ledger-register-occupancy",
            {"r": 32, "t": 256},
            1,
            1.0,
            1e-9,
            id="FACTS full occupancy at 32 registers per thread",
        ),
        pytest.param(
            "gpu-arch-ledger-register-occupancy",
            {"r": 255, "t": 256},
            0,
            1,
            1e-9,
            id="CUDA occupancy 255 registers x 256 threads one block",
        ),
        pytest.param(
            "smem-coalescing-ledger-bank-conflict",
            {"a": 5, "o": 1},
            0,
            32,
            1e-9,
            id="FACTS tile[32][32] column read 32-way",
        ),
        pytest.param(
            "smem-coalescing-ledger-bank-conflict",
            {"a": 0, "o": 33},
            0,
            1,
            1e-9,
            id="FACTS tile[32][33] column read conflict-free",
        ),
        pytest.param(
            "smem-coalescing-ledger-sectors",
            {"s": 1},
            0,
            4,
            1e-9,
            id="CUDA best practices unit-stride float warp 4 sectors",
        ),
        pytest.param(
            "smem-coalescing-ledger-sectors",
            {"s": 32},
            0,
            32,
            1e-9,
            id="CUDA best practices large stride 32 sectors",
        ),
        pytest.param(
            "flashattention-ledger-score-bytes",
            {"model": "llama-2-7b", "b": 1, "s": 8192, "dt": "bf16"},
            0,
            4 * GiB,
            1e-9,
            id="Dao 2022 scores B1 H32 S8192 bf16 4 GiB",
        ),
        pytest.param(
            "cuda-reduction-ledger-bytes-time",
            {"gpu": "h100-sxm", "n": 268435456, "dt": "fp32"},
            1,
            2**30 / 3.35e12,
            1e-6,
            id="stas00 H100 3.35 TB/s 1 GiB read",
        ),
        pytest.param(
            "profiling-ledger-achieved-flops",
            {"gpu": "h100-sxm", "m": 8192, "n": 8192, "k": 8192, "u": 80},
            0,
            0.8 * 989e12,
            1e-9,
            id="stas00 H100 dense bf16 989 TFLOPs",
        ),
    ],
)
def test_ledgers_reproduce_published_figures(deckset, card_id, draw, index, expected, rel):
    assert _answer(deckset, card_id, draw, index) == pytest.approx(expected, rel=rel)


def test_fused_softmax_moves_a_quarter_of_the_naive_traffic(deckset):
    # Triton tutorial 02: naive reads 5MN + 2M and writes 3MN + 2M elements; fused MN + MN.
    draw = {"gpu": "h100-sxm", "m": 4096, "n": 32000, "dt": "fp32"}
    answers = render(deckset.cards["triton-softmax-ledger-traffic"], draw).answers
    assert answers[0].value / answers[1].value == pytest.approx(4, rel=0.001)


@pytest.mark.parametrize("s", [512, 4096, 16384])
def test_fused_attention_intensity_is_half_the_sequence_in_bf16(deckset, s):
    draw = {"gpu": "h100-sxm", "b": 4, "h": 32, "s": s, "d": 128}
    assert _answer(deckset, "flashattention-ledger-intensity", draw, 1) == pytest.approx(s / 2)


@pytest.mark.parametrize("dt, e, spacing", [("bf16", 8, 2.0), ("fp16", 8, 0.25), ("bf16", 0, 2**-7)])
def test_smallest_update_is_half_the_ieee_spacing(deckset, dt, e, spacing):
    value = _answer(deckset, "numerics-ledger-smallest-update", {"dt": dt, "e": e}, 0)
    assert value == spacing / 2
    assert math.isclose(spacing, 2.0 ** (e - (7 if dt == "bf16" else 10)))
