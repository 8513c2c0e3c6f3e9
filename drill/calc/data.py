"""Model configurations and GPU specifications from cards/data, loaded once and looked up by name."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml

from drill import paths
from drill.calc.sizes import MiB

MODEL_KEYS = (
    "name",
    "title",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn",
    "vocab",
    "tied_embeddings",
    "ffn_type",
    "norm",
    "bias",
    "learned_positions",
    "position_offset",
    "max_positions",
)
# Keys that must hold numbers (null allowed where the hardware lacks the feature or the value is unverified).
MODEL_COUNTS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab")
# Optional keys of mixture-of-experts models: a model with any MoE key has all of MOE_REQUIRED.
MOE_REQUIRED = ("experts", "experts_per_token", "expert_ffn")
MOE_OPTIONAL = ("shared_experts", "dense_layers")  # whole numbers >= 0, default 0
ROUTER_SCORES = ("softmax", "sigmoid")
# Optional keys of multi-head latent attention (MLA): all of MLA_REQUIRED, or none; q_lora_rank may be null.
MLA_REQUIRED = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
GPU_NUMBERS = (
    "hbm_bandwidth",
    "bf16_flops",
    "tf32_flops",
    "fp32_flops",
    "sms",
    "l2_bytes",
    "smem_per_sm_bytes",
)
# hbm_mib is null where no device report of the capacity is sourced (the label alone is).
GPU_NULLABLE = ("hbm_mib", "fp8_flops", "nvlink_bandwidth")
GPU_KEYS = (
    "name",
    "title",
    "hbm_label",
    "hbm_mib",
    "hbm_reported_by",
    "hbm_bandwidth",
    "bf16_flops",
    "fp8_flops",
    "tf32_flops",
    "fp32_flops",
    "sms",
    "l2_bytes",
    "smem_per_sm_bytes",
    "nvlink_bandwidth",
)


class UnknownName(ValueError):
    """A model or GPU name that the data files do not define."""

    def __init__(self, what: str, name: object, known: list[str]):
        self.what = what
        self.name = name
        self.known = known
        super().__init__(f"unknown {what} {name!r}; known: {', '.join(known)}")


class DataFileError(ValueError):
    """A data file that is missing a key or holds a bad value."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _load(
    path: Path, section: str, required: tuple[str, ...], numbers: tuple[str, ...] = (), nullable: tuple[str, ...] = ()
) -> dict[str, dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        doc = yaml.safe_load(handle) or {}
    entries = doc.get(section)
    if not isinstance(entries, list):
        raise DataFileError(f"{path}: expected a list under '{section}:'")
    out: dict[str, dict[str, object]] = {}
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not name:
            raise DataFileError(f"{path}: an entry under '{section}:' has no name")
        missing = [key for key in required if key not in entry]
        if missing:
            raise DataFileError(f"{path}: {name}: missing {', '.join(missing)}")
        bad = [key for key in numbers if not _is_number(entry[key])]
        bad += [key for key in nullable if entry[key] is not None and not _is_number(entry[key])]
        if bad:
            # YAML 1.1 reads 3.35e12 as text; write 3.35e+12
            raise DataFileError(f"{path}: {name}: not a positive number: {', '.join(bad)}")
        if not entry.get("sources"):
            raise DataFileError(f"{path}: {name}: no sources")
        if name in out:
            raise DataFileError(f"{path}: {name}: defined twice")
        out[name] = dict(entry)
    return out


def _is_whole(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _whole(entry: dict[str, object], key: str) -> int:
    """A key already checked to be a whole number (0 when absent)."""
    value = entry.get(key, 0)
    return value if isinstance(value, int) else 0


def _check_moe(path: Path, name: str, entry: dict[str, object]) -> None:
    """The optional MoE and MLA keys of one model entry: complete, whole numbers, consistent."""
    problems: list[str] = []
    moe = [key for key in MOE_REQUIRED + MOE_OPTIONAL + ("router_score",) if key in entry]
    if moe:
        problems += [f"{key} missing (MoE keys go together)" for key in MOE_REQUIRED if key not in entry]
        problems += [
            f"{key} not a whole number >= 1" for key in MOE_REQUIRED if key in entry and not _is_whole(entry[key], 1)
        ]
        problems += [
            f"{key} not a whole number >= 0" for key in MOE_OPTIONAL if key in entry and not _is_whole(entry[key], 0)
        ]
        if "router_score" in entry and entry["router_score"] not in ROUTER_SCORES:
            problems.append(f"router_score not one of {', '.join(ROUTER_SCORES)}")
        if not problems:
            if _whole(entry, "experts_per_token") > _whole(entry, "experts"):
                problems.append("experts_per_token > experts")
            if _whole(entry, "dense_layers") >= _whole(entry, "layers"):
                problems.append("dense_layers >= layers")
    mla = [key for key in MLA_REQUIRED + ("q_lora_rank",) if key in entry]
    if mla:
        problems += [f"{key} missing (MLA keys go together)" for key in MLA_REQUIRED if key not in entry]
        problems += [
            f"{key} not a whole number >= 1" for key in MLA_REQUIRED if key in entry and not _is_whole(entry[key], 1)
        ]
        q_rank = entry.get("q_lora_rank")
        if q_rank is not None and not _is_whole(q_rank, 0):
            problems.append("q_lora_rank not a whole number >= 0 or null")
    if problems:
        raise DataFileError(f"{path}: {name}: {'; '.join(problems)}")


@cache
def _models(directory: Path) -> dict[str, dict[str, object]]:
    path = directory / "models.yaml"
    models = _load(path, "models", MODEL_KEYS, MODEL_COUNTS)
    for name, entry in models.items():
        _check_moe(path, name, entry)
    return models


@cache
def _gpus(directory: Path) -> dict[str, dict[str, object]]:
    gpus = _load(directory / "gpus.yaml", "gpus", GPU_KEYS, GPU_NUMBERS, GPU_NULLABLE)
    for entry in gpus.values():
        # Derived once from the reported MiB: the capacity every calculator and card reads.
        mib = entry["hbm_mib"]
        entry["hbm_bytes"] = float(mib) * MiB if isinstance(mib, (int, float)) else None
    return gpus


def load_models() -> dict[str, dict[str, object]]:
    """Every model configuration, keyed by name (a fresh copy: callers may not change the cache)."""
    return {name: dict(entry) for name, entry in _models(paths.data_files_dir()).items()}


def load_gpus() -> dict[str, dict[str, object]]:
    """Every GPU specification, keyed by name."""
    return {name: dict(entry) for name, entry in _gpus(paths.data_files_dir()).items()}


def model(name: str) -> dict[str, object]:
    """One model configuration; UnknownName lists the known ones."""
    models = _models(paths.data_files_dir())
    if name not in models:
        raise UnknownName("model", name, sorted(models))
    return dict(models[name])


def gpu(name: str) -> dict[str, object]:
    """One GPU specification; UnknownName lists the known ones."""
    gpus = _gpus(paths.data_files_dir())
    if name not in gpus:
        raise UnknownName("gpu", name, sorted(gpus))
    return dict(gpus[name])


def as_model(value: Mapping[str, object] | str) -> Mapping[str, object]:
    """A model mapping, given either the mapping itself or its name."""
    if isinstance(value, str):
        return model(value)
    if not hasattr(value, "get"):
        raise ValueError(f"expected a model (a mapping from models.yaml or its name), got {value!r}")
    return value


def as_gpu(value: Mapping[str, object] | str) -> Mapping[str, object]:
    """A GPU mapping, given either the mapping itself or its name."""
    if isinstance(value, str):
        return gpu(value)
    if not hasattr(value, "get"):
        raise ValueError(f"expected a GPU (a mapping from gpus.yaml or its name), got {value!r}")
    return value
