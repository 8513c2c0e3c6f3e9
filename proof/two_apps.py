"""Proof: two drills open on one data directory both grade freely, and every grade lands once.

Each trial starts two real apps, each in its own pseudo-terminal, on the same
data directory, and works both at once for --seconds: each answers its cards as
a learner would (typing a sentence, shapes, quantities, a choice and an
experiment), with only short pauses between keys, and grades each card. Both
show the same queue, so they often grade the same card within moments of each
other. Kernel cards are buried.

Both screens are watched the whole time for a notice about a lock or an error
("database is locked", "locked", "error"...), a database message, or a
traceback. At the end each app quits with ctrl+q and must exit 0. Then the
database must pass PRAGMA integrity_check, and review_log must have grown by
exactly the sum of the two screens' final "N saved".

The trials reuse one data directory (the first trial starts it fresh). Two
processes opening a brand-new directory at the same moment is the subject of
proof/fresh_open.py.

    .venv/bin/python proof/two_apps.py [--seconds 60] [--trials 3] [--quick]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

from _screen import CTRL_Q, Answerer, App, AppGone, drill_command

FLAGS = ("--new-per-day", "400", "--new-order", "random")
DB = "drill.sqlite3"


class Learner(threading.Thread):
    """Works one app until the deadline: answer, grade, wait for the screen to confirm, next."""

    def __init__(self, name: str, app: App, rng: random.Random, deadline: float) -> None:
        super().__init__(daemon=True)
        self.name = name
        self.app = app
        self.rng = rng
        self.deadline = deadline
        self.sent = 0
        self.sent_at: list[float] = []
        self.confirmed = 0
        self.buried = 0
        self.slowest_confirm = 0.0
        self.trouble: list[str] = []
        self.failure = ""
        self.answerer: Answerer | None = None

    def watch(self) -> None:
        for line in self.app.trouble():
            if line not in self.trouble:
                self.trouble.append(line)

    def run(self) -> None:
        app = self.app
        answerer = self.answerer = Answerer(app, self.rng, per_key=(0.005, 0.02))
        try:
            while time.monotonic() < self.deadline:
                top = app.wait_card(timeout=30)
                self.watch()
                if top is None:
                    self.failure = "ran out of cards"
                    return
                if not answerer.answer(top.kind):
                    left = top.left
                    answerer.set_aside()
                    app.wait_for(lambda: app.left() != left, 15)
                    self.buried += 1
                    continue
                self.watch()
                before = top.saved
                time.sleep(self.rng.uniform(0.02, 0.15))  # a glance at the answer
                started = time.monotonic()
                answerer.key(str(self.rng.choices(range(6), weights=(1, 2, 3, 3, 3, 2))[0]), "grade")
                self.sent += 1
                self.sent_at.append(started)
                app.wait_for(lambda: app.saved() > before, 20)
                self.slowest_confirm = max(self.slowest_confirm, time.monotonic() - started)
                self.confirmed = app.saved()
                self.watch()
        except (AppGone, TimeoutError) as exc:
            self.watch()
            screen = "\n      ".join(line.rstrip() for line in app.lines() if line.strip())
            self.failure = f"{type(exc).__name__}: {exc}; screen:\n      {screen}"


def log_count(data: Path) -> int:
    if not (data / DB).exists():
        return 0
    conn = sqlite3.connect(data / DB)
    try:
        return conn.execute("SELECT count(*) FROM review_log").fetchone()[0]
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one short trial, for CI")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seconds, trials = (12.0, 1) if args.quick else (args.seconds, args.trials)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="drill-two-apps-"))
    data = tmp / "data"
    started = time.monotonic()
    print(f"two apps on one data directory: {trials} trial(s) of {seconds:g} s, seed {seed}")

    failures: list[str] = []
    totals = {
        "sent": 0,
        "saved": 0,
        "log": 0,
        "trouble": 0,
        "tracebacks": 0,
        "tab missed": 0,
        "experiment lost": 0,
        "close": 0,
    }
    for t in range(1, trials + 1):
        before = log_count(data)
        apps = [App(drill_command(data, *FLAGS), cols=100, rows=40) for _ in range(2)]
        try:
            for app in apps:
                app.wait_card(timeout=60)
        except (AppGone, TimeoutError) as exc:
            failures.append(f"trial {t}: an app did not show its first card: {exc}")
        deadline = time.monotonic() + seconds
        learners = [Learner(f"app {i + 1}", app, random.Random(rng.random()), deadline) for i, app in enumerate(apps)]
        for learner in learners:
            learner.start()
        for learner in learners:
            learner.join(seconds + 120)
        finals, codes = [], []
        for learner in learners:
            app = learner.app
            finals.append(app.saved() if app.top() else learner.confirmed)
            learner.watch()
        for app in apps:
            if app.alive():
                app.settle(0.2)
                try:
                    app.send(CTRL_Q)
                except AppGone:
                    pass
        for learner, app in zip(learners, apps):
            rc = app.wait_exit(20)
            codes.append(rc)
            learner.watch()
            app.close()
        after = log_count(data)
        conn = sqlite3.connect(data / DB)
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.close()
        grown = after - before
        trouble = [f"{lr.name}: {line}" for lr in learners for line in lr.trouble]
        tracebacks = sum(any("Traceback" in line for line in lr.trouble) for lr in learners)
        print(f"  trial {t}:")
        for learner, final, rc in zip(learners, finals, codes):
            print(
                f"    {learner.name}: grade keys {learner.sent}, final screen '{final} saved', buried {learner.buried},"
                f" slowest grade->confirmed {learner.slowest_confirm * 1000:.0f} ms, ctrl+q exit status {rc}"
            )
        close = sum(1 for a in learners[0].sent_at if any(abs(a - b) < 0.1 for b in learners[1].sent_at))
        totals["close"] += close
        print(f"    grade keys of the two apps within 100 ms of each other: {close}")
        print(f"    review_log grew by {grown}; screens' saved sum {sum(finals)}; integrity_check {integrity}")
        print(f"    lock/error notices or tracebacks on screen: {len(trouble)}")
        for line in trouble:
            print(f"      {line}")
        totals["sent"] += sum(lr.sent for lr in learners)
        totals["saved"] += sum(finals)
        totals["log"] += grown
        totals["trouble"] += len(trouble)
        totals["tracebacks"] += tracebacks
        totals["tab missed"] += sum(lr.answerer.tab_missed for lr in learners if lr.answerer)
        totals["experiment lost"] += sum(lr.answerer.experiment_lost for lr in learners if lr.answerer)
        for learner in learners:
            if learner.failure:
                failures.append(f"trial {t}, {learner.name}: {learner.failure}")
        if any(rc != 0 for rc in codes):
            failures.append(f"trial {t}: exit statuses {codes}")
        if grown != sum(finals):
            failures.append(f"trial {t}: review_log grew by {grown}, the screens say {sum(finals)} saved")
        if integrity != "ok":
            failures.append(f"trial {t}: integrity_check says {integrity}")
        if trouble:
            failures.append(f"trial {t}: {len(trouble)} notice(s) of trouble")
    elapsed = time.monotonic() - started

    print()
    print(f"trials                         {trials} x {seconds:g} s, two apps each")
    print(f"grade keys sent                {totals['sent']}")
    print(f"  of them within 100 ms of a grade key in the other app: {totals['close']}")
    print(f"grades saved (screens' sum)    {totals['saved']}")
    print(f"review_log rows added          {totals['log']}")
    print(f"lock/error notices, tracebacks {totals['trouble']} ({totals['tracebacks']} traceback(s))")
    print(f"time                           {elapsed:.0f} s")
    print("seen on diagnosis cards (the proof then carried on as a learner would):")
    print(f"  tab did not move into the choice list  {totals['tab missed']}")
    print(f"  a typed experiment line went nowhere   {totals['experiment lost']}")
    for line in failures:
        print("  problem:", line)
    shutil.rmtree(tmp, ignore_errors=True)
    ok = not failures
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
