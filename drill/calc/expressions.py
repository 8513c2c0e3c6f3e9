"""The functions and constants that parameterised cards may call in their sandboxed expressions.

Cards receive models and GPUs as the mappings from cards/data/models.yaml and
gpus.yaml (a name such as "h100-sxm" works too). Every function checks its
arguments and raises ValueError with a message on impossible values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from drill.calc import (
    activations,
    block_scales,
    capacity,
    checks,
    collectives,
    context,
    flops,
    gemm,
    grouped_gemm,
    hbm,
    inference,
    kernel_traffic,
    kv,
    ledger,
    moe,
    pipeline,
    reliability,
    roofline,
    speculative,
    steptime,
    zero,
)
from drill.calc.data import as_gpu, as_model
from drill.calc.dtypes import dtype_bytes
from drill.calc.sizes import GB, KB, MB, TB, GiB, KiB, MiB, TiB
from drill.calc.totals import count_params

Model = Mapping[str, object] | str
Gpu = Mapping[str, object] | str


def params(model: Model) -> int:
    """Exact parameter count, embeddings and an untied output head included."""
    return count_params(as_model(model))


def weight_bytes(model: Model, dtype: str = "bf16") -> float:
    return inference.weight_bytes(as_model(model), dtype)


def kv_bytes_per_token(model: Model, dtype: str = "bf16") -> float:
    return kv.kv_bytes_per_token(as_model(model), dtype)


def kv_bytes(model: Model, tokens: int, batch: int = 1, dtype: str = "bf16") -> float:
    return kv.kv_bytes(as_model(model), tokens, batch, dtype)


def activation_bytes(
    model: Model, seq: int, batch: int, tp: int = 1, sp: bool = False, recompute: str = "none"
) -> float:
    """Korthikanti activations of all layers of `model` for one micro-batch."""
    m = as_model(model)
    hidden = checks.count("hidden", checks.field(m, "hidden"))
    heads = checks.count("heads", checks.field(m, "heads"))
    per_layer = activations.activation_bytes_per_layer(seq, batch, hidden, heads, tp, sp, recompute)
    return float(per_layer * checks.count("layers", checks.field(m, "layers")))


def peak_flops(gpu: Gpu, dtype: str = "bf16") -> float:
    return roofline.peak_flops(as_gpu(gpu), dtype)


def ridge(gpu: Gpu, dtype: str = "bf16") -> float:
    return roofline.ridge(as_gpu(gpu), dtype)


def roofline_time(gpu: Gpu, flops: float, bytes: float, dtype: str = "bf16") -> float:
    return roofline.roofline_time(as_gpu(gpu), flops, bytes, dtype)


def roofline_bound(gpu: Gpu, flops: float, bytes: float, dtype: str = "bf16") -> str:
    """'compute' or 'memory': the side of the roofline that bounds the time."""
    return str(roofline.roofline(as_gpu(gpu), flops, bytes, dtype)["bound"])


def training_ledger(
    model: Model, seq: int, batch: int, optimizer: str = "adam", gpus: int = 1, zero: int = 0, recompute: str = "none"
) -> dict[str, float]:
    """weights, grads (also as gradients), optimizer, activations and total bytes per GPU."""
    return ledger.training_ledger(as_model(model), seq, batch, optimizer, gpus, zero, recompute=recompute)


def decode_time_lower_bound(
    model: Model, gpu: Gpu, batch: int, context: int, dtype: str = "bf16", kv_dtype: str = "bf16"
) -> float:
    return inference.decode_time_lower_bound(as_model(model), as_gpu(gpu), batch, context, dtype, kv_dtype)


def max_concurrent_sequences(
    model: Model, gpu: Gpu, tokens_per_seq: int, dtype: str = "bf16", kv_dtype: str = "bf16", reserve_bytes: float = 0
) -> int:
    return inference.max_concurrent_sequences(
        as_model(model), as_gpu(gpu), tokens_per_seq, dtype, kv_dtype, reserve_bytes
    )


def hbm_bytes(gpu: Gpu) -> float:
    """The HBM capacity the device reports, in bytes (not its "80 GB" label)."""
    return hbm.hbm_bytes(as_gpu(gpu))


def hbm_statement(gpu: Gpu) -> str:
    """The capacity a prompt assumes, as a prompt states it (reported MiB, GiB, GB and the label)."""
    return hbm.hbm_statement(as_gpu(gpu))


def log2(x: float) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x <= 0:
        raise ValueError(f"log2 needs a positive number, got {x!r}")
    return math.log2(x)


FUNCTIONS: dict[str, Callable[..., object]] = {
    # models and dtypes
    "params": params,
    "weight_bytes": weight_bytes,
    "dtype_bytes": dtype_bytes,
    # HBM capacity: the reported bytes, and the sentence a prompt states them in
    "hbm_bytes": hbm_bytes,
    "hbm_statement": hbm_statement,
    # inference
    "kv_bytes_per_token": kv_bytes_per_token,
    "kv_bytes": kv_bytes,
    "decode_time_lower_bound": decode_time_lower_bound,
    "max_concurrent_sequences": max_concurrent_sequences,
    # training memory
    "zero_bytes_per_gpu": zero.zero_bytes_per_gpu,
    "zero_terms": zero.zero_terms,
    "zero_comm_volume": zero.zero_comm_volume,
    "activation_bytes_per_layer": activations.activation_bytes_per_layer,
    "activation_bytes": activation_bytes,
    "training_ledger": training_ledger,
    # communication and pipelines
    "collective_bytes_per_rank": collectives.collective_bytes_per_rank,
    "bus_factor": collectives.bus_factor,
    "transfer_time": collectives.transfer_time,
    "ring_allreduce_time": collectives.ring_allreduce_time,
    "tree_allreduce_time": collectives.tree_allreduce_time,
    "bubble_fraction_of_ideal": pipeline.bubble_fraction_of_ideal,
    "bubble_fraction_of_total": pipeline.bubble_fraction_of_total,
    # compute
    "peak_flops": peak_flops,
    "ridge": ridge,
    "roofline_time": roofline_time,
    "roofline_bound": roofline_bound,
    "training_flops": flops.training_flops,
    "forward_flops_per_token": flops.forward_flops_per_token,
    "training_time": flops.training_time,
    "model_flops_utilisation": flops.model_flops_utilisation,
    # arithmetic
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": log2,
    "sqrt": math.sqrt,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    # calculator modules that list their own card functions
    **moe.CARD_FUNCTIONS,
    **context.CARD_FUNCTIONS,
    **gemm.CARD_FUNCTIONS,
    **capacity.CARD_FUNCTIONS,
    **reliability.CARD_FUNCTIONS,
    **steptime.CARD_FUNCTIONS,
    **speculative.CARD_FUNCTIONS,
    **kernel_traffic.CARD_FUNCTIONS,
    **block_scales.CARD_FUNCTIONS,
    **grouped_gemm.CARD_FUNCTIONS,
}

CONSTANTS: dict[str, float] = {
    "KB": KB,
    "MB": MB,
    "GB": GB,
    "TB": TB,
    "KiB": KiB,
    "MiB": MiB,
    "GiB": GiB,
    "TiB": TiB,
}

# Everything a card expression can name: functions first, then the size constants.
NAMES: dict[str, object] = {**FUNCTIONS, **CONSTANTS}

# Module-level constants too, so `from drill.calc.expressions import GB` works.
__all__ = ["CONSTANTS", "FUNCTIONS", "GB", "KB", "MB", "NAMES", "TB", "GiB", "KiB", "MiB", "TiB"]
