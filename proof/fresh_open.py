"""Proof: a brand-new data directory opened by several drills at the same moment works in all of them.

Each trial makes an empty temporary data directory and starts real
`drill stats --json --data-dir DIR` processes together (2 of them, or 4 in every
third trial). A trial fails when any process exits non-zero, prints no JSON, or
shows a traceback; afterwards the file must be at the latest schema, in WAL mode,
and pass SQLite's integrity check.

Started together, processes still reach the database a few hundred milliseconds
apart (importing and loading the decks takes a while). So a second round runs the
same command with a gate: each process, just before it opens the store, waits
until all of them are there, so they open the file within a millisecond of each
other. The command is the real `drill stats`, only held at that point.

    .venv/bin/python proof/fresh_open.py [--trials N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import DRILL, Run, finish, start

from drill.store import migrations
from drill.store.reader import DB_NAME

# `drill stats`, held just before Store(...) until every process of the trial has arrived.
GATED = r"""
import os, sys, time
gate, n = sys.argv[1], int(sys.argv[2])
import drill.store.store as store_module
opening = store_module.Store.__init__
def held(self, data_dir):
    open(os.path.join(gate, f"at-{os.getpid()}"), "w").close()
    deadline = time.monotonic() + 60
    while len(os.listdir(gate)) < n and time.monotonic() < deadline:
        time.sleep(0.0005)
    opening(self, data_dir)
store_module.Store.__init__ = held
from drill.cli import main
sys.argv[0] = "drill"
sys.exit(main(sys.argv[3:]))
"""


def check_file(data: Path) -> str | None:
    """None when the file is whole, at the latest schema and in WAL mode; else what is wrong."""
    try:
        conn = sqlite3.connect(f"{(data / DB_NAME).as_uri()}?mode=ro", uri=True)
        try:
            version = migrations.schema_version(conn)
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable: {exc}"
    if (version, mode, ok) != (migrations.LATEST, "wal", "ok"):
        return f"schema {version}, journal {mode}, integrity {ok}"
    return None


def trial(n: int, gated: bool) -> tuple[list[Run], str | None]:
    root = Path(tempfile.mkdtemp(prefix="drill-fresh-"))
    data = root / "data"  # not made yet: every process finds nothing there
    gate = root / "gate"
    gate.mkdir()
    try:
        args = ["stats", "--json", "--data-dir", str(data)]
        if gated:
            cmds = [[sys.executable, "-c", GATED, str(gate), str(n), *args] for _ in range(n)]
        else:
            cmds = [[*DRILL, *args] for _ in range(n)]
        procs = [start(cmd) for cmd in cmds]
        runs = [finish(p, cmd) for p, cmd in zip(procs, cmds)]
        problem = check_file(data) if (data / DB_NAME).exists() else "no database file"
        return runs, problem
    finally:
        shutil.rmtree(root, ignore_errors=True)


def failed(run: Run) -> bool:
    if run.rc != 0:
        return True
    try:
        return "cards" not in json.loads(run.stdout)
    except ValueError:
        return True


def round_of(trials: int, gated: bool) -> dict:
    label = "gated (held until all arrive)" if gated else "started together"
    stats = Counter()
    errors: Counter[str] = Counter()
    began = time.monotonic()
    for i in range(trials):
        n = 4 if i % 3 == 2 else 2
        runs, problem = trial(n, gated)
        stats["trials"] += 1
        stats[f"trials with {n} processes"] += 1
        stats["processes"] += n
        bad = [r for r in runs if failed(r)]
        stats["failures to open"] += len(bad)
        stats["tracebacks seen"] += sum(r.traceback for r in runs)
        stats["bad files afterwards"] += problem is not None
        stats["failed trials"] += bool(bad or problem or any(r.traceback for r in runs))
        for r in bad:
            last = [line for line in r.stderr.splitlines() if line.strip()]
            errors[last[-1] if last else f"exit {r.rc}, no message"] += 1
        if problem:
            errors[f"file: {problem}"] += 1
        mark = "ok" if not bad and not problem else "FAILED"
        print(f"  [{label}] trial {i + 1:2d}: {n} processes, exits {sorted(r.rc for r in runs)} {mark}", flush=True)
    print(f"{label}: {trials} trials in {time.monotonic() - began:.0f} s")
    for key in (
        "trials",
        "trials with 2 processes",
        "trials with 4 processes",
        "processes",
        "failures to open",
        "tracebacks seen",
        "bad files afterwards",
        "failed trials",
    ):
        print(f"  {key:24s} {stats[key]}")
    for message, count in errors.most_common():
        print(f"  error x{count}: {message}")
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    totals = Counter()
    for gated in (False, True):
        totals.update(round_of(args.trials, gated))
    print(
        f"total: {totals['trials']} trials, {totals['processes']} processes, "
        f"{totals['failures to open']} failures to open, {totals['tracebacks seen']} tracebacks, "
        f"{totals['bad files afterwards']} bad files"
    )
    ok = totals["failed trials"] == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
