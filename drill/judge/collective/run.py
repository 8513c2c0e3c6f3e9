"""A collective card's run in the judge: the source read for built-in collectives, the ranks started, every case
checked on every rank, and on GPUs the learner's collective timed against NCCL's own in the same processes.

World sizes: on a machine with two GPUs or more, one rank per GPU over NCCL
(the learner may ask for fewer with the job's `world`); elsewhere gloo on the
CPU with 2, 3 and 4 ranks (or the `world` asked), which checks correctness and
says that timing needs GPUs.

Figures as nccl-tests defines them (doc/PERFORMANCE.md in NVIDIA/nccl-tests):
algbw = S / t, with S the bytes of the whole array (the all-reduce's buffer,
the reduce-scatter's input, the all-gather's output), and busbw = algbw times
the card's factor (2(n-1)/n for an all-reduce, (n-1)/n for its halves). Each
call is timed on every rank with CUDA events, all ranks released together; a
call's time is the slowest rank's, and the figure the median over the calls.

What makes a verdict the learner's (drill.judge.collective.check,
drill.judge.collective.traffic): each rank draws its inputs from a seed the judge
sends it alone; the judge draws every rank's again and computes the expected
result here, and compares each rank's output as the rank sent it back; it
reads each rank's traffic from counters the rank cannot change, and refuses a
rank that moved less than the collective must. The verdict's evidence says
what was counted.
"""

from __future__ import annotations

import secrets
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from drill.judge.collective.check import Expected, compare, compare_sampled, expected
from drill.judge.collective.kit import DTYPES
from drill.judge.collective.messages import RankReport
from drill.judge.collective.rank_group import START_STALL_SECONDS, RankFailure, RankGroup, RankSpec, run_folder
from drill.judge.collective.traffic import (
    GlooConnections,
    NcclLogs,
    Reading,
    TrafficUnavailable,
    shortfall,
    traffic_words,
)
from drill.judge.devices import cuda_device_count
from drill.judge.harness import Case, CollectiveHarness
from drill.judge.kitbase import Check, CheckResult
from drill.kernel_shared.collective_sizes import TrafficFloor
from drill.kernel_shared.collective_source import refused_calls
from drill.kernel_shared.protocol import (
    MAX_WORLD,
    MIN_WORLD,
    CompilerMessageFields,
    DeckPins,
    Emit,
    Job,
    TimingEvent,
)

if TYPE_CHECKING:
    from drill.judge.runtime import Runtime

CPU_WORLDS = (2, 3, 4)
PG_TIMEOUT_S = 120.0  # torch's own limit for a collective; the judge stops a hang well before it
START_SHARE = 0.85  # of the app's timeout: the judge gives its words before the app stops it
BASELINE = "NCCL"
SAMPLES = 256  # places of each rank's output checked after every timed call


def deck_pins(job: Job) -> DeckPins:
    """The job's deck folder and trusted hashes, for the ranks to read the deck's Python as trusted."""
    pins: DeckPins = {}
    if "deck_folder" in job:
        pins["deck_folder"] = job["deck_folder"]
    if "trusted" in job:
        pins["trusted"] = job["trusted"]
    return pins


def _budget(job: Job) -> float:
    """Seconds the ranks may take in all: most of the app's timeout, so the judge's words come before it."""
    timeout = float(job.get("timeout_s") or 60.0)
    return max(5.0, timeout * START_SHARE - 1.0)


def _compiled(emit: Emit, ok: bool, messages: list[CompilerMessageFields], seconds: float) -> None:
    emit({"event": "compiled", "ok": ok, "seconds": seconds, "log": "", "messages": messages, "resources": []})


def read_source(source: str, filename: str, emit: Emit) -> bool:
    """The learner's file read, not run: a syntax error or a built-in collective is refused with its line."""
    t0 = time.perf_counter()
    try:
        refusals = refused_calls(source, filename)
    except SyntaxError as exc:
        line = exc.lineno or 0
        message: CompilerMessageFields = {
            "line": line,
            "column": exc.offset or 0,
            "severity": "error",
            "message": exc.msg,
        }
        _compiled(emit, False, [message], time.perf_counter() - t0)
        emit({"event": "error", "kind": "compile", "fatal": False, "message": f"line {line}: {exc.msg}"})
        return False
    if refusals:
        messages: list[CompilerMessageFields] = [
            {"line": r.line, "column": r.column, "severity": "error", "message": r.message} for r in refusals
        ]
        _compiled(emit, False, messages, time.perf_counter() - t0)
        first = refusals[0]
        emit({"event": "error", "kind": "compile", "fatal": False, "message": f"line {first.line}: {first.message}"})
        return False
    _compiled(emit, True, [], time.perf_counter() - t0)
    return True


def choose_worlds(job: Job, gpus: int) -> tuple[str, list[int], str]:
    """(backend, world sizes, why not timed or ""): raises ValueError with words for a world this machine lacks."""
    asked = job.get("world")
    if asked is not None and not (isinstance(asked, int) and MIN_WORLD <= asked <= MAX_WORLD):
        raise ValueError(f"a collective runs on {MIN_WORLD} to {MAX_WORLD} ranks (asked for {asked!r})")
    if gpus >= 2:
        if asked is not None and asked > gpus:
            raise ValueError(f"{asked} ranks asked for, and this machine has {gpus} GPUs (one rank per GPU)")
        return "nccl", [asked or gpus], ""
    why = "no GPU here" if gpus == 0 else "one GPU here, and NCCL needs one rank per GPU"
    worlds = [asked] if asked is not None else list(CPU_WORLDS)
    ranks = ", ".join(str(w) for w in worlds)
    return (
        "gloo",
        worlds,
        f"speed: timing needs two GPUs or more ({why}); gloo on the CPU checked correctness with {ranks} ranks",
    )


def device_words(rt: Runtime) -> str:
    """Where a collective card's ranks run: this machine's GPUs over NCCL, or its CPU over gloo."""
    gpus = cuda_device_count() if rt.gpu else 0
    if gpus >= 2:
        return f"{gpus} × {rt.device_words}, one rank per GPU over NCCL"
    return f"CPU over gloo ({'one GPU here' if gpus == 1 else 'no GPU here'}: correctness only)"


def judge_collective(rt: Runtime, job: Job, harness: CollectiveHarness, source: str, timing: str, emit: Emit) -> None:
    """One run of a collective card; every fault ends in an `error` event naming the rank and what it was doing."""
    deadline = time.monotonic() + _budget(job)
    filename = str(job.get("filename") or "collective.py")
    if not read_source(source, filename, emit):
        return
    gpus = cuda_device_count() if rt.gpu else 0
    try:
        backend, worlds, untimed = choose_worlds(job, gpus)
    except ValueError as exc:
        emit({"event": "error", "kind": "usage", "fatal": False, "message": str(exc)})
        return
    _import_torch_before_forking()
    folder = rt.open_workdir()
    entry = str(tuple(getattr(harness, "ENTRY", ("all_reduce",)))[0])
    for world in worlds:
        spec = RankSpec(
            world=world,
            backend=backend,
            harness=str(job["harness"]),
            learner_path="",
            filename=filename,
            entry=entry,
            pins=deck_pins(job),
            pg_timeout_s=PG_TIMEOUT_S,
            log_nccl=backend == "nccl",
        )
        ok = _launch(harness, spec, source, folder, deadline, emit, len(worlds) > 1, "check")
        if ok and backend == "nccl" and timing != "none":
            # Timed in ranks of their own, without NCCL's log: a line written and flushed for every operation would
            # add microseconds to every timed call, NCCL's own more than a learner's graph replay.
            timed = replace(spec, log_nccl=False, baseline_cases=list(harness.timing_cases(world)))
            ok = _launch(harness, timed, source, folder, deadline, emit, len(worlds) > 1, "time")
        if not ok:
            return
    if untimed:
        emit({"event": "note", "text": untimed})


def _launch(
    harness: CollectiveHarness,
    spec: RankSpec,
    source: str,
    parent: Path,
    deadline: float,
    emit: Emit,
    prefix: bool,
    what: str,
) -> bool:
    """One launch of the ranks in a folder of its own: every case checked (`what` "check"), or every size timed."""
    launch = run_folder(parent)
    learner = launch / Path(spec.filename).name
    learner.write_text(source, encoding="utf-8")
    run = _WorldRun(harness, replace(spec, learner_path=str(learner)), launch, deadline, emit, prefix)
    try:
        if not run.start():
            return False
        if what == "check":
            return run.check(spec.backend == "nccl")
        return run.time()
    finally:
        run.stop()


def _import_torch_before_forking() -> None:
    """On a CPU the ranks are forks of this process: torch imported once here, not in each of them."""
    import torch.distributed  # noqa: F401


class _WorldRun:
    """The cases and timings of one world size. The expected results are computed here, from each rank's seed; the
    ranks send back their outputs, and their traffic is read from the judge's own counters."""

    def __init__(
        self, harness: CollectiveHarness, spec: RankSpec, folder: Path, deadline: float, emit: Emit, prefix: bool
    ) -> None:
        self.harness = harness
        self.spec = spec
        self.folder = folder
        self.deadline = deadline
        self.emit = emit
        self.prefix = f"{spec.world} ranks: " if prefix else ""
        self.group: RankGroup | None = None
        self.traffic: GlooConnections | NcclLogs | None = None
        self.unseen = ""  # why the traffic could not be counted
        self.baseline: dict[str, list[list[float]]] = {}  # NCCL's own times, per timing case, per rank
        self.heaviest: tuple[int, TrafficFloor, list[Reading]] | None = None  # the traffic shown in the verdict
        self.calls = 0  # the learner's checked calls, every rank's runs counted once
        self.refused = ""  # the first traffic that fell short: the evidence's refusal

    def start(self) -> bool:
        """Start the ranks: the judge holds their traffic counters before any of the learner's code runs, and NCCL's
        own collective is timed before the learner's file is read. False at a fault (reported)."""
        world = self.spec.world
        self.group = RankGroup(self.spec, self.folder)
        self.group.__enter__()
        starting = f"{self.prefix}starting {world} ranks ({self.spec.backend})"
        self.emit({"event": "case_started", "name": starting})
        try:
            self.group.collect("joined", self.deadline, f"the start of {world} ranks", stall_s=START_STALL_SECONDS)
            self._hold_traffic()
            self.group.send({"op": "counted"})
            if self.spec.baseline_cases:
                replies = self.group.collect("baseline", self.deadline, "the timing of NCCL's own collective")
                for case in self.spec.baseline_cases:
                    self.baseline[str(case["name"])] = [list(r["times"][str(case["name"])]) for r in replies]
            self.group.collect("ready", self.deadline, f"the start of {world} ranks")
        except RankFailure as exc:
            self._failed(exc, starting)
            return False
        return True

    def check(self, gpu: bool) -> bool:
        """Check every case on the started ranks; False when the run must stop (a fault, or a wrong case)."""
        world = self.spec.world
        all_ok = True
        for case in self.harness.cases(world, gpu):
            try:
                ok = self._case(case)
            except RankFailure as exc:
                self._failed(exc, f"{self.prefix}{case['name']}")
                return False
            all_ok = all_ok and ok
        self._evidence()
        return all_ok

    def _hold_traffic(self) -> None:
        assert self.group is not None
        try:
            if self.spec.backend == "nccl":
                if self.spec.log_nccl:
                    self.traffic = NcclLogs(self.folder, self.spec.world)
            else:
                self.traffic = GlooConnections(self.group.pids())
        except TrafficUnavailable as exc:
            self.unseen = str(exc)

    def _read_traffic(self) -> list[Reading] | None:
        if self.traffic is None:
            return None
        try:
            return self.traffic.read()
        except TrafficUnavailable as exc:
            self.unseen = str(exc)
            self.traffic = None
            return None

    def _case(self, case: Case) -> bool:
        """Both runs of one case on every rank: outputs compared here, each run's traffic counted."""
        assert self.group is not None
        world = self.spec.world
        name = f"{self.prefix}{case['name']}"
        self.emit({"event": "case_started", "name": name})
        t0 = time.perf_counter()
        seeds = [secrets.randbits(62) for _ in range(world)]
        for rank, seed in enumerate(seeds):  # each rank its own seed, and no other
            self.group.send_to(rank, {"op": "case", "case": case, "seed": seed})
        want = expected(self.harness, case, seeds)
        floor = self._floor(case)
        verdict: CheckResult | None = None
        last: CheckResult | None = None
        moved_in_case: list[Reading] = [Reading() for _ in range(world)]
        for attempt in (1, 2):
            self.group.collect("at_start", self.deadline, f"case {name}, run {attempt}")
            before = self._read_traffic()
            self.group.send({"op": "go"})
            ran = self.group.collect("ran", self.deadline, f"case {name}")
            self.calls += 1
            after = self._read_traffic()
            check = self._outputs(want, ran)
            if before is not None and after is not None and floor is not None:
                moved = [a.since(b) for a, b in zip(after, before, strict=True)]
                moved_in_case = [total.plus(m) for total, m in zip(moved_in_case, moved, strict=True)]
                short = None if self._per_case() else shortfall(floor, moved, self._how())
                if check.ok and short:
                    check = Check(False, short)
                    self.refused = self.refused or short
            if verdict is None and not check.ok:
                verdict = check
                if attempt == 2:
                    check.message = "first run right, second run wrong (state left by the first run?): " + check.message
            last = check
        if self._per_case() and floor is not None and verdict is None:
            # a CUDA graph replays without a line in NCCL's log: one run's worth over both runs
            short = shortfall(floor, moved_in_case, self._how())
            if short:
                verdict = Check(False, short)
                self.refused = self.refused or short
        self.group.collect("case", self.deadline, f"case {name}")
        final = verdict or last
        assert final is not None
        if floor is not None:
            self._note_traffic(floor, moved_in_case)
        self.emit(
            {
                "event": "case",
                "name": name,
                "ok": final.ok,
                "message": final.message,
                "max_error": final.max_error,
                "tolerance": final.tolerance,
                "seconds": time.perf_counter() - t0,
            }
        )
        return final.ok

    def _floor(self, case: Case) -> TrafficFloor | None:
        """The fewest bytes each rank must move for this case, as the card's harness gives them (None: it gives none,
        and the verdict says the traffic was not checked)."""
        rule = getattr(self.harness, "traffic_floor", None)
        if rule is None:
            self.unseen = "the card's harness gives no traffic_floor"
            return None
        floor: TrafficFloor = rule(case, self.spec.world)
        return floor

    def _per_case(self) -> bool:
        return bool(self.traffic is not None and self.traffic.per_case)

    def _how(self) -> str:
        return self.traffic.how if self.traffic is not None else ""

    def _outputs(self, want: Expected, ran: list[RankReport]) -> CheckResult:
        """Every rank's output, read back from its result file, against what the judge expects of it."""
        assert self.group is not None
        worst: CheckResult | None = None
        for rank, reply in enumerate(ran):
            if reply.get("problem"):
                return Check(False, str(reply["problem"]))
            check = self._output(want, rank, reply)
            if not check.ok:
                return check
            if worst is None or (check.max_error or 0.0) > (worst.max_error or 0.0):
                worst = check
        assert worst is not None
        return worst

    def _output(self, want: Expected, rank: int, reply: RankReport) -> CheckResult:
        assert self.group is not None
        import torch

        dtype = DTYPES.get(str(reply.get("dtype")))
        data = self.group.result_path(rank).read_bytes()
        numel = int(reply.get("numel") or 0)
        if dtype is None or len(data) != numel * torch.empty(0, dtype=dtype).element_size():
            return Check(False, f"rank {rank}: its output did not come back whole")
        result = torch.frombuffer(bytearray(data), dtype=dtype) if data else torch.empty(0, dtype=dtype)
        return compare(self.harness, want, rank, result)

    def _note_traffic(self, floor: TrafficFloor, moved: list[Reading]) -> None:
        """Keep the traffic of the heaviest case for the verdict's evidence."""
        if self.traffic is None:
            return
        runs = 1 if self._per_case() else 2  # gloo: each run counted the same; NCCL: as logged, both runs together
        per_run = [Reading(m.sent // runs, m.received // runs, m.collectives) for m in moved]
        weight = sum(floor.sent)
        if self.heaviest is None or weight > self.heaviest[0]:
            self.heaviest = (weight, floor, per_run)

    def _evidence(self) -> None:
        where = "gpu" if self.spec.backend == "nccl" else "cpu"
        ranks = f"{self.spec.world} ranks over {self.spec.backend}"
        if self.heaviest is None:
            words = f"{ranks}: the traffic of each rank could not be counted ({self.unseen or 'no case ran'})"
            self._emit_evidence(where, None, words, "")
            return
        _, floor, moved = self.heaviest
        words = f"{ranks}: {traffic_words(floor, moved, self._how())}"
        self._emit_evidence(where, not self.refused, words, self.refused)

    def _emit_evidence(self, where: str, ok: bool | None, words: str, refused: str) -> None:
        self.emit(
            {
                "event": "evidence",
                "phase": "check",
                "where": where,
                "ok": ok,
                "words": words,
                "refused": refused,
                "allows": "",
                "calls": self.calls,
                "mine": {},
                "allowed": {},
                "foreign": {},
            }
        )

    def time(self) -> bool:
        """Time every timing case against NCCL's collective; False at a fault or a wrong timed output."""
        assert self.group is not None
        world = self.spec.world
        for case in self.harness.timing_cases(world):
            name = str(case["name"])
            label = f"timing {name}"
            self.emit({"event": "case_started", "name": label})
            t0 = time.perf_counter()
            seeds = [secrets.randbits(62) for _ in range(world)]
            for rank in range(world):
                self.group.send_to(rank, {"op": "time", "case": case, "seed": seeds[rank]})
            with ThreadPoolExecutor(max_workers=1) as pool:  # the expected result, while the ranks warm up
                future = pool.submit(expected, self.harness, case, seeds)
                try:
                    asked = self._timed_calls(label, int(case.get("reps", 20)))
                    replies = self.group.collect("timed", self.deadline, label)
                except RankFailure as exc:
                    self._failed(exc, label)
                    return False
                want = future.result()
            wrong = self._sampled(want, replies, asked, name)
            self.emit(
                {
                    "event": "case",
                    "name": label,
                    "ok": wrong is None,
                    "message": f"wrong at the timed size {name}, though the small cases passed: {wrong}"
                    if wrong
                    else "",
                    "max_error": None,
                    "tolerance": None,
                    "seconds": time.perf_counter() - t0,
                }
            )
            if wrong:
                return False
            for rank, reply in enumerate(replies):
                reply["base_ms"] = self.baseline.get(name, [[]] * world)[rank]
            self.emit(collective_timing(self.harness, case, world, replies))
        return True

    def _timed_calls(self, label: str, reps: int) -> list[list[list[int]]]:
        """Start each timed call on every rank together; once it is over, ask each rank for its output at SAMPLES
        places drawn then. Returns the places asked, per rank, per call."""
        assert self.group is not None
        asked: list[list[list[int]]] = [[] for _ in range(self.spec.world)]
        for _ in range(reps):
            self.group.collect("at_start", self.deadline, label)
            self.group.send({"op": "go"})
            called = self.group.collect("called", self.deadline, label)
            for rank, reply in enumerate(called):
                numel = int(reply.get("numel") or 0)
                index = sorted({secrets.randbelow(numel) for _ in range(SAMPLES)}) if numel > 0 else []
                asked[rank].append(index)
                self.group.send_to(rank, {"op": "sample", "index": index})
        return asked

    def _sampled(
        self, want: Expected, replies: list[RankReport], asked: list[list[list[int]]], name: str
    ) -> str | None:
        import torch

        for rank, reply in enumerate(replies):
            for rep, values in enumerate(reply.get("samples") or []):
                index = torch.tensor(asked[rank][rep], dtype=torch.int64)
                check = compare_sampled(want, rank, index, torch.tensor(values, dtype=torch.float64))
                if not check.ok:
                    return f"timed call {rep + 1} at {name}: {check.message}"
        return None

    def _failed(self, exc: RankFailure, case: str) -> None:
        self.stop()
        self.emit({"event": "error", "kind": exc.kind, "fatal": False, "case": case, "message": exc.words})

    def stop(self) -> None:
        """Every rank gone (killed: a rank blocked in a receive would not read `quit`), and the launch's folder."""
        if self.traffic is not None:
            self.traffic.close()
            self.traffic = None
        if self.group is not None:
            self.group.kill()
            self.group = None
        shutil.rmtree(self.folder, ignore_errors=True)


def slowest_rank_median(per_rank: list[list[float]]) -> float:
    """The median over calls of the slowest rank's time for each call (ms)."""
    calls = min(len(times) for times in per_rank)
    return statistics.median(max(times[i] for times in per_rank) for i in range(calls))


def collective_timing(harness: CollectiveHarness, case: Case, world: int, replies: list[RankReport]) -> TimingEvent:
    """The `timing` event: the learner's algbw and busbw, NCCL's at the same size, and the ratio."""
    size = int(harness.bytes_moved(case))
    factor = float(harness.bus_factor(world))
    ms = slowest_rank_median([r["mine_ms"] for r in replies])
    nccl_ms = slowest_rank_median([r["base_ms"] for r in replies])
    algbw = size / (ms * 1e-3) / 1e9
    busbw = algbw * factor
    nccl_algbw = size / (nccl_ms * 1e-3) / 1e9
    nccl_busbw = nccl_algbw * factor
    ratio = busbw / nccl_busbw
    return {
        "event": "timing",
        "name": str(case["name"]),
        "ms": ms,
        "reps": min(len(r["mine_ms"]) for r in replies),
        "host_us": None,
        "bytes": size,
        "dram_bytes": 0,
        "gbps": busbw,
        "ceiling_gbps": nccl_busbw,
        "read_ceiling_gbps": None,
        "pct_of_ceiling": 100.0 * ratio,
        "bound": "collective",
        "flops": 0,
        "tflops": None,
        "ceiling_tflops": None,
        "torch_tflops": None,
        "torch_ms": nccl_ms,
        "torch_host_us": None,
        "torch_gbps": nccl_busbw,
        "vs_torch": ratio,
        "method": "events",
        "method_note": "each call between CUDA events on every rank, all ranks released together; the slowest rank's"
        " time per call, the median over calls; the host's time to issue your operations is in it",
        "less_us": 0.0,
        "stray_work": "",
        "kit": "nccl",
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
        "baseline": BASELINE,
        "baseline_busbw_gbps": nccl_busbw,
        "world": world,
        "bus_factor": factor,
    }
