"""One rank of a collective card: joins the process group, loads the harness and the learner's file, runs what the
judge asks. `python -m drill.judge.collective.rank_process SPEC` (a fresh process, on GPUs) or `serve(spec)` in a forked judge (CPU).

The judge (drill.judge.collective.rank_group) sends one JSON line per command on the rank's own command pipe; the rank answers on
its report pipe. At the start: `joined` (the process group is up; the judge takes hold of its connections and says
`counted`), `baseline` (on GPUs, NCCL's own collective timed before the learner's file is read), `ready`. Then
`case` (a seed of this rank's alone; two runs, the second exposing what the first left: before each the rank says
`at_start` and waits for `go`, after each it writes its output to its result file and says `ran`), `time` (the
learner's function timed at one size, each call started by `go`; its output sampled where the judge asked),
`quit`. `fault`: an exception, after which the rank exits. What the learner prints goes to the rank's log.
"""

from __future__ import annotations

import ctypes
import datetime
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from drill.judge.collective.messages import RankCommand, RankReport, RankStart
from drill.judge.harness import Case, CollectiveHarness

if TYPE_CHECKING:
    import torch

    from drill.judge.collective.kit import RankKit
    from drill.judge.collective.point_to_point import PointToPoint, Watch
    from drill.judge.collective.status_slot import StatusSlot

# The learner's collective, as the harness's launcher calls it (its arguments are the harness's)
LearnerFunction = Callable[..., object]

FAULT_EXIT = 3  # the exit code of a rank that reported a fault


def _die_with_parent(parent: int) -> None:
    """Linux: this rank is killed when the judge goes (a judge killed by the app's timeout leaves no rank behind)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the judge went before the request took hold
        os._exit(1)


def serve(spec: RankStart) -> None:
    """Run one rank to its end; never returns (os._exit: nothing of the judge's own state is flushed twice)."""
    code = 0
    try:
        code = _serve(spec)
    except BaseException:  # the judge reads the death from the exit code and the status slot
        traceback.print_exc()
        code = FAULT_EXIT
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _serve(spec: RankStart) -> int:
    _die_with_parent(int(spec["parent"]))
    from drill.judge.collective.status_slot import StatusSlot

    status = StatusSlot(Path(spec["status"]))
    status.set("starting: importing torch")
    commands = os.fdopen(int(spec["commands_fd"]), "r", encoding="utf-8")
    reports = os.fdopen(int(spec["reports_fd"]), "w", encoding="utf-8", buffering=1)
    rank = int(spec["rank"])
    world = int(spec["world"])
    backend = str(spec["backend"])
    if backend == "nccl" and spec.get("nccl_log"):  # NCCL's record of every operation, in a file of the judge's
        os.environ["NCCL_DEBUG"] = "INFO"
        os.environ["NCCL_DEBUG_SUBSYS"] = "COLL"
        os.environ["NCCL_DEBUG_FILE"] = str(spec["nccl_log"])
    import torch
    import torch.distributed as dist

    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        torch.set_num_threads(1)  # ranks share the CPU: one thread each
        device = torch.device("cpu")
        os.environ.pop("TORCH_GLOO_LAZY_INIT", None)  # every connection made now, for the judge to hold
    status.set("joining the process group")
    timeout = datetime.timedelta(seconds=float(spec["pg_timeout_s"]))
    dist.init_process_group(
        backend,
        init_method=f"file://{spec['store']}",
        rank=rank,
        world_size=world,
        timeout=timeout,
        device_id=device if backend == "nccl" else None,  # NCCL's communicator now, not in the first timed call
    )
    # The judge takes hold of the ranks' connections now, before any of the learner's code runs.
    status.set("waiting for the judge to count the ranks' connections")
    _send(reports, {"event": "joined", "pid": os.getpid()})
    if _command(commands).get("op") != "counted":
        return 0

    from drill.judge.collective.kit import RankKit
    from drill.judge.collective.point_to_point import PointToPoint, Watch, refuse_collectives
    from drill.judge.source_only import deck_imports, load_file, run_source
    from drill.judge.tamper import Fingerprint, tampered_words
    from drill.kernel_shared.trusted_source import Pins

    point_to_point = PointToPoint()  # torch's own, before anything replaces them
    kit = RankKit(rank, world, device)
    pins = Pins.from_job(spec["pins"])
    learner_file = str(spec["learner_path"])
    with deck_imports(pins):
        harness = cast(CollectiveHarness, load_file(f"drill_collective_harness_{rank}", Path(spec["harness"]), pins))
        baseline_cases = list(spec["baseline_cases"])
        if baseline_cases:
            status.set("timing NCCL's own collective, before your file is read")
            _send(
                reports,
                {"event": "baseline", "times": _time_baseline(kit, harness, baseline_cases, status, point_to_point)},
            )
        status.set("setting up the judge's side of the rank")
        kit.builtin = None
        refuse_collectives()
        watch = Watch(point_to_point, status, learner_file)
        watch.install()
        fingerprint = Fingerprint()  # the judge's code as it is before any of the learner's Python runs
        status.set(f"running the top of {spec['filename']}")
        try:
            data = Path(learner_file).read_bytes()
            module = run_source(f"drill_learner_rank{rank}", Path(learner_file), data)
        except Exception as exc:
            return _fault(reports, status, exc, learner_file, f"while running the top of {spec['filename']}")
        entry = str(spec["entry"])
        function = getattr(module, entry, None)
        if not callable(function):
            _send(reports, {"event": "fault", "message": f"{spec['filename']} must define `{entry}`", "line": 0})
            return FAULT_EXIT
        _send(reports, {"event": "ready", "pid": os.getpid()})
        runner = _Runner(kit, harness, function, watch, entry, _Starts(reports, commands), Path(spec["result_path"]))
        while True:
            command = _command(commands)
            op = command.get("op")
            if op not in ("case", "time"):
                break
            try:
                if op == "case":
                    runner.check(command["case"], int(command["seed"]))
                    reply: RankReport = {"event": "case"}
                else:
                    reply = runner.time(command["case"], int(command["seed"]))
            except _Stopped:
                break
            except Exception as exc:
                return _fault(reports, status, exc, learner_file, status.get())
            changed = fingerprint.changed()
            if changed:
                _send(reports, {"event": "fault", "kind": "tampered", "message": tampered_words(changed), "line": 0})
                return FAULT_EXIT
            _send(reports, reply)
    status.set("finished")
    return 0


class _Stopped(Exception):
    """The judge said `quit` (or went) while a rank waited for its word to start a call."""


def _command(commands: TextIO) -> RankCommand:
    line = commands.readline()
    if not line:
        return {"op": "quit"}
    command: RankCommand = json.loads(line)
    return command


class _Starts:
    """Every rank's calls start together: each says it is ready, and the judge says `go` once all are (the judge
    reads its traffic counters in between)."""

    def __init__(self, reports: TextIO, commands: TextIO) -> None:
        self.reports = reports
        self.commands = commands

    def wait(self) -> None:
        _send(self.reports, {"event": "at_start"})
        if _command(self.commands).get("op") != "go":
            raise _Stopped

    def timed_start(self, kit: RankKit, p2p: PointToPoint) -> None:
        """A timed call's start: the judge's word, then the GPUs brought together (the word reaches the ranks tens of
        microseconds apart; a token round leaves them within microseconds, as NCCL's own calls are started)."""
        self.wait()
        _together(kit, p2p)

    def sampled(self, result: torch.Tensor) -> list[float]:
        """A timed call's output at the places the judge names once the call is over (the learner's code cannot know
        them while it runs)."""
        import torch

        flat = result.reshape(-1)
        _send(self.reports, {"event": "called", "numel": int(flat.numel())})
        command = _command(self.commands)
        if command.get("op") != "sample":
            raise _Stopped
        index = torch.tensor(list(command["index"]), dtype=torch.int64, device=flat.device)
        values: list[float] = flat[index].double().cpu().tolist()
        return values


class _TorchCollectives:
    """torch.distributed's own collectives, for NCCL's timed baseline before the learner's file is read (every name is
    looked up in torch.distributed at the call: once the judge has refused them, this reaches nothing)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device

    def all_reduce(self, tensor: torch.Tensor) -> None:
        import torch.distributed as dist

        dist.all_reduce(tensor)

    def reduce_scatter_tensor(self, output: torch.Tensor, input: torch.Tensor) -> None:
        import torch.distributed as dist

        dist.reduce_scatter_tensor(output, input)

    def all_gather_into_tensor(self, output: torch.Tensor, input: torch.Tensor) -> None:
        import torch.distributed as dist

        dist.all_gather_into_tensor(output, input)


def _time_baseline(
    kit: RankKit, harness: CollectiveHarness, cases: list[Case], status: StatusSlot, point_to_point: PointToPoint
) -> dict[str, list[float]]:
    """NCCL's own collective at every timing size: per call, the GPU time of this rank (ms)."""
    builtin = _TorchCollectives(kit.device)
    kit.builtin = builtin
    times = {}
    try:
        for case in cases:
            kit.begin_case(int.from_bytes(os.urandom(7), "little"))
            inputs = harness.make_inputs(case, kit)
            prepare = harness.launcher(_Program(None), inputs, kit).prepare
            run = harness.baseline(inputs, kit)
            name = str(case["name"])
            times[name] = _timed(
                kit,
                run,
                prepare,
                lambda: _together(kit, point_to_point),
                int(case.get("reps", 20)),
                int(case.get("warmup", 3)),
                lambda doing: status.set(f"timing {name}: NCCL's own collective, {doing}"),
                None,
            )[0]
    finally:
        kit.builtin = None
    return times


def _together(kit: RankKit, p2p: PointToPoint) -> None:
    """Every rank's GPU here before any goes on: a one-element token to and from every other rank, by torch's own
    point-to-point operations, then the device drained (no collective: the rank has none once the learner's file is
    loaded, and the same start serves NCCL's timed calls and the learner's)."""
    import torch
    import torch.distributed.distributed_c10d as c10d

    if kit.world < 2:
        return
    outgoing = torch.ones(1, device=kit.device)
    incoming = [torch.empty(1, device=kit.device) for _ in range(kit.world)]
    operations = []
    for other in range(kit.world):
        if other != kit.rank:
            operations.append(c10d.P2POp(p2p.isend, outgoing, other))
            operations.append(c10d.P2POp(p2p.irecv, incoming[other], other))
    for work in p2p.batch_isend_irecv(operations):
        work.wait()
    kit.synchronize()


def _timed(
    kit: RankKit,
    run: Callable[[], object],
    prepare: Callable[[], object],
    start_together: Callable[[], None],
    reps: int,
    warmup: int,
    say: Callable[[str], None],
    after: Callable[[int], list[float]] | None,
) -> tuple[list[float], list[list[float]]]:
    """Each call between CUDA events, every rank started together; `after(rep)` is read after each call."""
    for i in range(warmup):
        prepare()
        say(f"warm-up call {i + 1}")
        run()
    kit.synchronize()
    times: list[float] = []
    read: list[list[float]] = []
    for rep in range(reps):
        kit.poison_outputs()
        prepare()
        kit.synchronize()
        start_together()
        say(f"timed call {rep + 1} of {reps}")
        start = kit.event()
        end = kit.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(float(start.elapsed_time(end)))
        if after is not None:
            read.append(after(rep))
    return times, read


def _send(reports: TextIO, message: RankReport) -> None:
    reports.write(json.dumps(message) + "\n")
    reports.flush()


def _fault(reports: TextIO, status: StatusSlot, exc: BaseException, learner_file: str, doing: str) -> int:
    """Report an exception from the learner's code (its line, what the rank was doing), then exit."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == learner_file:
            line = frame.lineno or 0
    from drill.judge.collective.point_to_point import Refused

    text = _plain_words(str(exc))
    words = text if isinstance(exc, Refused) else f"{type(exc).__name__}: {text}".rstrip(": ")
    traceback.print_exc()
    _send(reports, {"event": "fault", "message": words, "line": line, "doing": doing})
    return FAULT_EXIT


def _plain_words(text: str) -> str:
    """An exception's first line, without gloo's source location and advice."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if first.startswith("[") and "] " in first:  # "[/path/gloo/transport/tcp/pair.cc:537] Read error ..."
        first = first.split("] ", 1)[1]
    return first.split(". This is typically", 1)[0]


class _Runner:
    """The harness's cases and timings, in one rank. The rank holds no expected result: it sends its output back
    (all of it for a case, to a file of the judge's; samples of it for a timed call) and the judge compares."""

    def __init__(
        self,
        kit: RankKit,
        harness: CollectiveHarness,
        function: LearnerFunction,
        watch: Watch,
        entry: str,
        starts: _Starts,
        result_path: Path,
    ) -> None:
        self.kit = kit
        self.harness = harness
        self.function = function
        self.watch = watch
        self.entry = entry
        self.starts = starts
        self.result_path = result_path
        self.program = _Program(function)

    def check(self, case: Case, seed: int) -> None:
        """Both runs of one case; after each, the output goes to the judge and the rank says `ran`."""
        kit = self.kit
        name = str(case["name"])
        self.watch.status.set(f"case {name}: the judge draws the inputs")
        kit.begin_case(seed)
        inputs = self.harness.make_inputs(case, kit)
        launch = self.harness.launcher(self.program, inputs, kit)
        for attempt in (1, 2):  # every rank runs both, whatever its first gave: a rank left out would hang the rest
            kit.poison_outputs()
            launch.prepare()
            kit.synchronize()
            self.watch.status.set(f"case {name}, run {attempt}: waiting for the other ranks to start")
            self.starts.wait()
            self.watch.begin(f"case {name}, run {attempt}", poison=True)
            launch.run()
            last = f" (its last operation: {self.watch.last})" if self.watch.last else ""
            self.watch.say(f"returned from your {self.entry}{last}; waiting for its GPU work to finish")
            kit.synchronize()
            self.watch.say(f"returned from your {self.entry}; the judge checks the result")
            result = _tensor(launch.result())
            problem = self._problem(inputs)
            self.result_path.write_bytes(_raw(result))
            _send(
                self.starts.reports,
                {
                    "event": "ran",
                    "attempt": attempt,
                    "dtype": str(result.dtype).removeprefix("torch."),
                    "numel": int(result.numel()),
                    "problem": problem or "",
                },
            )

    def _problem(self, inputs: object) -> str | None:
        """What the rank itself sees wrong: a write past the output, or a change to a read-only input."""
        guard = self.kit.check_guards()
        if guard:
            return f"rank {self.kit.rank}: {guard}"
        read_only = getattr(self.harness, "read_only", None)
        if read_only is not None:
            changed = read_only(inputs, self.kit)
            if changed is not None:
                return str(changed.message)
        return None

    def time(self, case: Case, seed: int) -> RankReport:
        """The learner's function at one size: per call, the GPU time of this rank, and its output where the judge
        asks after the call."""
        kit = self.kit
        name = str(case["name"])
        self.watch.status.set(f"timing {name}: the judge draws the inputs")
        kit.begin_case(seed)
        inputs = self.harness.make_inputs(case, kit)
        launch = self.harness.launcher(self.program, inputs, kit)
        self.watch.uninstall()  # torch's own operations for the timed calls
        try:
            mine, read = _timed(
                kit,
                launch.run,
                launch.prepare,
                lambda: self.starts.timed_start(kit, self.watch.originals),
                int(case.get("reps", 20)),
                int(case.get("warmup", 3)),
                lambda doing: self.watch.status.set(f"timing {name}: your {self.entry}, {doing}"),
                lambda rep: self.starts.sampled(_tensor(launch.result())),
            )
        finally:
            self.watch.install()
        return {"event": "timed", "mine_ms": mine, "samples": read}


def _tensor(result: object) -> torch.Tensor:
    """A collective harness's result: the rank's output tensor."""
    import torch

    if not isinstance(result, torch.Tensor):
        raise TypeError(f"the card's harness gave {type(result).__name__} as the rank's output, not a tensor")
    return result


def _raw(result: torch.Tensor) -> bytes:
    """A tensor's bytes as the judge reads them back (its element type said beside them)."""
    import torch

    flat = result.detach().reshape(-1).contiguous().cpu()
    data: bytes = flat.view(torch.uint8).numpy().tobytes()
    return data


class _Program:
    """What a collective harness's launcher is given: the learner's function, as `program.function`."""

    def __init__(self, function: LearnerFunction | None) -> None:
        self.function = function


def main() -> None:
    spec = json.loads(sys.argv[1])
    serve(spec)


if __name__ == "__main__":
    main()
