"""HBM capacity: the label a GPU is sold under and the bytes the device reports, kept apart.

An "80 GB" H100 is not 80e9 bytes: its HBM is sized in binary units and
nvidia-smi reports 81,559 MiB (85.5e9 B, 79.6 GiB). Capacity arithmetic uses
the reported figure (gpus.yaml `hbm_mib`); the label is only a name.
"""

from __future__ import annotations

from collections.abc import Mapping

from drill.calc import checks
from drill.calc.sizes import GiB, MiB


def hbm_bytes(gpu: Mapping[str, object]) -> float:
    """The HBM capacity the device reports, in bytes; ValueError when only the label is sourced."""
    mib = gpu.get("hbm_mib")
    if mib is None:
        label = gpu.get("hbm_label", "?")
        raise ValueError(f"gpu {gpu.get('name', '?')!r}: no sourced device-reported capacity, only its label {label}")
    return float(checks.positive("hbm_mib", mib) * MiB)


def hbm_statement(gpu: Mapping[str, object]) -> str:
    """The capacity a card assumes, as a prompt states it: the reported MiB and GiB, who reports it, the label.

    '81,559 MiB of HBM (79.6 GiB per nvidia-smi; sold as "80 GB")': at most 72 characters, a line of a card.
    """
    total = hbm_bytes(gpu)
    reporter = gpu.get("hbm_reported_by", "the device")
    return (
        f'{total / MiB:,.0f} MiB of HBM ({total / GiB:.1f} GiB per {reporter}; sold as "{gpu.get("hbm_label", "?")}")'
    )
