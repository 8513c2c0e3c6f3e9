"""One rank of a collective card: joins the process group, loads the harness and the learner's file, runs what the
judge asks. `python -m drill.judge.rank SPEC` (a fresh process, on GPUs) or `serve(spec)` in a forked judge (CPU).

The judge (drill.judge.ranks) sends one JSON line per command on the command pipe; the rank answers on the report
pipe. Commands: `case` (check one case: two runs, the second exposing what the first left), `time` (time the
learner's function and NCCL's collective at one size, every timed output checked), `quit`. Replies: `ready`,
`case`, `timed`, `fault` (an exception: the rank exits after it). What the learner prints goes to the judge's stderr.
"""

from __future__ import annotations

import ctypes
import datetime
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO, cast

from drill.judge.rank_ops import Refused
from drill.kernel.protocol import DeckPins

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


def serve(spec: dict[str, Any]) -> None:
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


def _serve(spec: dict[str, Any]) -> int:
    _die_with_parent(int(spec["parent"]))
    from drill.judge.rank_status import StatusSlot

    status = StatusSlot(Path(spec["status"]))
    status.set("starting: importing torch")
    commands = os.fdopen(int(spec["commands_fd"]), "r", encoding="utf-8")
    reports = os.fdopen(int(spec["reports_fd"]), "w", encoding="utf-8", buffering=1)
    rank = int(spec["rank"])
    world = int(spec["world"])
    import torch
    import torch.distributed as dist

    backend = str(spec["backend"])
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        torch.set_num_threads(1)  # ranks share the CPU: one thread each
        device = torch.device("cpu")
    status.set("joining the process group")
    options: dict[str, Any] = {"timeout": datetime.timedelta(seconds=float(spec["pg_timeout_s"]))}
    if backend == "nccl":
        options["device_id"] = device  # the communicator now, not in the first timed call
    dist.init_process_group(backend, init_method=f"file://{spec['store']}", rank=rank, world_size=world, **options)

    from drill.judge.rank_kit import RankKit
    from drill.judge.rank_ops import Originals, Watch, refuse_collectives
    from drill.judge.source_only import deck_imports, load_file, run_source
    from drill.judge.tamper import Fingerprint, tampered_words
    from drill.kernel.trust import Pins

    status.set("setting up the judge's side of the rank")
    originals = Originals()
    refuse_collectives(originals)
    learner_file = str(spec["learner_path"])
    watch = Watch(originals, status, learner_file)
    watch.install()
    kit = RankKit(rank, world, device, originals)
    pins = Pins.from_job(cast(DeckPins, spec.get("pins") or {}))
    with deck_imports(pins):
        harness = load_file(f"drill_collective_harness_{rank}", Path(spec["harness"]), pins)
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
        runner = _Runner(kit, harness, function, watch, entry)
        for line in commands:
            command = json.loads(line)
            op = command.get("op")
            if op == "quit":
                break
            case = command["case"]
            try:
                reply = runner.check(case) if op == "case" else runner.time(case)
            except Exception as exc:
                return _fault(reports, status, exc, learner_file, status.get())
            changed = fingerprint.changed()
            if changed:
                _send(reports, {"event": "fault", "kind": "tampered", "message": tampered_words(changed), "line": 0})
                return FAULT_EXIT
            _send(reports, reply)
    status.set("finished")
    return 0


def _send(reports: TextIO, message: dict[str, Any]) -> None:
    reports.write(json.dumps(message) + "\n")
    reports.flush()


def _fault(reports: TextIO, status: Any, exc: BaseException, learner_file: str, doing: str) -> int:
    """Report an exception from the learner's code (its line, what the rank was doing), then exit."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == learner_file:
            line = frame.lineno or 0
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
    """The harness's cases and timings, in one rank."""

    def __init__(self, kit: Any, harness: Any, function: Any, watch: Any, entry: str) -> None:
        self.kit = kit
        self.harness = harness
        self.function = function
        self.watch = watch
        self.entry = entry
        self.program = _Program(function)

    def check(self, case: dict[str, Any]) -> dict[str, Any]:
        kit = self.kit
        name = str(case["name"])
        self.watch.status.set(f"case {name}: the judge draws the inputs and computes the reference")
        kit.begin_case()
        inputs = self.harness.make_inputs(case, kit)
        ref = self.harness.reference(inputs, kit)
        launch = self.harness.launcher(self.program, inputs, kit)
        verdict: Any = None
        for attempt in (1, 2):  # every rank runs both, whatever its first gave: a rank left out would hang the rest
            kit.poison_outputs()
            launch.prepare()
            kit.builtin.barrier(kit.device)
            self.watch.begin(f"case {name}, run {attempt}", poison=True)
            launch.run()
            last = f" (its last operation: {self.watch.last})" if self.watch.last else ""
            self.watch.say(f"returned from your {self.entry}{last}; waiting for its GPU work to finish")
            kit.synchronize()
            self.watch.say(f"returned from your {self.entry}; the judge checks the result")
            check = self._check(launch, ref, inputs)
            if verdict is None and not check.ok:
                verdict = check
                if attempt == 2:
                    check.message = "first run right, second run wrong (state left by the first run?): " + check.message
        final = verdict or check
        return {
            "event": "case",
            "ok": final.ok,
            "message": final.message,
            "max_error": final.max_error,
            "tolerance": final.tolerance,
        }

    def _check(self, launch: Any, ref: Any, inputs: Any) -> Any:
        guard = self.kit.check_guards()
        if guard:
            return self.kit.Check(False, f"rank {self.kit.rank}: {guard}")
        return self.harness.compare(launch.result(), ref, inputs, self.kit)

    def time(self, case: dict[str, Any]) -> dict[str, Any]:
        """The learner's function and NCCL's collective at one size: per call, the GPU time of this rank."""
        kit = self.kit
        name = str(case["name"])
        reps = int(case.get("reps", 20))
        warmup = int(case.get("warmup", 3))
        self.watch.status.set(f"timing {name}: the judge draws the inputs and computes the reference")
        kit.begin_case()
        inputs = self.harness.make_inputs(case, kit)
        ref = self.harness.reference(inputs, kit)
        launch = self.harness.launcher(self.program, inputs, kit)
        base = self.harness.baseline(inputs, kit)
        self.watch.uninstall()  # torch's own operations for the timed calls
        try:
            mine, wrong = self._timed(
                launch.run,
                launch.prepare,
                reps,
                warmup,
                f"timing {name}: your {self.entry}",
                lambda rep: self._verify(launch, ref, inputs, name, rep),
            )
        finally:
            self.watch.install()
        nccl, _ = self._timed(base, launch.prepare, reps, warmup, f"timing {name}: NCCL's own collective", None)
        return {"event": "timed", "mine_ms": mine, "base_ms": nccl, "ok": wrong is None, "message": wrong or ""}

    def _verify(self, launch: Any, ref: Any, inputs: Any, name: str, rep: int) -> str | None:
        check = self._check(launch, ref, inputs)
        if check.ok:
            return None
        return f"timed call {rep + 1} at {name}: {check.message}"

    def _timed(
        self, run: Any, prepare: Any, reps: int, warmup: int, doing: str, verify: Any
    ) -> tuple[list[float], Any]:
        kit = self.kit
        status = self.watch.status
        wrong = None
        for i in range(warmup):
            prepare()
            status.set(f"{doing}, warm-up call {i + 1}")
            run()
        kit.synchronize()
        times: list[float] = []
        for rep in range(reps):
            kit.poison_outputs()
            prepare()
            kit.builtin.barrier(kit.device)  # every rank starts its call together
            status.set(f"{doing}, timed call {rep + 1} of {reps}")
            start = kit.event()
            end = kit.event()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(float(start.elapsed_time(end)))
            if verify is not None and wrong is None:
                wrong = verify(rep)
        return times, wrong


class _Program:
    """What a collective harness's launcher is given: the learner's function, as `program.function`."""

    def __init__(self, function: Any) -> None:
        self.function = function


def main() -> None:
    spec = json.loads(sys.argv[1])
    serve(spec)


if __name__ == "__main__":
    main()
