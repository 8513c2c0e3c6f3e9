"""Shared pieces of the deck proofs: valid cards to mix in, boxed runs, and output checks.

Each load or app start runs in a forked child with a wall-clock limit and a
memory limit, so a deck that makes drill hang or swell is reported as such
(and the proof goes on) instead of stopping the proof itself.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `python proof/x.py` from a checkout imports this drill

from drill import paths  # noqa: E402

BUNDLED = paths.cards_dir()

# Cards that pass `drill check`, one of each kind that needs no files; {id} is replaced.
VALID_CARDS = {
    "concept": """\
  - id: {id}
    kind: concept
    topic: gpu-arch
    tags: [proof]
    prompt: "What does {id} check?"
    answer: "That a good card survives its neighbours."
    rubric: ["survives"]
    sources: ["proof"]
""",
    "shape_trace": """\
  - id: {id}
    kind: shape_trace
    topic: transformer-shapes
    given: "X: (B, S, D); Wq: (D, D)"
    prompt: "Trace the query projection."
    steps:
      - label: "Q = X·Wq"
        shape: "(B, S, D)"
    answer: "The projection keeps (B, S, D)."
    sources: ["proof"]
""",
    "diagnosis": """\
  - id: {id}
    kind: diagnosis
    topic: ddp
    prompt: "What bounds the step?"
    evidence: |
      all-reduce 90 % of the step
    choices: [compute-bound, communication-bound]
    correct: communication-bound
    answer: "The all-reduce."
    sources: ["proof"]
""",
    "memory_ledger": """\
  - id: {id}
    kind: memory_ledger
    topic: memory-accounting
    params:
      n: {{range: [1, 8]}}
    prompt: "How many bytes do {{{{ n }}}} fp32 values take?"
    answers:
      - {{label: "bytes", expr: "n * 4", unit: bytes}}
    answer: "Four bytes each: {{{{ n * 4 }}}}."
    sources: ["proof"]
""",
    "scenario": """\
  - id: {id}
    kind: scenario
    round: serving
    topic: serving
    params:
      n: {{range: [1, 8]}}
    opening: "A service holds some fp32 values."
    prompt: "A service holds {{{{ n }}}} fp32 values."
    answer: "Four bytes each."
    sources: ["proof"]
    stages:
      - type: clarify
        minutes: 5
        prompt: "Which numbers would you ask for?"
        asks: ["how many values", "their precision"]
      - type: estimate
        minutes: 5
        prompt: "How many bytes do {{{{ n }}}} fp32 values take?"
        answers:
          - {{label: "bytes", expr: "n * 4", unit: bytes}}
      - type: design
        minutes: 5
        prompt: "How would you store them?"
        rubric: ["contiguous fp32 buffer"]
      - type: twist
        minutes: 3
        set: {{n: 2}}
        prompt: "Now {{{{ n }}}} values: how many bytes?"
        answers:
          - {{label: "bytes", expr: "n * 4", unit: bytes}}
""",
}


def valid_card(kind: str, card_id: str) -> str:
    return VALID_CARDS[kind].format(id=card_id)


# --- boxed runs ----------------------------------------------------------------------------


@dataclass
class Boxed:
    """How a boxed call ended: ok (value), error (a traceback), timeout, or crashed (killed, no answer)."""

    status: str
    value: Any = None
    detail: str = ""
    seconds: float = 0.0
    peak_mb: float = 0.0


def _vm_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_boxed(
    tasks: list[Callable[[], Any]], *, timeout: float, extra_mb: int = 2048, jobs: int = 1, progress: str = ""
) -> list[Boxed]:
    """Run each task in a forked child, at most `jobs` at once; each gets `timeout` seconds and
    `extra_mb` of address space above what this process already uses. The value must be JSON."""
    results: list[Boxed | None] = [None] * len(tasks)
    limit = _vm_bytes() + extra_mb * 1024 * 1024
    running: dict[int, tuple[int, int, float, float, list[bytes]]] = {}  # fd -> (pid, index, start, deadline, chunks)
    pending = list(range(len(tasks)))[::-1]

    def start(i: int) -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: answer on the pipe, never return into the caller
            os.close(r)
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                if limit > 0:
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                t0 = time.perf_counter()
                try:
                    message = {"status": "ok", "value": tasks[i]()}
                except BaseException:  # noqa: BLE001 - every escape is what the proof counts
                    message = {"status": "error", "detail": traceback.format_exc(limit=-12)}
                message["seconds"] = time.perf_counter() - t0
                message["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                data = json.dumps(message, default=str).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view[:65536]) :]
            except BaseException:  # noqa: BLE001
                code = 3
            finally:
                os._exit(code)
        os.close(w)
        now = time.perf_counter()
        running[r] = (pid, i, now, now + timeout, [])

    done = shown = 0
    while pending or running:
        if progress and done // 100 > shown:
            shown = done // 100
            print(f"  {progress}: {done} of {len(tasks)}", file=sys.stderr, flush=True)
        while pending and len(running) < jobs:
            start(pending.pop())
        now = time.perf_counter()
        wait = max(0.0, min(d for (_, _, _, d, _) in running.values()) - now)
        ready, _, _ = select.select(list(running), [], [], wait)
        for fd in ready:
            pid, i, t0, deadline, chunks = running[fd]
            chunk = os.read(fd, 1 << 20)
            if chunk:
                chunks.append(chunk)
                continue
            os.close(fd)
            del running[fd]
            done += 1
            _, status = os.waitpid(pid, 0)
            try:
                message = json.loads(b"".join(chunks))
                results[i] = Boxed(
                    message["status"],
                    message.get("value"),
                    message.get("detail", ""),
                    message["seconds"],
                    message.get("peak_mb", 0.0),
                )
            except (ValueError, KeyError):
                why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
                results[i] = Boxed("crashed", detail=f"no answer ({why})", seconds=time.perf_counter() - t0)
        now = time.perf_counter()
        for fd, (pid, i, t0, deadline, _chunks) in list(running.items()):
            if now >= deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                del running[fd]
                done += 1
                results[i] = Boxed("timeout", detail=f"still running after {timeout:g} s", seconds=now - t0)
    return [r if r is not None else Boxed("crashed", detail="lost") for r in results]


# --- reading what drill printed ------------------------------------------------------------


def has_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" in text


def problem_summary(problems: list[Any], deck: Path) -> dict[str, Any]:
    """What the proofs check about a list of Problems, in JSON."""
    bad_place, line0, named = [], [], 0
    for p in problems:
        if p.path == str(deck):
            named += 1
        if not p.path or p.line is None or p.line < 0:
            bad_place.append(str(p)[:300])
        elif p.line == 0:
            line0.append((p.message[:300], str(p)[:300]))
        if not p.card_id:
            bad_place.append(str(p)[:300])
    return {
        "count": len(problems),
        "naming_deck": named,
        "bad_place": bad_place,
        "line0": line0,
        "longest_message": max((len(p.message) for p in problems), default=0),
        "sample": [str(p)[:200] for p in problems[:3]],
    }


def line0_kind(message: str) -> str:
    """Whole-file read errors may have line 0; anything else at line 0 is reported by kind."""
    if message.startswith("cannot read"):
        return "cannot read the file (whole file; line 0 allowed)"
    if message.startswith("no such file"):
        return "no such file or folder (whole file; line 0 allowed)"
    if "a deck file may be at most" in message:
        return "deck file over the size limit, refused unread (whole file; line 0 allowed)"
    if "unacceptable character" in message or "control characters are not allowed" in message:
        return "YAML reader error: a control character (has a position, reported at line 0)"
    return "other line-0 problem: " + message[:60]


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, key: str, sample: str = "", n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n
        if sample and len(self.samples.setdefault(key, [])) < 3:
            self.samples[key].append(sample)

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)
