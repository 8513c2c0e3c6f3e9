"""The JSON-lines protocol between the judge client and its child process.

Requests (client -> child), one JSON object per line:
    {"op": "run", "id": 3, "job": {...}, "source": "...", "timing": "first"}   (job: fresh_baseline re-times PyTorch)
    {"op": "calibrate", "id": 4}
    {"op": "quit"}

Events (child -> client) carry the request's id, except `ready`:
    ready        pid, device, gpu, versions, startup (once, after start-up; startup: seconds per phase)
    started      card, device, gpu
    compiled     ok, seconds, log, messages[], resources[]
    case_started name                                 (so a crash can name its case)
    case         name, ok, message, max_error, tolerance, seconds
    timing       name, ms, gbps, pct_of_ceiling, ceiling_gbps, read_ceiling_gbps, torch_ms, torch_gbps, vs_torch,
                 bytes, dram_bytes, reps, host_us, torch_host_us   (after the timed output was checked)
    note         text                                 (something that was not checked, and why)
    error        message, case, kind, fatal           (fatal: the child exits after it)
    calibrated   gbps, read_gbps, device, ...
    finished     seconds
"""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

EVENTS = (
    "ready",
    "started",
    "compiled",
    "case_started",
    "case",
    "timing",
    "note",
    "error",
    "calibrated",
    "finished",
)


def _clean(value: Any) -> Any:
    """JSON has no NaN or infinity: send them as strings so the line stays valid."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def encode(message: dict[str, Any]) -> str:
    return json.dumps(_clean(message), separators=(",", ":"), ensure_ascii=False) + "\n"


def decode(line: str) -> dict[str, Any] | None:
    """One message, or None for a line that is not a protocol message (stray output)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and ("event" in value or "op" in value) else None


def write(stream: TextIO, message: dict[str, Any]) -> None:
    stream.write(encode(message))
    stream.flush()
