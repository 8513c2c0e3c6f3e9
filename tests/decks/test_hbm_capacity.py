"""HBM capacity: each GPU's lesson computed from cards/data/gpus.yaml, and every card that reads it.

The lesson: a GPU's "80 GB" is a label for GiB-sized memory. The device reports
the total in MiB (nvidia-smi's memory.total), about the label in GiB, and
reading the label as 10^9-byte units undercounts it by about 7 %.
"""

import math
import random

import pytest

from drill.calc.data import load_gpus
from drill.calc.expressions import NAMES
from drill.calc.hbm import hbm_bytes, hbm_statement
from drill.calc.sizes import GB, GiB, MiB
from drill.cards.templating import draw_params, render
from tests.conftest import bundled_cards

GPUS = load_gpus()
REPORTED = {name: gpu for name, gpu in GPUS.items() if gpu["hbm_mib"] is not None}
CARDS = bundled_cards()


def _label_gb(gpu):
    number, unit = gpu["hbm_label"].split()
    assert unit == "GB"
    return float(number)


@pytest.mark.parametrize(
    ("name", "mib", "source"),
    [
        ("h100-sxm", 81_559, "NVIDIA/nccl issue 1264; modal-labs/modal-client PR 2797 (85.52 GB)"),
        ("a100-80gb", 81_920, "modal-labs/modal-client PR 2797 (85.89 GB)"),
        ("h200", 143_771, "nvidia-smi on an H200, 2026-11-28"),
    ],
)
def test_reported_capacities_are_the_published_nvidia_smi_totals(name, mib, source):
    assert GPUS[name]["hbm_bytes"] == hbm_bytes(GPUS[name]) == mib * MiB, source


def test_the_h100_total_is_85_52e9_bytes():
    assert GPUS["h100-sxm"]["hbm_bytes"] / GB == pytest.approx(85.52, abs=0.005)


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_each_gpus_capacity_lesson_the_label_is_gib_sized(name):
    gpu = REPORTED[name]
    label = _label_gb(gpu)
    # the reported total is the label in GiB, within 1 % ...
    assert gpu["hbm_bytes"] / GiB == pytest.approx(label, rel=0.01)
    # ... so the label read as decimal bytes undercounts it by 5-8 %
    assert 0.05 < 1 - label * GB / gpu["hbm_bytes"] < 0.08
    shown = hbm_statement(gpu)
    assert f"{gpu['hbm_mib']:,} MiB" in shown and f'"{gpu["hbm_label"]}"' in shown and len(shown) <= 72


def test_a_gpu_with_only_its_label_sourced_has_no_capacity_to_compute_with():
    assert GPUS["h100-pcie"]["hbm_mib"] is None and GPUS["h100-pcie"]["hbm_bytes"] is None
    with pytest.raises(ValueError, match="only its label 80 GB"):
        hbm_bytes(GPUS["h100-pcie"])


def _reads_capacity(card):
    exprs = [str(e.get("expr", "")) for e in card.fields.get("answers", [])]
    return any("hbm_bytes" in e or "max_concurrent_sequences" in e for e in exprs)


CAPACITY_CARDS = sorted(cid for cid, c in CARDS.items() if c.kind == "memory_ledger" and _reads_capacity(c))


def test_the_capacity_cards_are_found():
    assert {"gpu-arch-ledger-hbm-gib", "memory-accounting-weights-vs-hbm", "moe-ledger-ep-weights"} <= set(
        CAPACITY_CARDS
    )
    assert "serving-ledger-concurrent-sequences" in CAPACITY_CARDS


@pytest.mark.parametrize("card_id", CAPACITY_CARDS)
def test_every_capacity_card_states_the_capacity_it_assumes(card_id):
    card = CARDS[card_id]
    for name in card.fields["params"]["gpu"]["gpu"]:
        draw = {**draw_params(card, random.Random(card_id)), "gpu": name}
        prompt = render(card, draw).prompt
        assert f"{GPUS[name]['hbm_mib']:,} MiB" in prompt, (card_id, name, prompt)


@pytest.mark.parametrize("name", ["a100-80gb", "h100-sxm", "h200"])
def test_the_gpu_arch_card_computes_its_lesson_from_gpus_yaml(name):
    shown = render(CARDS["gpu-arch-ledger-hbm-gib"], {"gpu": name})
    gpu = GPUS[name]
    assert shown.answers[0].value == gpu["hbm_mib"] * MiB
    assert shown.answers[1].value == pytest.approx(gpu["hbm_mib"] * MiB / gpu["hbm_bandwidth"])
    assert f'"{gpu["hbm_label"]}"' in shown.prompt and "undercounts" in shown.answer


@pytest.mark.parametrize("name", ["a100-80gb", "h100-sxm", "h200"])
def test_the_weights_card_divides_by_the_reported_capacity(name):
    draw = {"model": "llama-3-70b", "dt": "bf16", "gpu": name}
    shown = render(CARDS["memory-accounting-weights-vs-hbm"], draw)
    weights = NAMES["weight_bytes"]("llama-3-70b", "bf16")
    assert shown.answers[1].value == math.ceil(weights / (GPUS[name]["hbm_mib"] * MiB))
    # Llama 3 70B in bf16 (141.1e9 B) fits the reported 150.8e9 B of one H200, though not its label's 141e9 B
    if name == "h200":
        assert shown.answers[1].value == 1 and weights > 141e9
