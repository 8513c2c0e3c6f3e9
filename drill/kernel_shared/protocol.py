"""The messages between the judge client (drill.kernel.client) and the judge process (drill.judge): JSON lines.

Requests go from the client to the judge on its stdin, events come back on its
stdout, one JSON object a line. Every event but `ready` carries the id of the
request it answers. Both sides import the types below; the judge builds the
events, the client folds them into a verdict (drill.kernel.verdict).

Requests:
    run          id, job, source, timing ("first": the first timing shape; "all"; "none": no timing)
    calibrate    id
    quit

Events, in the order a run sends them:
    ready        once, when the judge has started (its GPU, its versions, seconds per start-up phase)
    started      the run began: the card, the device
    compiled     the build: ok (None: nothing could build here), log, messages, resources
    case_started a case is running, so a crash can name it
    case         a case's outcome
    timing       the figures of one timed shape (sent after its timed output was checked)
    note         something that was not checked, and why
    evidence     what ran during the checked (phase "check") or timed ("timing") calls, and whether it was the
                 learner's own work (drill.judge.evidence)
    error        what went wrong; fatal: the judge exits after it
    calibrated   the GPU's ceilings, measured again
    finished     the run is over

A float that is not finite cannot be JSON: it travels as its string ("nan",
"inf"), so a reader takes numbers through `number`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Literal, NotRequired, Required, TextIO, TypedDict, cast

# A collective card's ranks (the job's `world`): at least two, at most one host's eight GPUs.
MIN_WORLD = 2
MAX_WORLD = 8


class DeckPins(TypedDict, total=False):
    """A deck's card: its folder, whose Python the judge runs only as trusted (drill.kernel.trust.pins)."""

    deck_folder: str
    trusted: dict[str, str]  # path: the sha256 the learner trusted


class Job(DeckPins):
    """What the judge needs to run one card (drill.kernel.job.kernel_job)."""

    card: str
    language: str | None  # "cuda", "triton" or "collective"; the judge says so when a card names another
    harness: str  # the harness file's path (the remote judge takes only its name: drill.judge.remote_requests)
    filename: str  # what the learner's file is called, so compiler messages name it
    target_pct: float | None
    fresh_baseline: NotRequired[bool]  # time PyTorch's way again rather than take the kept figure
    world: NotRequired[int]  # a collective card: the ranks to run (default: one per GPU, else 2, 3 and 4 on the CPU)
    timeout_s: NotRequired[float]  # the app's limit for the run: a collective's hang is reported well inside it


class RunRequest(TypedDict):
    op: Literal["run"]
    id: int
    job: Job
    source: str
    timing: str  # "first", "all" or "none"


class CalibrateRequest(TypedDict):
    op: Literal["calibrate"]
    id: int


class QuitRequest(TypedDict):
    op: Literal["quit"]


Request = RunRequest | CalibrateRequest | QuitRequest


class CompilerMessageFields(TypedDict):
    """One compiler diagnostic (drill.kernel_shared.nvrtc.CompilerMessage), as sent."""

    line: int
    column: int
    severity: str
    message: str


class KernelResourceFields(TypedDict):
    """What ptxas reported for one kernel (drill.kernel_shared.nvrtc.KernelResources), as sent."""

    name: str
    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    constant_bytes: int
    barriers: int
    report: str


class Reply(TypedDict, total=False):
    """What every event but `ready` carries: the id of the request it answers (added as it is sent)."""

    id: int


class ReadyEvent(TypedDict):
    event: Literal["ready"]
    pid: int
    device: str
    gpu: bool
    versions: dict[str, str]
    startup: NotRequired[dict[str, float]]  # seconds per start-up phase


class StartedEvent(Reply):
    event: Literal["started"]
    card: str
    device: str
    gpu: bool
    runs: NotRequired[int]  # the stand-in judge (drill.judge.fake): run requests seen


class CompiledEvent(Reply):
    event: Literal["compiled"]
    ok: bool | None  # None: nothing could build here (no compiler, no torch)
    log: str
    messages: list[CompilerMessageFields]
    resources: list[KernelResourceFields]
    seconds: NotRequired[float | None]


class CaseStartedEvent(Reply):
    event: Literal["case_started"]
    name: str


class CaseEvent(Reply):
    event: Literal["case"]
    name: str
    ok: bool
    message: str
    max_error: float | None
    tolerance: float | None
    seconds: float
    phases: NotRequired[dict[str, float]]  # a timed case: seconds per step (bench/probe_cold.py)


class TimingEvent(Reply):
    """The figures of a timed launch (built by drill.judge.timing_event.timing_event; read into verdict.Timing)."""

    event: Literal["timing"]
    name: str
    ms: float
    reps: int
    host_us: float | None
    bytes: int
    dram_bytes: int
    gbps: float
    ceiling_gbps: float | None
    read_ceiling_gbps: float | None
    pct_of_ceiling: float | None
    bound: str  # "memory" or "compute"
    flops: int
    tflops: float | None
    ceiling_tflops: float | None
    compute_ceiling: NotRequired[str]  # the compute ceiling's name in a verdict: "matmul", or "FP8 matmul"
    compute_ceiling_by: NotRequired[str]  # what was timed to find it: "torch.matmul", ...
    torch_tflops: float | None
    torch_ms: float | None
    torch_host_us: float | None
    torch_gbps: float | None
    vs_torch: float | None
    method: str
    method_note: str
    less_us: float
    stray_work: str
    kit: NotRequired[str]  # "torch", "cupy", or "nccl" for a collective card
    torch_later: NotRequired[bool]  # torch's own time comes after `finished`, in a `torch_time` event
    # a collective card (bound "collective"): figures as nccl-tests defines them, against NCCL's own collective
    algbw_gbps: NotRequired[float]  # bytes of the whole array over the time
    busbw_gbps: NotRequired[float]  # algbw times the collective's factor (2(n-1)/n for an all-reduce)
    baseline: NotRequired[str]  # what vs_torch compares with: "NCCL"
    baseline_busbw_gbps: NotRequired[float]
    world: NotRequired[int]  # ranks, one per GPU
    bus_factor: NotRequired[float]


class EvidenceEvent(Reply):
    """What ran during the learner's calls (drill.judge.evidence.Seen.event): ok False names what was not theirs."""

    event: Literal["evidence"]
    phase: str  # "check": the correctness cases; "timing": the timed launches
    where: str  # "gpu": kernels from the judge's activity records; "cpu": ATen ops and Triton launches
    ok: bool | None  # None: what ran could not be seen here
    words: str  # "kernels seen in 12 calls: 12 kernels from your file (softmax_kernel ×12), nothing else"
    refused: str  # "not your kernel: at::native::cunn_SoftMaxForward ran"; "" when ok
    allows: str  # what the card allows besides the learner's kernels, in words
    calls: int
    mine: dict[str, int]  # the learner's kernels, by name
    allowed: dict[str, int]  # allowed work, by what it was
    foreign: dict[str, int]  # what was not the learner's, by name


class NoteEvent(Reply):
    event: Literal["note"]
    text: str


class ErrorEvent(Reply):
    event: Literal["error"]
    message: str
    kind: NotRequired[str]  # compile, harness, tampered, internal, usage, oom, cuda, launch, runtime
    fatal: NotRequired[bool]  # the judge exits after it
    case: NotRequired[str]


class CalibratedEvent(Reply, total=False):
    """The GPU's figures, measured again (drill.judge.calibration.Calibrated.calibrate)."""

    event: Required[Literal["calibrated"]]
    gbps: float  # a device-to-device copy, bytes read + written
    read_gbps: float  # the fastest pure read
    read_by: str
    event_us: float  # a CUDA event pair's own cost, taken off event-timed figures
    event_pair_us: float
    event_record_us: float
    event_us_why: str
    tflops: float  # the fastest torch.matmul (with a compute-bound card only)
    tflops_by: str
    fp8_tflops: float  # the fastest torch._scaled_mm (FP8 GPUs only)
    fp8_tflops_by: str
    ms: float
    bytes: int
    reps: int
    device: str
    measured_at: str
    method: str


class FinishedEvent(Reply):
    event: Literal["finished"]
    seconds: NotRequired[float]
    torch: NotRequired[bool]  # whether the judge has torch loaded now


class TorchTimeEvent(Reply):
    """torch's own time for a timed shape whose `timing` said `torch_later`: sent after `finished` (a judge that
    started without torch gives its verdict first, then imports torch and times torch's way once for this GPU)."""

    event: Literal["torch_time"]
    name: str  # the timing it completes
    torch_ms: float | None  # None: it could not be timed (`message` says why)
    torch_host_us: float | None
    message: NotRequired[str]


JudgeEvent = (
    ReadyEvent
    | StartedEvent
    | CompiledEvent
    | CaseStartedEvent
    | CaseEvent
    | TimingEvent
    | NoteEvent
    | EvidenceEvent
    | ErrorEvent
    | CalibratedEvent
    | FinishedEvent
    | TorchTimeEvent
)
# Where the judge sends each event as it happens (to the app over the pipe, or a test's list).
Emit = Callable[[JudgeEvent], None]

EVENTS = (
    "ready",
    "started",
    "compiled",
    "case_started",
    "case",
    "timing",
    "note",
    "evidence",
    "error",
    "calibrated",
    "finished",
    "torch_time",
)
OPS = ("run", "calibrate", "quit")


def _clean(value: object) -> object:
    """JSON has no NaN or infinity: send them as strings so the line stays valid."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def encode(message: Mapping[str, object]) -> str:
    """One line of JSON: a Request or a JudgeEvent (a stand-in judge may send plain dicts)."""
    return json.dumps(_clean(message), separators=(",", ":"), ensure_ascii=False) + "\n"


def decode(line: str) -> dict[str, object] | None:
    """The message on this line (a JSON object with an `event` or an `op`), or None for stray output."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and ("event" in value or "op" in value) else None


def as_event(message: dict[str, object]) -> JudgeEvent | None:
    """The message as an event, or None when it is no event this side knows."""
    if message.get("event") not in EVENTS:
        return None
    return cast(JudgeEvent, message)


def as_request(message: dict[str, object]) -> Request | None:
    """The message as a request, or None when its op is none the judge knows; a run's missing parts read as empty."""
    op = message.get("op")
    if op not in OPS:
        return None
    if op == "run":
        job = message.get("job")
        message["job"] = job if isinstance(job, dict) else {}
        message["source"] = str(message.get("source", ""))
        message["timing"] = str(message.get("timing", "first"))
    return cast(Request, message)


def number(value: object) -> float | None:
    """A figure as sent: a float, None when it is missing or is no number ("nan" and "inf" are numbers)."""
    if value is None:
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def write(stream: TextIO, message: Mapping[str, object]) -> None:
    stream.write(encode(message))
    stream.flush()
