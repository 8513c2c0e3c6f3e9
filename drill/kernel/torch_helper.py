"""`python -m drill.kernel.torch_helper`: torch's own time for a card, for a judge that started without torch.

A new judge whose first run is a CUDA card judges it with CuPy's kit
(drill.kernel.cupy_kit). The "× torch" figure needs torch's own way timed once
per GPU, and importing torch is most of a cold start. So that judge starts
this process at once: it imports torch on another core while the judge
checks and times the card, then touches the GPU only when asked (after the
judge's own timing), times torch's way at the shape on inputs of its own, says
the figure and exits. Imported only in this process; the judge falls back to
timing it itself whenever this cannot answer.
"""

from __future__ import annotations

import os
import sys

from drill.kernel import protocol


def main() -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr  # the harness's prints cannot reach the answer
    import torch  # noqa: F401 - the slow part, while the judge works

    protocol.write(out, {"event": "ready"})
    request = protocol.decode(sys.stdin.readline())
    if not isinstance(request, dict):
        return 0
    from drill.kernel.judging import load_harness
    from drill.kernel.kit import Kit

    harness = load_harness(str(request["harness"]))
    kit = Kit(True)
    kit.event_overhead_ms = float(request.get("event_ms") or 0.0)
    kit.begin_case()
    inputs = harness.make_inputs(request["case"], kit)
    base = kit.measure(harness.baseline(inputs, kit), poison=False, budget_s=0.1)
    protocol.write(out, {"event": "baseline", "ms": base.ms, "host_us": base.host_us})
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)
