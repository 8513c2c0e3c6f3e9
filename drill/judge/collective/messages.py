"""The JSON lines between the judge and its ranks: what a rank is started with, the judge's commands, the ranks'
reports. Each crosses a pipe as one JSON object; these are their fields."""

from __future__ import annotations

from typing import Required, TypedDict

from drill.judge.harness import Case
from drill.kernel_shared.protocol import DeckPins


class RankStart(TypedDict):
    """What one rank is started with (the command line's argument, or `serve`'s in a forked judge)."""

    parent: int
    rank: int
    world: int
    backend: str  # "gloo" or "nccl"
    store: str  # the FileStore the ranks meet through
    status: str  # the rank's status slot
    commands_fd: int
    reports_fd: int
    result_path: str
    harness: str
    learner_path: str
    filename: str
    entry: str
    pins: DeckPins
    pg_timeout_s: float
    baseline_cases: list[Case]
    nccl_log: str  # "": NCCL keeps no record


class RankCommand(TypedDict, total=False):
    """The judge's word to a rank: `counted`, `case`, `time`, `go`, `sample`, `quit`."""

    op: Required[str]
    case: Case
    seed: int
    index: list[int]  # `sample`: where to read the timed call's output


class RankReport(TypedDict, total=False):
    """A rank's report: `joined`, `baseline`, `ready`, `at_start`, `ran`, `case`, `called`, `timed`, `fault`."""

    event: Required[str]
    seq: int  # the order the judge read it in
    pid: int
    times: dict[str, list[float]]  # `baseline`: NCCL's own collective's per-call ms, by case name
    attempt: int
    dtype: str
    numel: int
    problem: str
    mine_ms: list[float]
    base_ms: list[float]  # set by the judge: NCCL's own per-call ms at the same size
    samples: list[list[float]]
    kind: str
    message: str
    line: int
    doing: str
