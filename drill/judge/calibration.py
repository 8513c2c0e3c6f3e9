"""The judge's figures for this GPU, measured once and kept in a JSON file: the copy and read ceilings, the
event pair's cost, the compute ceilings (torch.matmul's, and torch._scaled_mm's for FP8 cards), and torch's own time
for each timed card shape.

Imported only by the judge child; drill.judge.runtime.Runtime holds them (a mixin, for the runtime's kits).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, cast

from drill.judge.timed import Calibration

if TYPE_CHECKING:
    from drill.judge.timed import CeilingKit, MatmulKit


@dataclass(frozen=True)
class ComputeCeiling:
    """A compute ceiling a card with a FLOP count is scored against: the fastest of one torch operation measured."""

    key: str  # its figure in the kept calibration and in `Calibrated.ceilings`, in TFLOPS
    name: str  # as a verdict names it ("of the <name> ceiling")
    by: str  # what is timed to find it


MATMUL_CEILING = ComputeCeiling("tflops", "matmul", "torch.matmul")
# an FP8 kernel passes the bf16 matmul's ceiling by design (twice the tensor-core rate): its own is FP8's
FP8_CEILING = ComputeCeiling("fp8_tflops", "FP8 matmul", "torch._scaled_mm with row-wise scales")
COMPUTE_CEILINGS = {c.key: c for c in (MATMUL_CEILING, FP8_CEILING)}
CEILINGS = ("gbps", "read_gbps")  # GB/s: a device-to-device copy (read + write), and the fastest pure read
EVENT_US = "event_us"  # what a CUDA event pair adds to a launch here, taken off event-timed figures
BASELINES = "baselines"  # "card|shape|torch VERSION": [ms, host µs] of torch's own way


def compute_ceiling(harness: object) -> ComputeCeiling | None:
    """The compute ceiling a card is held to: None without a FLOP count (`flops`), else its harness's
    `COMPUTE_CEILING` (a key of COMPUTE_CEILINGS), torch.matmul's when it names none."""
    if not hasattr(harness, "flops"):
        return None
    key = getattr(harness, "COMPUTE_CEILING", MATMUL_CEILING.key)
    if key not in COMPUTE_CEILINGS:
        raise ValueError(f"COMPUTE_CEILING {key!r} is none of {', '.join(COMPUTE_CEILINGS)}")
    return COMPUTE_CEILINGS[key]


def _figure(entry: Calibration, ceiling: ComputeCeiling) -> float | None:
    """`ceiling`'s figure in a calibration entry, when it holds one."""
    found = cast(dict[str, object], entry).get(ceiling.key)
    return float(found) if isinstance(found, (int, float)) else None


def _complete(entry: object, keys: tuple[str, ...]) -> TypeGuard[Calibration]:
    """A saved calibration entry that holds a number for each of `keys`."""
    return isinstance(entry, dict) and all(isinstance(entry.get(k), (int, float)) for k in keys)


def _entry(found: object) -> Calibration:
    """A kept entry as read from the file ({} when it is not a JSON object); each field is checked where read."""
    return cast(Calibration, found) if isinstance(found, dict) else {}


@functools.cache
def installed(name: str) -> str:
    """A package's version without importing it (looked up once: it is read for every kept figure)."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def _baseline_key(card: str, shape: str) -> str:
    return f"{card}|{shape}|torch {installed('torch')}"


def device_key() -> str:
    """This GPU as its kept figures are filed: name, UUID and memory, from the driver (no torch, no CuPy)."""
    from drill.judge import cudadrv

    found = cudadrv.device_identity(0)
    return f"{found['name']}|{found['uuid']}|{found['total_memory']}"


def read_saved(calibration: Path | None) -> dict[str, object]:
    """Every GPU's kept figures, by device_key; {} when there are none or the file cannot be read."""
    if calibration is None or not calibration.exists():
        return {}
    try:
        data = json.loads(calibration.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Calibrated:
    """The saved figures of the runtime's GPU (`device_key`), and measuring them when they are missing."""

    calibration: Path | None
    arch: str
    device_words: str
    _ceilings: dict[str, float] | None
    _event_ms = 0.0

    def torch_kit(self) -> MatmulKit:
        raise NotImplementedError

    def release_memory(self) -> None:
        raise NotImplementedError

    def device_key(self) -> str:
        return device_key()

    def _saved(self) -> dict[str, object]:
        return read_saved(self.calibration)

    def calibrated(self, compute: ComputeCeiling | None = None) -> bool:
        """Whether `ceilings` can answer without measuring (saved for this GPU, or measured in this judge)."""
        if self._ceilings is not None:
            return compute is None or compute.key in self._ceilings
        saved = self._saved()
        return bool(saved) and _complete(
            saved.get(self.device_key()), (*CEILINGS, EVENT_US, *((compute.key,) if compute else ()))
        )

    def ceilings(self, kit: CeilingKit, compute: ComputeCeiling | None = None) -> dict[str, float]:
        """This GPU's copy and read ceilings in GB/s (and, for a card with a FLOP count, its `compute` ceiling
        in TFLOPS): saved, else measured now with torch's kit (and saved). Gives `kit` the event pair's cost."""
        if self._ceilings is None:
            entry: Calibration | None = None
            saved = self._saved().get(self.device_key())
            if _complete(saved, (*CEILINGS, EVENT_US)):
                entry = saved
            else:
                entry = self.calibrate(kit)  # with the kit at hand: a judge that started with CuPy needs no torch
            self._event_ms = float(entry["event_us"]) / 1e3
            self._ceilings = {"gbps": float(entry["gbps"]), "read_gbps": float(entry["read_gbps"])}
            for ceiling in COMPUTE_CEILINGS.values():
                tflops = _figure(entry, ceiling)
                if tflops is not None:
                    self._ceilings[ceiling.key] = tflops
        kit.event_overhead_ms = self._event_ms
        if compute is not None and compute.key not in self._ceilings:
            figure = _figure(self.calibrate_compute(self.torch_kit(), compute), compute)
            if figure is not None:  # none where the GPU cannot run the ceiling's operation
                self._ceilings[compute.key] = figure
        return self._ceilings

    def saved_baseline(self, card: str, shape: str) -> tuple[float, float] | None:
        """(ms, host µs) of torch's own way for the card at `shape`, as kept for this GPU and this torch."""
        kept: object = _entry(self._saved().get(self.device_key())).get("baselines")
        found = kept.get(_baseline_key(card, shape)) if isinstance(kept, dict) else None
        if isinstance(found, list) and len(found) == 2 and all(isinstance(x, (int, float)) for x in found):
            return float(found[0]), float(found[1])
        return None

    def save_baseline(self, card: str, shape: str, times: tuple[float, float]) -> None:
        """Keep torch's own (ms, host µs) for the card at `shape`, for this GPU and this torch."""
        kept: object = _entry(self._saved().get(self.device_key())).get("baselines")
        self._save_entry(
            {"baselines": {**(kept if isinstance(kept, dict) else {}), _baseline_key(card, shape): list(times)}}
        )

    def calibrate_compute(self, kit: MatmulKit, ceiling: ComputeCeiling = MATMUL_CEILING) -> Calibration:
        """Measure a compute ceiling (only when a card with a FLOP count is timed: it costs a second or two)."""
        result = self._measure_compute(kit, ceiling)
        self._save_entry(result)
        return result

    def _measure_compute(self, kit: MatmulKit, ceiling: ComputeCeiling) -> Calibration:
        from drill.judge.measure import measure_fp8_tflops, measure_matmul_tflops

        result = measure_fp8_tflops(kit) if ceiling == FP8_CEILING else measure_matmul_tflops(kit)
        self.release_memory()
        return result

    def _save_entry(self, result: Calibration) -> None:
        """Merge `result` into this GPU's saved calibration."""
        if self.calibration is None:
            return
        data = self._saved()
        entry = data.get(self.device_key())
        data[self.device_key()] = {**(entry if isinstance(entry, dict) else {}), **result}
        self.calibration.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.calibration.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, self.calibration)

    def calibrate(self, kit: CeilingKit, compute: bool = False) -> Calibration:
        """Measure the copy and read ceilings (and, with `compute`, every compute ceiling this GPU has), and save
        them."""
        from drill.judge.measure import event_overhead, measure_copy_gbps, measure_read_gbps

        result = event_overhead(kit)  # first: the ceilings below are timed with events too
        self._event_ms = float(result["event_us"]) / 1e3
        kit.event_overhead_ms = self._event_ms
        result.update(measure_copy_gbps(kit))
        self.release_memory()
        result.update(measure_read_gbps(kit, self.arch))
        self.release_memory()
        self._ceilings = {"gbps": float(result["gbps"]), "read_gbps": float(result["read_gbps"])}
        result["device"] = self.device_words
        result["measured_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        result["method"] = (
            "1 GiB: device-to-device copy (bytes read + written) and the fastest pure read; median of CUDA-event"
            " timings less the event pair's own cost (event_us), L2 flushed before each"
        )
        if compute:
            for ceiling in COMPUTE_CEILINGS.values():
                measured = self._measure_compute(self.torch_kit(), ceiling)
                result.update(measured)
                figure = _figure(measured, ceiling)
                if figure is not None:  # FP8's only where the GPU has FP8 tensor cores
                    self._ceilings[ceiling.key] = figure
        self._save_entry(result)
        return result
