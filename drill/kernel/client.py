"""JudgeClient: runs kernel cards in a warm child process, with a timeout, cancel and replacement."""

from __future__ import annotations

import collections
import itertools
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

from drill.config.settings import DEFAULT_JUDGE_TIMEOUT
from drill.kernel.bytecode import python_env
from drill.kernel.verdict import Verdict, VerdictBuilder
from drill.kernel_shared import judge_python, protocol
from drill.kernel_shared.protocol import CalibratedEvent, ErrorEvent, Job, JudgeEvent, ReadyEvent, Request, RunRequest

EventHandler = Callable[[JudgeEvent], None]
VerdictHandler = Callable[[Verdict], None]

START_TIMEOUT = 180.0  # importing torch and initialising CUDA can take a while on a cold machine


def default_command(calibration: Path | None = None) -> list[str]:
    """The judge's command line: `python -m drill.judge` with the isolated import path (drill.kernel_shared.judge_python)."""
    if calibration is None:
        return judge_python.command("drill.judge")
    # one word: a folder named like an option stays a value; absolute: the judge starts in another folder
    return judge_python.command("drill.judge", f"--calibration={calibration.absolute()}")


class JudgeError(RuntimeError):
    """The judge could not start, or stopped answering."""


class _Child:
    """One child process with reader threads; `events` ends with None when its stdout closes."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(
            list(command),
            cwd=judge_python.neutral_folder(),  # never the learner's folder (see drill.kernel_shared.judge_python)
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            env=dict(env),
            start_new_session=True,  # its own process group: a kill takes compiler grandchildren too
        )
        self.events: queue.Queue[JudgeEvent | None] = queue.Queue()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=200)
        self.ready: ReadyEvent | None = None
        self.killed = False
        threading.Thread(target=self._read_stdout, daemon=True, name="judge-stdout").start()
        self._stderr_done = threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True, name="judge-stderr").start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                message = protocol.decode(line)
                if message is None:
                    if line.strip():
                        self.stderr_tail.append(line.rstrip())
                    continue
                event = protocol.as_event(message)
                if event is not None:
                    self.events.put(event)
                    self.stderr_tail.append(line.rstrip())
        except (OSError, ValueError):  # closed by `close` while a line was awaited: the child is gone anyway
            pass
        finally:
            self.events.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        try:
            for line in self.proc.stderr:
                self.stderr_tail.append(line.rstrip())
        except (OSError, ValueError):  # closed by `close`, as above
            pass
        finally:
            self._stderr_done.set()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: Request) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(protocol.encode(message))
        self.proc.stdin.flush()

    def kill(self, wait: bool = True) -> None:
        """SIGKILL the child's process group; `wait`: until it is gone (freeing a GPU context takes a while)."""
        self.killed = True
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                self.proc.kill()
        if not wait:  # reaped in the background, so no zombie (or warning) is left behind in a longer process
            threading.Thread(target=self.proc.wait, daemon=True, name="judge-reaper").start()
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def death_words(self) -> str:
        """How the child ended, in words, with the last thing it printed."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self._stderr_done.wait(timeout=2)
        if code is None:
            how = "the judge stopped answering"
        elif code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            how = f"the judge process was killed by {name}"
        else:
            how = f"the judge process exited with code {code}"
        last = [line for line in self.stderr_tail if line.strip()][-3:]
        return how + (": " + " | ".join(last) if last else "")

    def close(self) -> None:
        if self.ready is None and not self.killed:  # still starting (importing torch): nothing to finish
            self.kill()
        if self.proc.poll() is None and not self.killed:
            try:
                self.send({"op": "quit"})
                self.proc.wait(timeout=3)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


class JudgeClient:
    """Talks to one warm judge child; replaces it after a hang, crash or cancel.

    `run` blocks (call it from a worker thread); `cancel` may be called from any
    other thread and makes the running `run` return a cancelled verdict.
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        data_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        calibration = Path(data_dir) / "gpu_calibration.json" if data_dir is not None else None
        self.command = list(command) if command else default_command(calibration)
        self.start_timeout = start_timeout
        self._env = self._child_env(env)
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self._ids = itertools.count(1)
        self._cancel = threading.Event()
        self._busy = threading.Lock()
        self.replacements = 0

    @staticmethod
    def _child_env(extra: Mapping[str, str] | None) -> dict[str, str]:
        env = python_env()
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra or {})
        return judge_python.environment(env)  # drill itself is found by the command line, not by PYTHONPATH

    def start(self) -> None:
        """Start the child now (it warms up in the background)."""
        with self._lock:
            if self._child is None or not self._child.alive():
                self._spawn_locked()

    def _spawn_locked(self) -> _Child:
        if self._child is not None:
            self._child.close()
            self._child = None
        try:
            self._child = _Child(self.command, self._env)
        except OSError as exc:  # no such program, or not allowed to run it
            raise JudgeError(f"the judge could not start: {' '.join(self.command[:1])}: {exc.strerror or exc}") from exc
        return self._child

    def _replace(self) -> None:
        with self._lock:
            if self._child is not None:
                self._child.kill()
                self._child.close()
            self.replacements += 1
            try:
                self._spawn_locked()
            except JudgeError:  # the next run says so
                pass

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None and child.alive() else None

    def _starting_child(self) -> _Child | None:
        """The child when it is started, alive and has not said `ready` yet."""
        with self._lock:
            child = self._child
        return child if child is not None and child.ready is None and child.alive() else None

    def _ready_child(self) -> _Child:
        """A started child that has said `ready`; raise JudgeError if it cannot start."""
        self.start()
        child = self._child
        assert child is not None
        if child.ready is not None:
            return child
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._cancel.is_set():
                raise JudgeError("cancelled while the judge was starting")
            try:
                event = child.events.get(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() >= deadline:
                    child.kill()
                    raise JudgeError(f"the judge did not start within {self.start_timeout:.0f} s")
                continue
            if event is None:
                raise JudgeError("the judge could not start: " + child.death_words())
            if event["event"] == "ready":
                child.ready = event
                return child

    def info(self) -> ReadyEvent:
        """The child's `ready` event: pid, device, gpu, versions (starts the child if needed)."""
        ready = self._ready_child().ready
        assert ready is not None  # a ready child has said so
        return ready.copy()

    # -- requests -------------------------------------------------------------
    def run(
        self,
        job: Job,
        source: str,
        on_event: EventHandler | None = None,
        timeout: float = DEFAULT_JUDGE_TIMEOUT,
        *,
        timing: str = "first",
        on_verdict: VerdictHandler | None = None,
    ) -> Verdict:
        """Judge `source` for the kernel job (see drill.kernel.job.kernel_job); never raises for the kernel's faults.

        A judge that started without torch sends its verdict before torch's own time for the card, on a GPU where
        that is not kept yet (importing torch takes seconds): `on_verdict` is given the verdict as soon as it is
        in, and the verdict returned also has torch's time (a `torch_time` event after `finished`).
        """
        card_id = str(job.get("card", "?"))
        with self._busy:
            self._cancel.clear()
            builder = VerdictBuilder(card_id)
            started = time.monotonic()
            request_id = next(self._ids)
            sent = job.copy()
            sent["harness"] = os.path.abspath(job["harness"])  # the judge works in a folder of its own
            sent.setdefault("timeout_s", timeout)  # a collective card's judge reports a hang well inside it
            request: RunRequest = {"op": "run", "id": request_id, "job": sent, "source": source, "timing": timing}
            with suppress(JudgeError):  # none yet: one starts now and reads this at once (a CUDA source compiles)
                self.start()  # one that cannot start is reported below
            early = self._starting_child()
            if early is not None:
                try:
                    early.send(request)
                except (OSError, ValueError):
                    early = None
            try:
                child = self._ready_child()
            except JudgeError as exc:
                builder.fail(str(exc), crashed=not self._cancel.is_set(), cancelled=self._cancel.is_set())
                self._replace()
                verdict = builder.result()
                verdict.seconds = time.monotonic() - started
                return verdict
            if child is not early:
                try:
                    child.send(request)
                except (OSError, ValueError):
                    pass  # a dead child shows up as end-of-file below
            self._collect(child, request_id, builder, on_event, timeout, what=f"the kernel run ({card_id})")
            verdict = builder.result()
            if not builder.finished or not verdict.seconds:
                verdict.seconds = time.monotonic() - started
            if on_verdict is not None:
                on_verdict(verdict)
            if builder.finished and any(t.torch_later for t in verdict.timings):
                self._collect_torch_times(child, request_id, builder, on_event, timeout)
            return builder.result()

    def calibrate(self, timeout: float = 300.0, on_event: EventHandler | None = None) -> CalibratedEvent | ErrorEvent:
        """Measure this GPU's copy bandwidth again; returns the `calibrated` event (or an `error`)."""
        with self._busy:
            self._cancel.clear()
            child = self._ready_child()
            request_id = next(self._ids)
            child.send({"op": "calibrate", "id": request_id})
            results: list[CalibratedEvent | ErrorEvent] = []

            def keep(event: JudgeEvent) -> None:
                if event["event"] == "calibrated" or event["event"] == "error":
                    results.append(event)
                if on_event:
                    on_event(event)

            builder = VerdictBuilder("calibrate")
            self._collect(child, request_id, builder, keep, timeout, what="calibration")
            if not results:
                failed: ErrorEvent = {"event": "error", "message": "; ".join(builder.verdict.errors) or "no result"}
                return failed
            return results[-1]

    def _collect(
        self,
        child: _Child,
        request_id: int,
        builder: VerdictBuilder,
        on_event: EventHandler | None,
        timeout: float,
        what: str,
    ) -> None:
        deadline = time.monotonic() + timeout
        fatal = False
        while True:
            remaining = deadline - time.monotonic()
            if self._cancel.is_set():
                builder.fail("", cancelled=True)
                self._replace()
                return
            if remaining <= 0:
                builder.fail(
                    f"{what} did not finish within {timeout:g} s and was stopped (a hang, or far too slow);"
                    " the judge was restarted",
                    timed_out=True,
                )
                self._replace()
                return
            try:
                event = child.events.get(timeout=min(0.05, remaining))
            except queue.Empty:
                continue
            if event is None:
                if self._cancel.is_set():
                    builder.fail("", cancelled=True)
                elif not (fatal and builder.verdict.errors):
                    builder.fail(child.death_words() + "; the judge was restarted", crashed=True)
                else:
                    builder.verdict.crashed = True
                self._replace()
                return
            if event.get("id") != request_id:
                continue
            builder.feed(event)
            if event["event"] == "error" and event.get("fatal"):
                fatal = True
            if on_event is not None:
                try:
                    on_event(event)
                except Exception:  # a display bug must not break the run
                    pass
            if event["event"] == "finished":
                if fatal:  # the child exits after a fatal error: replace it now
                    self._replace()
                return

    def _collect_torch_times(
        self, child: _Child, request_id: int, builder: VerdictBuilder, on_event: EventHandler | None, timeout: float
    ) -> None:
        """Wait for torch's own time of each timing sent without it (`torch_time` events, after `finished`)."""
        waiting = {t.name for t in builder.verdict.timings if t.torch_later}
        deadline = time.monotonic() + timeout
        why = f"not taken within {timeout:g} s"
        while waiting:
            if self._cancel.is_set() or time.monotonic() >= deadline:
                why = "cancelled" if self._cancel.is_set() else why
                self._replace()
                break
            try:
                event = child.events.get(timeout=0.05)
            except queue.Empty:
                continue
            if event is None:
                why = child.death_words()
                self._replace()
                break
            if event.get("id") != request_id or event["event"] != "torch_time":
                continue
            builder.feed(event)
            waiting.discard(event["name"])
            if on_event is not None:
                with suppress(Exception):  # a display bug must not break the run
                    on_event(event)
        for name in sorted(waiting):  # the verdict stands; only the ratio to torch is missing
            builder.feed({"event": "torch_time", "name": name, "torch_ms": None, "torch_host_us": None, "message": why})

    def cancel(self) -> None:
        """Stop the run in progress (the child is killed and replaced)."""
        self._cancel.set()
        child = self._child
        if child is not None and self._busy.locked():
            child.kill()

    def close(self) -> None:
        with self._lock:
            if self._child is not None:
                self._child.close()
                self._child = None

    def abandon(self) -> None:
        """Stop the child at once, without asking it to quit or waiting for it to go (a one-shot command that
        is done with it and about to exit)."""
        with self._lock:
            if self._child is not None:
                self._child.kill(wait=False)
                self._child.close()
                self._child = None

    def __enter__(self) -> JudgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
