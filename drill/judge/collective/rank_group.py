"""The judge's side of a collective card's ranks: start them, talk to them, notice a hang or a death, stop them all.

One process per rank (drill.judge.collective.rank_process), all in one process group of their own,
so one `killpg` takes every rank and anything the learner's code started; each
rank also dies with the judge (PR_SET_PDEATHSIG), so a judge stopped by the
app's timeout leaves none behind. They meet through a FileStore in a temporary
folder. On a machine where the judge has no CUDA context (a CPU) the ranks are
forks of the judge, which has torch imported already: a rank starts in
milliseconds, where a fresh Python would spend a second or more importing
torch. With GPUs they are fresh processes (a fork cannot use CUDA).

Each rank writes what it is doing to a status slot (drill.judge.collective.status_slot);
when the ranks stop making progress (no slot changes and no rank answers for
`stall_s`) or one dies, the words say which rank was doing what.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from drill.judge.collective.messages import RankCommand, RankReport, RankStart
from drill.judge.collective.status_slot import StatusSlot
from drill.judge.collective.traffic import nccl_log_path
from drill.judge.harness import Case
from drill.kernel_shared.protocol import DeckPins

SPAWN_ENV = "DRILL_RANKS_SPAWN"  # set: fresh processes even where forking would do (tests of that path)
STALL_SECONDS = 8.0  # no rank answers and none changes its status for this long: a hang
START_STALL_SECONDS = 60.0  # the same while a rank imports torch and joins the group (none of the learner's code yet)
FAULT_GRACE_S = 0.3  # after one rank's fault, how long the others may take to report theirs
LOAD_STRETCH_MOST = 4.0  # a hang is still called within four times its idle-machine wait, however busy


class RankFailure(Exception):
    """The ranks could not finish what they were asked: a fault, a death or a hang, in words."""

    def __init__(self, words: str, kind: str = "runtime") -> None:
        super().__init__(words)
        self.words = words
        self.kind = kind


@dataclass
class _Rank:
    rank: int
    pid: int
    commands: TextIO  # the write end of its command pipe
    reports_fd: int
    status: StatusSlot
    buffer: bytes = b""
    replies: list[RankReport] = field(default_factory=list)
    exit_code: int | None = None


@dataclass
class RankSpec:
    """What every rank of one launch shares."""

    world: int
    backend: str  # "gloo" or "nccl"
    harness: str
    learner_path: str
    filename: str
    entry: str
    pins: DeckPins
    pg_timeout_s: float
    baseline_cases: list[Case] = field(default_factory=list)  # NCCL's own collective, timed at these first
    log_nccl: bool = False  # NCCL writes its record of every operation to a file of the judge's (for the traffic)


class RankGroup:
    """The ranks of one launch. Use as a context manager: leaving it kills them all."""

    def __init__(self, spec: RankSpec, folder: Path, *, stall_s: float = STALL_SECONDS) -> None:
        self.spec = spec
        self.folder = folder
        self.stall_s = stall_s
        self.ranks: list[_Rank] = []
        self.pgid = 0
        self._procs: list[subprocess.Popen[bytes]] = []  # kept, so Popen does not reap them behind our back
        self._arrived = 0
        self._selector = selectors.DefaultSelector()

    # -- starting and stopping ---------------------------------------------------------------------
    def __enter__(self) -> RankGroup:
        store = self.folder / "store"
        for rank in range(self.spec.world):
            self.ranks.append(self._start(rank, store))
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _start(self, rank: int, store: Path) -> _Rank:
        status_path = self.folder / f"status{rank}"
        status = StatusSlot(status_path, create=True)
        commands_r, commands_w = os.pipe()
        reports_r, reports_w = os.pipe()
        spec: RankStart = {
            "rank": rank,
            "world": self.spec.world,
            "backend": self.spec.backend,
            "store": str(store),
            "status": str(status_path),
            "harness": self.spec.harness,
            "learner_path": self.spec.learner_path,
            "filename": self.spec.filename,
            "entry": self.spec.entry,
            "pins": self.spec.pins,
            "pg_timeout_s": self.spec.pg_timeout_s,
            "baseline_cases": self.spec.baseline_cases,
            "result_path": str(self.result_path(rank)),
            "nccl_log": str(nccl_log_path(self.folder, rank)) if self.spec.log_nccl else "",
            "commands_fd": commands_r,
            "reports_fd": reports_w,
            "parent": os.getpid(),
        }
        log = os.open(self.folder / f"rank{rank}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            if self._may_fork():
                pid = self._fork(spec, keep=(commands_r, reports_w), log=log)
            else:
                pid = self._spawn(spec, keep=(commands_r, reports_w), log=log)
        finally:
            os.close(log)
        if not self.pgid:
            self.pgid = pid
        os.close(commands_r)
        os.close(reports_w)
        os.set_blocking(reports_r, False)
        self._selector.register(reports_r, selectors.EVENT_READ, rank)
        return _Rank(rank, pid, os.fdopen(commands_w, "w", encoding="utf-8", buffering=1), reports_r, status)

    def _may_fork(self) -> bool:
        if os.environ.get(SPAWN_ENV) or self.spec.backend == "nccl" or not hasattr(os, "fork"):
            return False
        torch = sys.modules.get("torch")
        return torch is not None and not torch.cuda.is_initialized()

    def _fork(self, spec: RankStart, keep: tuple[int, int], log: int) -> int:
        pid = os.fork()
        if pid == 0:  # the rank
            try:
                os.setpgid(0, self.pgid)
                os.dup2(log, 1)
                os.dup2(log, 2)
                for other in self.ranks:  # the other ranks' pipes: a rank that died must close its own for good
                    _close_quietly(other.reports_fd)
                    _close_quietly(other.commands.fileno())
                self._selector = selectors.DefaultSelector()
            except BaseException:
                os._exit(1)
            from drill.judge.collective.rank_process import serve

            serve(spec)  # never returns
        try:
            os.setpgid(pid, self.pgid or pid)  # here too: whichever runs first, the group is right before any kill
        except OSError:
            pass
        return pid

    def _spawn(self, spec: RankStart, keep: tuple[int, int], log: int) -> int:
        from drill.kernel_shared import judge_python

        proc = subprocess.Popen(
            judge_python.command(
                "drill.judge.collective.rank_process", json.dumps(spec), python=sys.executable
            ),  # isolated imports
            pass_fds=keep,
            stdin=subprocess.DEVNULL,
            stdout=log,  # what the learner prints, and what a crashing library says: read back at a death
            stderr=log,
            process_group=self.pgid,
        )
        self._procs.append(proc)
        return proc.pid

    def kill(self) -> None:
        """SIGKILL every rank and whatever they started; wait until they are gone (their GPU memory with them)."""
        if self.pgid:
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for r in self.ranks:
            self._reap(r, block=True)
            _close_quietly(r.reports_fd)
            try:
                r.commands.close()
            except OSError:
                pass
            r.status.close()
        self.ranks = []
        self._selector.close()

    def _reap(self, r: _Rank, block: bool) -> None:
        if r.exit_code is not None:
            return
        deadline = time.monotonic() + 10.0
        while True:
            try:
                pid, status = os.waitpid(r.pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                r.exit_code = -1
                return
            if pid:
                r.exit_code = os.waitstatus_to_exitcode(status)
                return
            if not block or time.monotonic() > deadline:
                return

    def result_path(self, rank: int) -> Path:
        """Where rank `rank` writes its output after each checked run, for the judge to read and compare."""
        return self.folder / f"result{rank}.bin"

    def pids(self) -> list[int]:
        return [r.pid for r in self.ranks]

    # -- talking to them -------------------------------------------------------------------------
    def send(self, message: RankCommand) -> None:
        """The same command to every rank."""
        for r in self.ranks:
            self.send_to(r.rank, message)

    def send_to(self, rank: int, message: RankCommand) -> None:
        """A command to one rank only (what only it may know: its own seed)."""
        r = self.ranks[rank]
        try:
            r.commands.write(json.dumps(message) + "\n")
            r.commands.flush()
        except OSError:  # a dead rank: seen when its answer does not come
            pass

    def collect(self, event: str, deadline: float, what: str, *, stall_s: float | None = None) -> list[RankReport]:
        """Every rank's next reply `event` (taken off what it sent), in rank order; RankFailure when a rank faults, dies
        or the ranks hang. A rank may be a reply ahead of the others: it is kept for the next collect."""
        stall = stretched_by_load(self.stall_s if stall_s is None else stall_s)
        last_change = time.monotonic()
        seen = [r.status.get() for r in self.ranks]
        while True:
            got: dict[int, RankReport] = {}
            for r in self.ranks:
                first = next((m for m in r.replies if m.get("event") == event), None)
                if first is not None:
                    got[r.rank] = first
            faults = [(r, m) for r in self.ranks for m in r.replies if m.get("event") == "fault"]
            if faults:
                time.sleep(FAULT_GRACE_S)  # the others' own faults, if any, come in too
                self._read(0.0)
                for r in self.ranks:
                    self._reap(r, block=False)
                silent = [r for r in self.ranks if r.exit_code is not None and not _faulted(r)]
                if silent:  # a rank that died unannounced is the cause; the others' errors follow from it
                    raise RankFailure(self._death_words(silent, what, faults))
                faults.sort(key=lambda fault: int(fault[1].get("seq", 0)))  # the first to fail caused the rest
                raise RankFailure(self._fault_words(faults, what), faults[0][1].get("kind", "runtime"))
            if len(got) == len(self.ranks):
                for r in self.ranks:
                    r.replies.remove(got[r.rank])
                return [got[r.rank] for r in self.ranks]
            dead = [r for r in self.ranks if r.exit_code is not None and r.rank not in got]
            if dead:
                self._read(0.05)  # a fault it sent just before it went
                if any(m.get("event") == "fault" for r in dead for m in r.replies):
                    continue
                raise RankFailure(self._death_words(dead, what))
            now = time.monotonic()
            if now >= deadline:
                raise RankFailure(self._hang_words(got, what, "did not finish within the run's time"), "timeout")
            if self._read(min(0.05, deadline - now)):
                last_change = time.monotonic()
            for r in self.ranks:
                self._reap(r, block=False)
            current = [r.status.get() for r in self.ranks]
            if current != seen:
                seen = current
                last_change = time.monotonic()
            elif time.monotonic() - last_change >= stall:
                raise RankFailure(self._hang_words(got, what, f"made no progress for {stall:g} s (a hang)"), "timeout")

    def _read(self, timeout: float) -> bool:
        """Read what the ranks sent; True when anything came."""
        came = False
        for key, _ in self._selector.select(timeout):
            r = self.ranks[key.data]
            try:
                chunk = os.read(r.reports_fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self._selector.unregister(r.reports_fd)
                continue
            came = True
            r.buffer += chunk
            *lines, r.buffer = r.buffer.split(b"\n")
            for line in lines:
                try:
                    message: RankReport = json.loads(line)
                except ValueError:
                    continue
                self._arrived += 1
                message["seq"] = self._arrived  # the order the judge read them in
                r.replies.append(message)
        return came

    # -- the words -------------------------------------------------------------------------------
    def doing(self, r: _Rank) -> str:
        """What rank `r` was doing, from its status slot."""
        return r.status.get() or "starting"

    def _others(self, skip: set[int], got: dict[int, RankReport] | None = None) -> str:
        parts = []
        for r in self.ranks:
            if r.rank in skip:
                continue
            if got is not None and r.rank in got:
                parts.append(f"rank {r.rank}: finished")
            else:
                parts.append(f"rank {r.rank}: {self.doing(r)}")
        return "; ".join(parts)

    def _fault_words(self, faults: list[tuple[_Rank, RankReport]], what: str) -> str:
        r, m = faults[0]
        if m.get("kind") == "tampered":
            return f"rank {r.rank}: {m.get('message')}"
        line = int(m.get("line") or 0)
        at = f" at line {line}" if line else ""
        doing = str(m.get("doing") or what)
        others = self._others({r.rank})
        return f"rank {r.rank}{at}: {m.get('message')} ({doing})" + (
            f"; the others were stopped: {others}" if others else ""
        )

    def _death_words(self, dead: list[_Rank], what: str, after: list[tuple[_Rank, RankReport]] | None = None) -> str:
        r = dead[0]
        code = r.exit_code if r.exit_code is not None else 0
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        said = self.last_words(r)
        if said:
            how += f", saying: {said}"
        if after:
            then = "; ".join(f"rank {x.rank} then failed: {m.get('message')}" for x, m in after)
            return f"rank {r.rank} died: it {how} ({self.doing(r)}); {then}"
        others = self._others({r.rank})
        return f"rank {r.rank} died: it {how} ({self.doing(r)})" + (
            f"; the others were stopped: {others}" if others else ""
        )

    def last_words(self, r: _Rank) -> str:
        """The last line a rank printed before it died (a library's abort message), shortened."""
        try:
            with open(self.folder / f"rank{r.rank}.log", "rb") as fh:
                fh.seek(max(0, os.fstat(fh.fileno()).st_size - 4096))
                tail = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [
            ln.strip() for ln in tail.splitlines() if ln.strip() and not ln.strip().startswith("Exception raised from")
        ]
        if not lines:
            return ""
        last = lines[-1]
        if last.startswith("what():"):
            last = last.removeprefix("what():").strip()
        if last.startswith("[") and "] " in last:  # "[/path/gloo/.../pair.cc:446] op.preamble.length <= ..."
            last = last.split("] ", 1)[1]
        return last[:300]

    def _hang_words(self, got: dict[int, RankReport], what: str, why: str) -> str:
        return f"the ranks {why} during {what}; all were stopped: {self._others(set(), got)}"


def stretched_by_load(seconds: float) -> float:
    """`seconds` of no progress, stretched by how busy the machine is: ranks that share their cores with more
    runnable processes than there are cores answer that much later without hanging (the last minute's load per
    core, from 1 to LOAD_STRETCH_MOST)."""
    busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    return round(seconds * min(LOAD_STRETCH_MOST, max(1.0, busy)), 1)


def _faulted(r: _Rank) -> bool:
    return any(m.get("event") == "fault" for m in r.replies)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def run_folder(parent: Path) -> Path:
    """A fresh folder for one launch's store, status slots and the learner's file."""
    return Path(tempfile.mkdtemp(prefix="ranks-", dir=parent))
