"""The total parameter count of a model in cards/data/models.yaml, dense or mixture of experts.

Apart from drill.calc.parameter_count so that the dense breakdown and the MoE count
(drill.calc.moe, which builds on the breakdown) do not import each other.
"""

from __future__ import annotations

from collections.abc import Mapping

from drill.calc.moe import moe_total_params
from drill.calc.parameter_count import breakdown


def count_params(model: Mapping[str, object]) -> int:
    """Total parameters, embeddings and an untied output head included (every expert of an MoE model)."""
    if model.get("experts") or model.get("kv_lora_rank"):
        return moe_total_params(model)
    return breakdown(model).total
