"""What a learner's call ran on a GPU: the kernels, memsets and copies in the judge's own CUPTI activity records.

Imported only by the judge child. The records come from the driver, outside anything the learner's Python can
change: each kernel's name, and the CUDA call that asked for it (when it was made). A call is watched in a window
of CUPTI's clock (`cupti.StreamAudit.enter` / `leave` around each timed call, `GpuWatch.call` around each checked
one); the work asked for inside the window is the call's, sorted by drill.judge.evidence.sort_gpu_work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drill.judge import cupti
from drill.judge.evidence import Allowance, Seen, Work, sort_gpu_work


def sort_calls(calls: Sequence[Sequence[Work]], learner: frozenset[str], allowed: Sequence[Allowance]) -> Seen:
    """The work of several calls (each a list of what it asked for), sorted and added up."""
    total = Seen("gpu")
    for work in calls:
        total.add(sort_gpu_work(work, learner, allowed))
    return total


class GpuWatch:
    """Watches the learner's checked calls: `call(fn)` runs one and returns what it ran on the GPU."""

    where = "gpu"

    def __init__(
        self, learner: frozenset[str], allowed: Sequence[Allowance], synchronize: Callable[[], object]
    ) -> None:
        self.learner = learner
        self.allowed = tuple(allowed)
        self.synchronize = synchronize
        self.recorder, self.why_not = cupti.recorder()

    def call(self, fn: Callable[[], object]) -> Seen:
        """Run `fn` and wait for the GPU; the work it asked for, sorted (`unseen` says why, when CUPTI cannot
        record here: then `fn` runs unwatched)."""
        recorder = self.recorder
        if recorder is None:
            fn()
            self.synchronize()
            return Seen("gpu", calls=1, unseen=self.why_not)
        self.synchronize()  # what the harness queued before is not the call's
        try:
            recorder.start(cupti.AUDIT_KINDS)
        except cupti.CuptiError as exc:
            fn()
            self.synchronize()
            return Seen("gpu", calls=1, unseen=str(exc))
        try:
            start = recorder.now()
            fn()
            self.synchronize()
            end = recorder.now()
        finally:
            recorder.stop()
        return sort_calls(recorder.work_of_calls([(start, end)]), self.learner, self.allowed)
