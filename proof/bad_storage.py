"""Proof: `drill stats` and the app meet data they cannot use with a one-line message, never a traceback.

Cases, each run as real processes (`drill stats` and `drill stats --json`):

- a read-only data directory with nothing in it yet;
- a read-only data directory holding a good database;
- a database file of garbage bytes;
- an empty (0-byte) database file: drill initialises it and works;
- a copy of the version-1 fixture (tests/fixtures/drill-v1.sqlite3): drill migrates
  it, and every row of the old tables keeps its values (counted and compared);
- a database written by a newer drill (a higher schema version).

For each: the exit status, whether a traceback appeared, and the first line of
what drill printed on stderr. The app (`drill` with no command) is also started
in a pseudo-terminal against the garbage file, with a time limit, and its output
searched for a traceback.

A case that drill cannot use passes when it exits non-zero with exactly one
non-empty line on stderr, no traceback, and the words expected for it; a case
drill can use passes when it exits 0 and prints its report.

Root ignores file modes, so when this runs as root the read-only cases run as
the user nobody (setpriv); the output says which method was used.

    .venv/bin/python proof/bad_storage.py
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from _common import DRILL, REPO, Run, child_env, readable_by_all, run, strip_ansi, unprivileged

from drill.store import migrations
from drill.store.reader import DB_NAME
from drill.store.store import Store

FIXTURE = REPO / "tests" / "fixtures" / "drill-v1.sqlite3"
GARBAGE = b"these are not the bytes of a database\n" * 50


@dataclass
class Case:
    name: str
    prepare: Callable[[Path], None]
    expect_ok: bool
    words: str = ""  # what the one-line message must say when the case is refused
    as_nobody: bool = False
    check_after: Callable[[Path], list[str]] | None = None  # problems found in the data afterwards
    notes: list[str] = field(default_factory=list)


def make_read_only(data: Path, ro_prefix: list[str]) -> None:
    if ro_prefix or os.geteuid() != 0:
        if os.geteuid() == 0:
            data.chmod(0o755)  # root's own folder: nobody may read it but not write to it
        else:
            data.chmod(0o555)


def good_database(data: Path) -> None:
    store = Store(data)
    store.set_setting("new_per_day", "7")
    store.close()


def newer(data: Path) -> None:
    good_database(data)
    conn = sqlite3.connect(data / DB_NAME)
    conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(migrations.LATEST + 1),))
    conn.commit()
    conn.close()


V1_TABLES = {
    "card_state": "card_id, content_hash, changed, repetitions, ef, interval, due, lapses, suspended, "
    "buried_until, introduced_on",
    "review_log": "id, card_id, reviewed_at, day, grade, duration_ms, mode, state_before, state_after",
}


def v1_rows(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT {cols} FROM {t} ORDER BY 1").fetchall() for t, cols in V1_TABLES.items()}
    finally:
        conn.close()


V1_BEFORE: dict[str, list[tuple]] = {}


def v1_copy(data: Path) -> None:
    shutil.copy(FIXTURE, data / DB_NAME)
    V1_BEFORE.clear()
    V1_BEFORE.update(v1_rows(data / DB_NAME))


def v1_kept(data: Path) -> list[str]:
    after = v1_rows(data / DB_NAME)
    conn = sqlite3.connect(data / DB_NAME)
    version = migrations.schema_version(conn)
    conn.close()
    problems = []
    for table, rows in V1_BEFORE.items():
        kept = sum(1 for r in rows if r in set(after[table]))
        print(f"    {table}: {len(rows)} rows before, {len(after[table])} after, {kept} kept with every value")
        if after[table] != rows:
            problems.append(f"{table} rows changed")
    print(f"    schema version after: {version} (latest {migrations.LATEST})")
    if version != migrations.LATEST:
        problems.append(f"schema version {version}")
    return problems


def run_case(case: Case, ro_prefix: list[str]) -> list[str]:
    root = Path(tempfile.mkdtemp(prefix="drill-bad-"))
    data = root / "data"
    data.mkdir()
    failures: list[str] = []
    try:
        case.prepare(data)
        prefix: list[str] = []
        if case.as_nobody:
            readable_by_all(root)
            if os.geteuid() == 0 and ro_prefix and (data / DB_NAME).exists():
                os.chown(data / DB_NAME, 65534, 65534)  # the learner's own file, in a folder they may not write
            make_read_only(data, ro_prefix)
            prefix = ro_prefix
        print(f"{case.name}:")
        for args in (["stats"], ["stats", "--json"]):
            result = run([*DRILL, *args, "--data-dir", str(data)], prefix)
            verdict = judge(case, result)
            shown = result.message or "(nothing on stderr)"
            print(
                f"  drill {' '.join(args):13s} exit {result.rc}  traceback {'YES' if result.traceback else 'no '}"
                f"  stderr lines {result.stderr_lines}  {'ok' if not verdict else 'BAD: ' + verdict}"
            )
            print(f"    {shown}")
            if verdict:
                failures.append(f"{case.name} / drill {' '.join(args)}: {verdict}")
        if case.check_after:
            failures += [f"{case.name}: {p}" for p in case.check_after(data)]
    finally:
        if os.geteuid() != 0:
            data.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)
    return failures


def judge(case: Case, result: Run) -> str:
    """'' when the run is what the case asks for, else what is wrong."""
    if result.traceback:
        return "traceback"
    if case.expect_ok:
        if result.rc != 0:
            return f"exit {result.rc}: {result.message}"
        if "--json" in result.args:
            try:
                json.loads(result.stdout)
            except ValueError:
                return "no JSON report"
        return ""
    if result.rc == 0:
        return "exit 0 on data drill cannot use"
    if result.stderr_lines != 1:
        return f"{result.stderr_lines} lines on stderr, not one"
    if case.words not in result.message:
        return f"message lacks {case.words!r}"
    if DB_NAME not in result.message:
        return "message does not name the database file"
    return ""


def app_in_terminal(data: Path, seconds: float = 20.0) -> tuple[int | None, str]:
    """Start `drill --data-dir DATA` in a pseudo-terminal; its exit status (None if still running) and output."""
    master, slave = pty.openpty()
    env = child_env()
    env.update(TERM="xterm-256color", COLUMNS="100", LINES="30")
    proc = subprocess.Popen(
        [*DRILL, "--data-dir", str(data)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=REPO,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data_read = os.read(master, 65536)
            except OSError:
                break
            if not data_read:
                break
            chunks.append(data_read)
        elif proc.poll() is not None:
            break
    try:
        rc: int | None = proc.wait(timeout=3)  # the terminal closes a moment before the process is gone
    except subprocess.TimeoutExpired:
        rc = None
    if rc is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    os.close(master)
    return rc, strip_ansi(b"".join(chunks).decode("utf-8", "replace"))


def main() -> int:
    ro_prefix, how = unprivileged()
    print(f"read-only method: {how}")
    ro_meaningful = os.geteuid() != 0 or bool(ro_prefix)
    cases = [
        Case("read-only data directory, nothing in it", lambda d: None, False, "read-only", as_nobody=True),
        Case("read-only data directory, good database", good_database, False, "read-only", as_nobody=True),
        Case("garbage database file", lambda d: (d / DB_NAME).write_bytes(GARBAGE), False, "not a drill database"),
        Case("empty (0-byte) database file", lambda d: (d / DB_NAME).write_bytes(b""), True),
        Case("version-1 database (tests/fixtures/drill-v1.sqlite3)", v1_copy, True, check_after=v1_kept),
        Case("database from a newer drill", newer, False, "newer drill"),
    ]
    failures: list[str] = []
    for case in cases:
        if case.as_nobody and not ro_meaningful:
            print(f"{case.name}: SKIPPED (no way to run as a user that modes apply to)")
            failures.append(f"{case.name}: could not be made meaningful")
            continue
        failures += run_case(case, ro_prefix)

    root = Path(tempfile.mkdtemp(prefix="drill-bad-app-"))
    try:
        (root / DB_NAME).write_bytes(GARBAGE)
        rc, output = app_in_terminal(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    message = next((line for line in lines if DB_NAME in line), lines[0] if lines else "(no output)")
    traceback = "Traceback" in output
    print("app (`drill` with no command), garbage database file, in a pseudo-terminal:")
    print(
        f"  exit {rc if rc is not None else 'none (still running at the time limit; stopped)'}"
        f"  traceback {'YES' if traceback else 'no '}  output lines {len(lines)}"
    )
    print(f"    {message[:300]}")
    if traceback:
        failures.append("app / garbage file: traceback")
        tail = [line for line in lines if line][-3:]
        for line in tail:
            print(f"    | {line[:200]}")
    elif "not a drill database" not in output:
        failures.append("app / garbage file: no message naming the problem")

    print()
    print(f"{len(failures)} problem(s)")
    for failure in failures:
        print(f"  - {failure}")
    print("PASS" if not failures else "FAIL")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
