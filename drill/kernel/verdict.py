"""The verdict of one kernel run, built from the judge's events, and the grade it suggests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from drill.kernel_shared.protocol import (
    CompilerMessageFields,
    ErrorEvent,
    EvidenceEvent,
    JudgeEvent,
    KernelResourceFields,
    TimingEvent,
    TorchTimeEvent,
    number,
)


@dataclass
class CaseResult:
    name: str
    ok: bool
    message: str = ""
    max_error: float | None = None
    tolerance: float | None = None
    seconds: float | None = None


@dataclass
class Evidence:
    """What the judge saw run during the learner's calls (drill.judge.evidence): the ground for "correct"."""

    phase: str  # "check": the correctness cases; "timing": the timed launches
    where: str  # "gpu": kernels from the judge's activity records; "cpu": ATen ops and Triton launches
    ok: bool | None  # True: only the learner's kernels and allowed work; False: something else ran; None: not seen
    words: str  # "kernels seen in 14 calls: 14 kernels from your file (softmax_kernel ×14), nothing else"
    refused: str = ""  # "not your kernel: at::native::cunn_SoftMaxForward ran"
    allows: str = ""  # what the card allows besides the learner's kernels

    @classmethod
    def from_event(cls, event: EvidenceEvent) -> Evidence:
        ok = event.get("ok")
        return cls(
            phase=str(event.get("phase") or ""),
            where=str(event.get("where") or ""),
            ok=None if ok is None else bool(ok),
            words=str(event.get("words") or ""),
            refused=str(event.get("refused") or ""),
            allows=str(event.get("allows") or ""),
        )

    def line(self) -> str:
        """One line for the verdict: what was seen, and what the card allows besides the learner's kernels."""
        return f"{self.words} (the card also allows {self.allows})" if self.allows else self.words


BOUND_SLACK = 0.05  # a figure more than this far above the measured ceiling is not a measurement


@dataclass
class Timing:
    name: str
    ms: float
    gbps: float
    bytes: int = 0
    reps: int = 0
    pct_of_ceiling: float | None = None  # None when the figure is impossible: it is never scored
    ceiling_gbps: float | None = None
    torch_ms: float | None = None
    torch_gbps: float | None = None
    vs_torch: float | None = None  # torch time / learner time: above 1 means faster than PyTorch
    host_us: float | None = None  # host time to issue one launch, kept out of `ms`
    torch_host_us: float | None = None
    dram_bytes: int = 0  # the bytes that had to cross DRAM during the launch (writes that fit in L2 need not)
    read_ceiling_gbps: float | None = None  # the fastest pure read measured on this GPU
    impossible: str = ""  # why the figure cannot be a real measurement; empty when it can
    bound: str = "memory"  # "compute": the card is scored in TFLOPS against its measured compute ceiling
    flops: int = 0  # the floating-point operations one launch must do (0: not counted)
    kit: str = ""  # what the judge ran the card with: "torch", or "cupy" (a CUDA card, torch never imported)
    torch_later: bool = False  # torch's own time is still being taken (after the verdict: a `torch_time` event)
    tflops: float | None = None
    ceiling_tflops: float | None = None  # the card's compute ceiling as measured on this GPU
    compute_ceiling: str = "matmul"  # that ceiling's name: "matmul", or "FP8 matmul" for an FP8 card
    compute_ceiling_by: str = "torch.matmul"  # what the judge timed to find it
    torch_tflops: float | None = None
    method: str = ""  # "records": the kernels' own time stamps; "events": a CUDA event pair around each launch
    method_note: str = ""  # why a short launch was timed with events
    less_us: float = 0.0  # events: the pair's own cost on this GPU, taken off the figure (µs)
    # a collective card (bound "collective"): gbps is the bus bandwidth, ceiling_gbps NCCL's, vs_torch the ratio
    algbw_gbps: float | None = None
    baseline: str = "PyTorch"  # what vs_torch compares with: "NCCL" for a collective card
    world: int = 0  # ranks, one per GPU

    @property
    def collective(self) -> bool:
        return self.bound == "collective"

    @property
    def ceiling_name(self) -> str:
        """Which ceiling the percentage is of: the compute ceiling's name ("matmul", "FP8 matmul") for a
        compute-bound card, "NCCL" for a collective, else "copy"."""
        if self.collective:
            return self.baseline
        return self.compute_ceiling if self.bound == "compute" else "copy"

    @property
    def ceiling_figure(self) -> str:
        """That ceiling as measured on this GPU, with its unit."""
        if self.collective:
            return f"{self.baseline}'s {self.ceiling_gbps or 0:,.0f} GB/s bus bandwidth"
        if self.bound == "compute":
            return f"{self.ceiling_tflops or 0:,.0f} TFLOPS"
        return f"{self.ceiling_gbps or 0:,.0f} GB/s"


def impossible_reason(t: Timing, slack: float = BOUND_SLACK) -> str:
    """Why `t` is above what the GPU can deliver, or "" when it is not.

    The bytes that had to cross DRAM during the launch, over its time, may not
    exceed the faster of the measured copy and read ceilings by more than
    `slack`; the FLOPs it had to do, over its time, may not exceed the measured
    compute ceiling by more than `slack`. A kernel that skips work, or a launch
    that did not really run, lands far above one or the other.
    """
    if t.collective:  # scored against NCCL measured in the same run: no ceiling of this GPU's applies
        return ""
    if t.bound == "compute":  # the figure the card is scored in speaks first
        return _compute_reason(t, slack) or _memory_reason(t, slack)
    return _memory_reason(t, slack) or _compute_reason(t, slack)


def _compute_reason(t: Timing, slack: float) -> str:
    ceiling = t.ceiling_tflops
    if not t.flops or not ceiling or ceiling <= 0:
        return ""
    if t.ms > 0 and t.flops / (t.ms * 1e-3) / 1e12 <= ceiling * (1.0 + slack):
        return ""
    claimed = t.flops / (t.ms * 1e-3) / 1e12 if t.ms > 0 else float("inf")
    return (
        f"{claimed / ceiling:.2f}× the {t.compute_ceiling} ceiling: the kernel cannot have done the arithmetic it "
        f"claims ({claimed:,.0f} TFLOPS claimed in {t.ms * 1000:.1f} µs; this GPU measured {ceiling:,.0f} TFLOPS "
        f"for {t.compute_ceiling_by})"
    )


def _memory_reason(t: Timing, slack: float) -> str:
    ceiling = t.ceiling_gbps
    if not ceiling or ceiling <= 0:
        return ""
    top = max(ceiling, t.read_ceiling_gbps or 0.0)
    must = t.dram_bytes or t.bytes
    if t.ms > 0 and must / (t.ms * 1e-3) / 1e9 <= top * (1.0 + slack):
        return ""
    claimed = t.gbps / ceiling if t.ms > 0 else float("inf")
    read = f", {t.read_ceiling_gbps:,.0f} GB/s for a pure read" if t.read_ceiling_gbps else ""
    return (
        f"{claimed:.2f}× the copy ceiling: the kernel cannot have moved the bytes it claims "
        f"({t.gbps:,.0f} GB/s claimed in {t.ms * 1000:.1f} µs; this GPU measured {ceiling:,.0f} GB/s for a copy{read})"
    )


@dataclass
class Verdict:
    """What a run found. `correct` is None when correctness could not be checked."""

    card: str
    device: str = ""
    gpu: bool = False
    compiled: bool | None = None
    correct: bool | None = None
    errors: list[str] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    messages: list[CompilerMessageFields] = field(default_factory=list)  # compiler diagnostics
    compile_log: str = ""
    compile_seconds: float | None = None
    resources: list[KernelResourceFields] = field(default_factory=list)  # registers, shared memory, spills
    timings: list[Timing] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)  # what ran, as the judge saw it
    not_checked: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cancelled: bool = False
    crashed: bool = False
    timed_out: bool = False
    started: bool = False  # the judge took the job: an error before that is the judge's or the link's, not the kernel's

    # the first timed shape stands for the run
    @property
    def timing(self) -> Timing | None:
        return self.timings[0] if self.timings else None

    @property
    def gbps(self) -> float | None:
        return self.timing.gbps if self.timing else None

    @property
    def pct_of_ceiling(self) -> float | None:
        return self.timing.pct_of_ceiling if self.timing else None

    @property
    def vs_torch(self) -> float | None:
        return self.timing.vs_torch if self.timing else None

    @property
    def impossible(self) -> list[str]:
        """The timed shapes whose figures are physically impossible, each with the reason."""
        return [f"{t.name}: {t.impossible}" for t in self.timings if t.impossible]

    @property
    def host_us(self) -> float | None:
        return self.timing.host_us if self.timing else None

    @property
    def passed(self) -> bool:
        """Everything that could be checked passed."""
        return self.compiled is not False and self.correct is not False and not self.errors and not self.cancelled

    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_json(self) -> dict[str, Any]:
        t = self.timing
        return {
            "card": self.card,
            "device": self.device,
            "gpu": self.gpu,
            "compiled": self.compiled,
            "correct": self.correct,
            "errors": list(self.errors),
            "cases": [asdict(c) for c in self.cases],
            "time_ms": t.ms if t else None,
            "gbps": self.gbps,
            "pct_of_ceiling": self.pct_of_ceiling,
            "ceiling_gbps": t.ceiling_gbps if t else None,
            "tflops": t.tflops if t else None,
            "ceiling_tflops": t.ceiling_tflops if t else None,
            "torch_ms": t.torch_ms if t else None,
            "vs_torch": self.vs_torch,
            "timings": [asdict(x) for x in self.timings],
            "impossible": self.impossible,
            "evidence": [asdict(e) for e in self.evidence],
            "host_launch_us": self.host_us,
            "compiler": {
                "seconds": self.compile_seconds,
                "messages": self.messages,
                "resources": self.resources,
                "log": self.compile_log,
            },
            "not_checked": list(self.not_checked),
            "seconds": round(self.seconds, 3),
            "cancelled": self.cancelled,
            "crashed": self.crashed,
            "timed_out": self.timed_out,
        }


class VerdictBuilder:
    """Folds the judge's events into a Verdict; keeps the case in flight so a crash can name it."""

    def __init__(self, card_id: str) -> None:
        self.verdict = Verdict(card=card_id)
        self.current_case: str | None = None
        self.phase = "starting"
        self.finished = False
        self.tampered = False  # the learner's file changed the judge's own code

    def feed(self, event: JudgeEvent) -> None:
        v = self.verdict
        if event["event"] == "started":
            v.started = True
            v.device = str(event.get("device", ""))
            v.gpu = bool(event.get("gpu"))
            self.phase = "compiling"
        elif event["event"] == "compiled":
            ok = event.get("ok")
            v.compiled = None if ok is None else bool(ok)  # None: nothing could be built here
            v.compile_log = str(event.get("log", ""))
            v.compile_seconds = event.get("seconds")
            v.messages = list(event.get("messages") or [])
            v.resources = list(event.get("resources") or [])
            self.phase = "checking"
        elif event["event"] == "case_started":
            self.current_case = str(event.get("name"))
            self.phase = "checking"
        elif event["event"] == "case":
            v.cases.append(
                CaseResult(
                    name=str(event.get("name")),
                    ok=bool(event.get("ok")),
                    message=str(event.get("message") or ""),
                    max_error=number(event.get("max_error")),
                    tolerance=number(event.get("tolerance")),
                    seconds=number(event.get("seconds")),
                )
            )
            self.current_case = None
        elif event["event"] == "timing":
            self.phase = "timing"
            self._timed(event)
        elif event["event"] == "note":
            v.not_checked.append(str(event.get("text")))
        elif event["event"] == "evidence":
            v.evidence.append(Evidence.from_event(event))
        elif event["event"] == "error":
            self._failed(event)
        elif event["event"] == "finished":
            self.finished = True
            seconds = event.get("seconds")
            if seconds is not None:
                v.seconds = float(seconds)
        elif event["event"] == "torch_time":
            self._torch_timed(event)

    def _torch_timed(self, event: TorchTimeEvent) -> None:
        """torch's own time for a timing that was sent without it (see Timing.torch_later), and the ratios."""
        for t in self.verdict.timings:
            if t.name != event.get("name") or not t.torch_later:
                continue
            t.torch_later = False
            torch_ms = number(event.get("torch_ms"))
            if torch_ms is None or torch_ms <= 0:
                self.verdict.not_checked.append(
                    f"PyTorch's own time at {t.name}: {event.get('message') or 'not taken'}"
                )
                continue
            t.torch_ms = torch_ms
            t.torch_host_us = number(event.get("torch_host_us"))
            t.torch_gbps = t.bytes / (torch_ms * 1e-3) / 1e9
            t.torch_tflops = t.flops / (torch_ms * 1e-3) / 1e12 if t.flops else None
            if not t.impossible:
                t.vs_torch = torch_ms / t.ms

    def _timed(self, event: TimingEvent) -> None:
        t = Timing(
            name=str(event.get("name")),
            ms=float(event["ms"]),
            gbps=float(event["gbps"]),
            bytes=int(event.get("bytes") or 0),
            reps=int(event.get("reps") or 0),
            pct_of_ceiling=number(event.get("pct_of_ceiling")),
            ceiling_gbps=number(event.get("ceiling_gbps")),
            torch_ms=number(event.get("torch_ms")),
            torch_gbps=number(event.get("torch_gbps")),
            vs_torch=number(event.get("vs_torch")),
            host_us=number(event.get("host_us")),
            torch_host_us=number(event.get("torch_host_us")),
            dram_bytes=int(event.get("dram_bytes") or 0),
            read_ceiling_gbps=number(event.get("read_ceiling_gbps")),
            bound=str(event.get("bound") or "memory"),
            method=str(event.get("method") or ""),
            method_note=str(event.get("method_note") or ""),
            less_us=number(event.get("less_us")) or 0.0,
            flops=int(event.get("flops") or 0),
            tflops=number(event.get("tflops")),
            ceiling_tflops=number(event.get("ceiling_tflops")),
            compute_ceiling=str(event.get("compute_ceiling") or "matmul"),
            compute_ceiling_by=str(event.get("compute_ceiling_by") or "torch.matmul"),
            torch_tflops=number(event.get("torch_tflops")),
            kit=str(event.get("kit") or ""),
            torch_later=bool(event.get("torch_later")),
            algbw_gbps=number(event.get("algbw_gbps")),
            baseline=str(event.get("baseline") or "PyTorch"),
            world=int(event.get("world") or 0),
        )
        t.impossible = str(event.get("stray_work") or "") or impossible_reason(t)
        if t.impossible:  # never scored: no percentage, no ratio to PyTorch
            t.pct_of_ceiling = None
            t.vs_torch = None
            self.verdict.errors.append(f"timing {t.name}: impossible measurement: {t.impossible}")
        self.verdict.timings.append(t)

    def _failed(self, event: ErrorEvent) -> None:
        v = self.verdict
        message = str(event.get("message"))
        case = event.get("case") or self.current_case
        if case and case not in message:
            message = f"case {case}: {message}"
        v.errors.append(message)
        if event.get("kind") == "compile":
            v.compiled = False
        elif event.get("kind") == "tampered":  # a file that changed its judge passes nothing
            self.tampered = True
        elif case and not any(c.name == case for c in v.cases):
            v.cases.append(CaseResult(name=str(case), ok=False, message=message))
        self.current_case = None

    def fail(self, message: str, *, crashed: bool = False, timed_out: bool = False, cancelled: bool = False) -> None:
        """The run ended without `finished`: say where it was."""
        v = self.verdict
        where = f"during case {self.current_case}" if self.current_case else f"while {self.phase}"
        text = f"{message} ({where})" if message else where
        if cancelled:
            v.cancelled = True
            v.not_checked.append(f"cancelled {where}")
        else:
            v.errors.append(text)
        v.crashed = v.crashed or crashed
        v.timed_out = v.timed_out or timed_out
        if not cancelled and self.current_case and not any(c.name == self.current_case for c in v.cases):
            v.cases.append(CaseResult(name=self.current_case, ok=False, message=text))

    def result(self) -> Verdict:
        v = self.verdict
        if v.compiled is False:
            v.correct = None
        elif any(not c.ok for c in v.cases):
            v.correct = False
        elif v.cases and not v.cancelled and not (v.errors and self.phase != "timing"):
            v.correct = True
        else:
            v.correct = None
        if any(e.ok is False for e in v.evidence):  # the learner's code did not do the work
            v.correct = False
        elif v.correct and any(e.ok is None for e in v.evidence):
            v.correct = None  # right results, but what produced them was not seen
            v.not_checked.extend(
                f"whose work it was: {e.words}" for e in v.evidence if e.ok is None and e.words not in v.not_checked
            )
        if self.tampered:
            v.correct = False
        return v


def suggest_kernel_grade(verdict: Verdict, target_pct: float) -> int | None:
    """SM-2 grade from a verdict: wrong 1; correct but slow 3; half-way 4; near the target 5.

    "Near" means at least 90 % of the card's target. A correct kernel that could
    not be timed (no GPU) gets 3: nothing shows that it is fast. An impossible
    figure gets 1: a launch that cannot have done the work earns nothing. None
    when correctness could not be checked (a CUDA file only compiled, on a
    machine without a GPU), or when the judge never took the job (it could not
    start, or its host could not be reached): nothing shows that it works, so the
    learner grades it against the reference.
    """
    if verdict.compiled is False or verdict.correct is False or verdict.impossible:
        return 1
    if verdict.correct is None:
        # an error in the learner's run (a crash, a hang) is a 2; a judge that never took the job suggests nothing
        return 2 if verdict.errors and verdict.started else None
    pct = verdict.pct_of_ceiling
    if pct is None:
        return 3
    if pct >= 0.9 * target_pct:
        return 5
    if pct >= 0.5 * target_pct:
        return 4
    return 3


def torch_time_words(verdict: Verdict, t: Timing) -> str:
    """The line that completes a verdict shown before PyTorch's own time at `t` was taken (Timing.torch_later)."""
    if t.vs_torch is not None and t.torch_ms is not None:
        return f"time {t.name}: {t.vs_torch:.2f}x PyTorch ({t.torch_ms:.3f} ms), timed once for this GPU and kept"
    why = next((n for n in verdict.not_checked if n.startswith(f"PyTorch's own time at {t.name}:")), "")
    return f"time {t.name}: no ratio to PyTorch" + (f" ({why})" if why else "")


def collective_figures(t: Timing) -> str:
    """A collective's figures against NCCL's: time, algbw, busbw, and the ratio of bus bandwidths."""
    text = f"{t.ms:.3f} ms, algbw {t.algbw_gbps or 0:,.0f} GB/s, busbw {t.gbps:,.0f} GB/s on {t.world} GPUs"
    if t.vs_torch is not None and t.torch_ms is not None:
        text += (
            f"; {t.baseline} {t.torch_ms:.3f} ms, busbw {t.ceiling_gbps or 0:,.0f} GB/s: {t.vs_torch:.2f}× {t.baseline}"
        )
    return text


def message_place(message: CompilerMessageFields) -> str:
    """Where a compiler message points: "line 12:5", "line 12", or "?" when it names no line."""
    if not message.get("line"):
        return "?"
    if message.get("column"):
        return f"line {message['line']}:{message['column']}"
    return f"line {message['line']}"


def format_verdict(verdict: Verdict, *, source_lines: list[str] | None = None) -> str:
    """A plain-text report for the terminal."""
    v = verdict
    out = [f"{v.card} on {v.device or 'unknown device'}"]
    if v.compiled is None:
        out.append("compiled: not reached")
    else:
        secs = f" in {v.compile_seconds * 1000:.0f} ms" if v.compile_seconds else ""
        out.append(f"compiled: {'yes' + secs if v.compiled else 'NO'}")
    for m in v.messages:
        out.append(f"  {message_place(m)}: {m['severity']}: {m['message']}")
        if source_lines and m.get("line") and 0 < m["line"] <= len(source_lines):
            out.append(f"      {source_lines[m['line'] - 1].rstrip()}")
    for r in v.resources:
        line = f"  {r['name']}: {r.get('registers', 0)} registers, {r.get('shared_bytes', 0)} B shared, {r.get('stack_bytes', 0)} B stack"
        if r.get("spill_store_bytes") or r.get("spill_load_bytes"):
            line += f", spills {r.get('spill_store_bytes', 0)} B stored / {r.get('spill_load_bytes', 0)} B loaded"
        out.append(line)
    for c in v.cases:
        mark = "ok  " if c.ok else "FAIL"
        extra = f"  {c.message}" if c.message else ""
        out.append(f"  {mark} {c.name}{extra}")
    verdict_word = {True: "correct", False: "WRONG", None: "not checked"}[v.correct]
    if v.correct is not None or not v.not_checked:  # else the judge's notes below say what was not checked
        out.append(f"correctness: {verdict_word}")
    for t in v.timings:
        if t.collective:
            out.append(f"time {t.name}: {collective_figures(t)}")
            continue
        line = f"time {t.name}: {t.ms:.3f} ms, " + (f"{t.tflops:,.0f} TFLOPS, " if t.tflops is not None else "")
        line += f"{t.gbps:,.0f} GB/s"
        if t.impossible:
            out.append(f"{line}: IMPOSSIBLE, not scored: {t.impossible}")
            continue
        if t.pct_of_ceiling is not None:
            line += f", {t.pct_of_ceiling:.1f} % of the measured {t.ceiling_name} ceiling ({t.ceiling_figure})"
        if t.vs_torch is not None:
            line += f", {t.vs_torch:.2f}x PyTorch ({t.torch_ms:.3f} ms)"
        elif t.torch_later:
            line += ", PyTorch's own time: being taken now, once for this GPU"
        if t.host_us is not None:
            line += f"; host launch overhead {t.host_us:.1f} µs per call, not in the time"
        out.append(line)
    for ev in v.evidence:
        out.append(ev.line() if ev.ok is not False else f"{ev.line()}: {ev.refused}")
    for e in v.errors:
        out.append(f"error: {e}")
    for n in v.not_checked:
        out.append(f"not checked: {n}")
    return "\n".join(out)
