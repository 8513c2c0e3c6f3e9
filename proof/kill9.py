"""Proof: killing drill with SIGKILL at any moment never loses a grade the screen confirmed.

One data directory serves every trial, so each start opens a database whose
last writer was killed, possibly in the middle of a write. A trial starts the
real app in a pseudo-terminal and works through today's cards as a learner
does: a sentence typed into a concept card, shapes such as (B, S, D) into a
shape trace, quantities such as 2.5 GiB into a memory ledger, a choice and a
one-line experiment on a diagnosis card, then a grade digit. Kernel cards are
buried (their space key opens an editor). After each grade the proof reads
"N saved" from the top line.

Then the drill process itself gets SIGKILL, at one of four kinds of moment,
taken in turn:

  startup      while it starts (decks loading, the database opening or migrating)
  mid-typing   after a random number of keys since the first card
  after grade  0-30 ms after a grade key, while that grade is being written
  random       a timer at a random delay, wherever the learner happens to be

After each kill the three database files are copied aside and the copy is
checked (so the next start still meets the file exactly as the kill left it):
PRAGMA integrity_check must say ok, and review_log must hold at least every
grade the screen confirmed so far. A grade key sent but not yet confirmed on
screen may or may not be there; those are counted apart. A start that fails to
paint a card, shows a database error, or ends on its own counts as a failure to
open; a "Traceback" anywhere in the app's output counts as a traceback.

A last clean run opens the directory once more, grades one card, quits with
ctrl+q and must exit 0.

    .venv/bin/python proof/kill9.py [--trials 50] [--quick] [--seed N]
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
from collections import Counter
from pathlib import Path

from _screen import CTRL_Q, Answerer, App, AppGone, drill_command

FLAGS = ("--new-per-day", "400", "--new-order", "random")
MODES = ("startup", "mid-typing", "after grade", "random")
DB = "drill.sqlite3"


class Killed(Exception):
    """The proof killed the app at the chosen moment."""


def check_copy(data: Path) -> tuple[str, int | None]:
    """integrity_check and the review_log count of a copy of the database as the kill left it."""
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in ("", "-wal", "-shm"):
            src = data / (DB + suffix)
            if src.exists():
                shutil.copy2(src, Path(tmp) / (DB + suffix))
        if not (Path(tmp) / DB).exists():
            return "ok (no database yet)", 0
        try:
            conn = sqlite3.connect(Path(tmp) / DB)
            try:
                verdict = "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check").fetchall())
                try:
                    count = conn.execute("SELECT count(*) FROM review_log").fetchone()[0]
                except sqlite3.OperationalError as exc:
                    if "no such table" in str(exc):
                        return verdict, 0  # killed before the tables were made
                    raise
            finally:
                conn.close()
        except sqlite3.Error as exc:
            return f"cannot open: {exc}", None
    return verdict, count


class Trial:
    def __init__(self, app: App, rng: random.Random, mode: str, quick: bool = False) -> None:
        self.app = app
        self.rng = rng
        self.mode = mode
        self.killed = False
        self.sent = 0  # grade keys sent
        self.saved_seen = 0  # the highest "N saved" read from the screen
        self.keys = 0
        self.kill_at_key = rng.randint(1, 60 if quick else 300) if mode == "mid-typing" else None
        self.kill_after_grade = rng.randint(1, 2 if quick else 6) if mode == "after grade" else None
        self.random_delay = rng.uniform(0.2, 3.0 if quick else 10.0)
        self.note = ""
        self.timer: threading.Timer | None = None
        self.answerer: Answerer | None = None
        self.painted = False  # the first card (or the end-of-day screen) was painted

    def kill(self, why: str) -> None:
        if not self.killed:
            self.killed = True
            self.note = why
            self.app.kill9()

    def before_key(self, what: str) -> None:
        self.keys += 1
        if self.kill_at_key is not None and self.keys >= self.kill_at_key:
            self.kill(f"mid-typing, before key {self.keys} ({what})")
            raise Killed

    def read_saved(self) -> int:
        top = self.app.top()
        if top is not None:
            self.saved_seen = max(self.saved_seen, top.saved)
        return self.saved_seen

    def run(self) -> None:
        app, rng = self.app, self.rng
        if self.mode == "startup":
            time.sleep(rng.uniform(0.05, 3.5))
            self.kill("startup")
            return
        first = app.wait_card(timeout=60)
        self.painted = True
        if first is None:
            self.kill("all cards done")
            return
        if self.mode == "random":
            self.timer = threading.Timer(self.random_delay, self.kill, args=("random moment",))
            self.timer.start()
        answerer = self.answerer = Answerer(app, rng)
        answerer.before_key = self.before_key  # type: ignore[method-assign]
        while True:
            top = app.wait_card(timeout=30)
            if top is None:
                self.kill("all cards done")
                return
            self.read_saved()
            if not answerer.answer(top.kind):
                left = top.left
                answerer.set_aside()
                app.wait_for(lambda: app.left() != left, 10)
                continue
            grade = rng.choices(range(6), weights=(1, 2, 3, 3, 3, 2))[0]
            before = self.saved_seen
            answerer.key(str(grade), "grade")
            self.sent += 1
            if self.kill_after_grade is not None and self.sent >= self.kill_after_grade:
                time.sleep(rng.uniform(0.0, 0.03))
                self.kill("right after a grade key")
                return
            app.wait_for(lambda: self.read_saved() > before, 15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="a few trials, for CI")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the data directory and print where it is")
    args = parser.parse_args()
    trials = 6 if args.quick else args.trials
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="drill-kill9-"))
    data = tmp / "data"
    started = time.monotonic()

    modes: Counter[str] = Counter()
    kills = confirmed_total = present = absent = 0
    integrity_failures = open_failures = tracebacks = ended_alone = unexplained = 0
    lost_max = tab_missed = experiment_lost = stalls = 0
    log_count = 0
    problems: list[str] = []
    order: list[str] = []

    print(f"kill -9 proof: {trials} trials on one data directory, seed {seed}")
    for t in range(1, trials + 1):
        if not order:
            order = list(MODES)
            rng.shuffle(order)
        mode = order.pop()
        modes[mode] += 1
        app = App(drill_command(data, *FLAGS), cols=100, rows=40)
        trial = Trial(app, rng, mode, quick=args.quick)
        failed_open = None
        try:
            trial.run()
        except Killed:
            pass
        except AppGone as exc:
            if not trial.killed:
                ended_alone += 1
                failed_open = f"the app ended on its own: {exc}"
        except TimeoutError:
            if not trial.killed:
                screen = "\n      ".join(line.rstrip() for line in app.lines() if line.strip())
                if trial.painted:
                    stalls += 1
                    problems.append(f"trial {t}: the proof waited in vain on this screen:\n      {screen}")
                else:
                    failed_open = f"no card painted within 60 s; screen:\n      {screen}"
        if trial.timer is not None:
            trial.timer.cancel()
        if not trial.killed:
            trial.kill("after a stall")
        app.wait_exit(10)
        app.close()
        kills += 1
        trial.read_saved()  # the last frame painted before the kill
        screen_trouble = app.trouble()
        if any("Traceback" in line for line in screen_trouble):
            tracebacks += 1
        if any("Traceback" not in line for line in screen_trouble) and failed_open is None:
            failed_open = "; ".join(screen_trouble)
        if failed_open:
            open_failures += 1
            problems.append(f"trial {t}: {failed_open}")

        if trial.answerer:
            tab_missed += trial.answerer.tab_missed
            experiment_lost += trial.answerer.experiment_lost
        confirmed = trial.saved_seen
        unconfirmed = max(0, trial.sent - confirmed)
        if confirmed > trial.sent:
            problems.append(f"trial {t}: the screen showed {confirmed} saved for {trial.sent} grade keys")
        confirmed_total += confirmed
        verdict, count = check_copy(data)
        if verdict not in ("ok", "ok (no database yet)"):
            integrity_failures += 1
            problems.append(f"trial {t}: integrity_check says {verdict}")
        if count is not None:
            delta = count - log_count
            log_count = count
            here = min(max(0, delta - confirmed), unconfirmed)
            present += here
            absent += unconfirmed - here
            if delta > confirmed + unconfirmed:
                unexplained += delta - confirmed - unconfirmed
                problems.append(f"trial {t}: {delta - confirmed - unconfirmed} log row(s) no grade key explains")
            lost_max = max(lost_max, confirmed_total - count)
            if count < confirmed_total:
                problems.append(f"trial {t}: review_log holds {count}, the screens confirmed {confirmed_total}")
        print(
            f"  trial {t:3d}: {mode:<11} killed {trial.note or '-':<40} sent {trial.sent}  confirmed {confirmed}"
            f"  log {count}  integrity {verdict}",
            flush=True,
        )

    # one clean run on the same directory: it opens, grades, and quits with status 0
    final = App(drill_command(data, *FLAGS), cols=100, rows=40)
    final_note = ""
    final_rc = None
    try:
        top = final.wait_card(timeout=60)
        answerer = Answerer(final, rng)
        graded = 0
        while top is not None and graded < 1:
            if answerer.answer(top.kind):
                before = top.saved
                answerer.key("4", "grade")
                final.wait_for(lambda: final.saved() > before, 15)
                graded += 1
                confirmed_total += 1
            else:
                left = top.left
                answerer.set_aside()
                final.wait_for(lambda: final.left() != left, 10)
            top = final.wait_card(timeout=30)
        final.settle(0.2)
        final.send(CTRL_Q)
        final_rc = final.wait_exit(20)
        final_note = f"opened, graded {graded}, quit with ctrl+q: exit status {final_rc}"
    except (AppGone, TimeoutError) as exc:
        final_note = f"FAILED: {exc}; screen: {' / '.join(final.text().splitlines()[:3])}"
    finally:
        final.close()
    if "Traceback" in final.output_text():
        tracebacks += 1
    if final_rc != 0:
        open_failures += 1
        problems.append(f"final run: {final_note}")
    conn = sqlite3.connect(data / DB)
    final_integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    final_count = conn.execute("SELECT count(*) FROM review_log").fetchone()[0]
    conn.close()
    if final_integrity != "ok":
        integrity_failures += 1
    lost = max(lost_max, confirmed_total - final_count)
    elapsed = time.monotonic() - started

    print()
    print(f"trials                                {trials}")
    print(f"kills (SIGKILL to the drill process)  {kills}  ({', '.join(f'{m} {modes[m]}' for m in MODES)})")
    print(f"grades confirmed on screen            {confirmed_total}")
    print(f"grades in review_log                  {final_count}")
    print(f"unconfirmed grades, present           {present}")
    print(f"unconfirmed grades, absent            {absent}")
    print(f"log rows no grade explains            {unexplained}")
    print(f"lost confirmed grades                 {lost}")
    print(f"integrity failures                    {integrity_failures}")
    print(f"failures to open on restart           {open_failures}")
    print(f"tracebacks seen on screen or stderr   {tracebacks}")
    print(f"apps that ended on their own          {ended_alone}")
    print(f"screens that stopped responding       {stalls}")
    print(f"final run                             {final_note}")
    print("seen on diagnosis cards (the proof then carried on as a learner would):")
    print(f"  tab did not move into the choice list        {tab_missed}")
    print(f"  a typed experiment line went nowhere         {experiment_lost}")
    print(f"time                                  {elapsed:.0f} s")
    for line in problems:
        print("  problem:", line)
    ok = not (lost or integrity_failures or open_failures or tracebacks or ended_alone or unexplained or stalls)
    ok = ok and final_rc == 0
    if args.keep:
        print(f"data directory kept: {data}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
