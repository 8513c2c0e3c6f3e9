import asyncio
import datetime as dt
import functools
import gc
import itertools
import os
import textwrap
import time
from pathlib import Path

import pytest

# A test process keeps most of what it makes to the end (the imports, the collected items, the apps' decks);
# the default threshold (700) had the collector walk them every few hundred allocations, about a second of
# CPU per worker. Rarer collections of the young, still all of them.
gc.set_threshold(10_000, 20, 10)


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto` (pyproject's addopts): one worker more than the cores this process may run on. Many tests wait
    on a pseudo-terminal, a child process or Textual's idle check, so the cores keep one more worker busy; two
    more finished no sooner on two cores and cost their start-up and collection (about 2 s of CPU each)."""
    return len(os.sched_getaffinity(0)) + 1


@pytest.fixture(scope="session")
def config_folders(tmp_path_factory):
    """One folder for every test's settings file (a numbered folder per test would be scanned for at each)."""
    return tmp_path_factory.mktemp("config"), itertools.count()


@pytest.fixture(autouse=True)
def no_settings_file_of_the_developer(config_folders, monkeypatch):
    """Every test sees no settings file unless it makes one: a developer's own config must not change results."""
    root, numbers = config_folders
    folder = root / str(next(numbers))
    folder.mkdir()
    monkeypatch.setenv("DRILL_CONFIG", str(folder / "config.toml"))


@pytest.fixture
def write_deck(tmp_path):
    """Write a deck file from YAML text and return its path."""

    def write(text: str, name: str = "deck.yaml") -> Path:
        path = tmp_path / "decks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


CONCEPT = """\
  - id: {id}
    kind: concept
    topic: gpu-arch
    prompt: "Question {id}?"
    answer: "Answer {id}."
    rubric: ["point one"]
    sources: ["FACTS.md"]
"""


@pytest.fixture
def concept_deck(write_deck):
    """A deck of n concept cards named c00, c01, ..."""

    def make(n: int, name: str = "concepts.yaml") -> Path:
        body = "deck: Test deck\ncards:\n" + "".join(CONCEPT.format(id=f"c{i:02d}") for i in range(n))
        return write_deck(body, name)

    return make


STRETCH_MOST = 8.0  # a wait that is still not over at eight times its idle-machine length is a failure


def stretched(seconds: float) -> float:
    """A wait on a process, a thread or the app, stretched by how busy the machine is now: with more runnable
    processes than cores, everything the test waits for takes that much longer (the last minute's load per core,
    from 1 to STRETCH_MOST). Time limits in tests are idle-machine figures passed through this."""
    busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    return seconds * min(STRETCH_MOST, max(1.0, busy))


class FixedClock:
    def __init__(self, when: dt.datetime) -> None:
        self.now = when

    def __call__(self) -> dt.datetime:
        return self.now


@functools.cache
def bundled_cards():
    """The bundled decks' cards (no deep check), loaded once per test process: modules parametrise over them."""
    from drill.cards.loader import load_decks

    return load_decks().cards


@pytest.fixture(scope="session")
def cpu_judge(tmp_path_factory):
    """A judge child as on a machine without a GPU (Triton cards run in the interpreter, collectives on gloo), one
    for the modules of the `triton-judge` xdist group and one for those of `collectives` (each group runs on one
    worker): each start imports torch and triton, seconds of CPU."""
    from drill.kernel.client import JudgeClient

    # DRILL_JUDGE_CPU: the interpreter path, even on a machine that has a GPU
    client = JudgeClient(data_dir=tmp_path_factory.mktemp("judge-data"), env={"DRILL_JUDGE_CPU": "1"})
    yield client
    client.close()


@pytest.fixture(scope="session")
def fsrs_fits() -> dict[str, list[float]]:
    """The FSRS optimizer's parameters for each review log it was given in this test process."""
    return {}


@pytest.fixture
def fsrs_fit_once(fsrs_fits, monkeypatch):
    """FSRS's optimizer runs once per review log in a test process (its training is deterministic: a fixed seed
    and CPU float64), tens of seconds each; tests that fit the same log share its parameters, while everything of
    drill's around the optimizer (the split, the held-out losses, saving, rescheduling) runs in each test."""
    from fsrs.optimizer import Optimizer

    compute = Optimizer.compute_optimal_parameters

    def once_per_log(self, verbose: bool = False) -> list[float]:
        key = repr(self._revlogs_train)
        if key not in fsrs_fits:
            fsrs_fits[key] = compute(self, verbose)
        return list(fsrs_fits[key])

    monkeypatch.setattr(Optimizer, "compute_optimal_parameters", once_per_log)


def run_folder(tmp_path_factory) -> Path:
    """The temporary folder every process of this pytest run shares: the base above the xdist workers' own ones
    (each worker's base temp is `<run base>/popen-gwN`), or the base itself in a run without workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def decks_digest(root: Path) -> str:
    """The content hash of every file under a decks folder (the decks and their data), by relative path."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def once_per_run(folder: Path, name: str, compute):
    """`compute()` done by the first process of the run that asks, under a lock on `folder/name.lock`; every
    other process (an xdist worker) waits for it and reads the same result back from `folder/name.pickle`."""
    import fcntl
    import pickle

    kept = folder / f"{name}.pickle"
    with open(folder / f"{name}.lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if kept.exists():
            return pickle.loads(kept.read_bytes())
        result = compute()
        part = kept.with_suffix(".part")
        part.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        part.replace(kept)
        return result


@pytest.fixture(scope="session")
def bundled_decks(tmp_path_factory):
    """The bundled decks with every kind's deep check, run once for the whole run: the first worker to need it
    checks them, the others read its result (kept in the run's temporary folder under the decks' content hash,
    so a result is only ever read for the very files it checked)."""
    from drill import paths
    from drill.cards.loader import load_decks

    key = decks_digest(paths.cards_dir())
    return once_per_run(run_folder(tmp_path_factory), f"bundled-deep-check-{key}", lambda: load_decks(deep=True))


def deck_subset(decks, topics):
    """The cards and problems of the deck files `cards/<topic>.yaml` for the given topics."""
    from drill.cards.loader import DeckSet

    files = {f"{t}.yaml" for t in topics}
    return DeckSet(
        cards={cid: c for cid, c in decks.cards.items() if c.path.name in files},
        problems=[p for p in decks.problems if Path(p.path).name in files],
    )


def write_kernel_deck(root: Path, *, language: str, starter: str, solution: str, writeup: str, harness: str) -> Path:
    """`root/deck.yaml` with one kernel card `mine` (at line 3) naming these files; returns the deck file."""
    import json

    deck = root / "deck.yaml"
    names = {"starter": starter, "solution": solution, "writeup": writeup, "harness": harness}
    lines = [
        "deck: Mine",
        "cards:",
        "  - id: mine",
        "    kind: kernel",
        "    topic: cuda-reduction",
        f"    language: {language}",
        *[f"    {key}: {json.dumps(value)}" for key, value in names.items()],
        "    target_pct: 70",
        "    prompt: p",
        "    answer: a",
        "    sources: [s]",
    ]
    deck.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return deck


def only_card(deck: Path, card_id: str = "mine"):
    """The card `card_id` of a deck that must load without a problem."""
    from drill.cards.loader import load_decks

    decks = load_decks([deck])
    assert decks.problems == []
    return decks.cards[card_id]


async def settle(pilot, *, steady: bool = False, pauses: int = 1) -> None:
    """Wait for the app's workers and a refresh; `steady` stops cursors blinking (for snapshots)."""
    await pilot.app.workers.wait_for_complete()
    if steady:
        for field in pilot.app.screen.query("Input, TextArea"):
            field.cursor_blink = False
    for _ in range(pauses):
        await refresh(pilot)
    # a worker the refresh started is waited for too: the review screen opens its store after the first paint,
    # and a test that reads the database right after settling found no data directory when that took a while
    for _ in range(10):
        if not any(worker.is_running for worker in pilot.app.workers):
            break
        await pilot.app.workers.wait_for_complete()
        await refresh(pilot)


async def refresh(pilot) -> None:
    """Every queued message handled, then the screen painted, then what the paint queued handled: what
    `pilot.pause()` does without its sleep of at least 20 ms until the process looks idle."""
    await handled(pilot)
    pilot.app.screen._on_timer_update()
    await handled(pilot)


async def until(pilot, condition, what: str, seconds: float = 10.0) -> None:
    """Wait for the app to get somewhere that is reached off its message queues (a worker thread, a timer,
    the judge process), checking every 20 ms; fail naming `what` after `seconds` (stretched by the load)."""
    limit = stretched(seconds)
    deadline = time.monotonic() + limit
    while True:
        await handled(pilot)  # not settle: a worker under way (a judge run) may be what is awaited
        if condition():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened in {limit:.0f} s: {what}")
        await pilot.pause(0.02)


def _parked(pump) -> bool:
    """Whether a message pump waits at the top of its loop for a message: nothing queued, nothing being handled.

    Textual 8.2 (pinned): each pump's loop awaits `_message_queue.get()`, which waits on the queue's
    `ready_event` only when the queue is empty; a pump handling a message, or still composing and mounting
    before its loop starts, has no waiter there.
    """
    if pump._closed:
        return True
    queue = pump._message_queue
    return queue.empty() and bool(queue.ready_event._waiters)


async def handled(pilot, seconds: float = 30.0) -> None:
    """Until the app, its screen and every widget on it are parked: every message queued, and every message
    that handling it queued in turn, has been handled, and no widget is still starting. Checked between turns
    of the event loop; Textual's own `press` sleeps 40 ms a key, and `Pilot._wait_for_screen` posts a callback
    through every widget's queue, a few ms a key on drill's screens."""
    app = pilot.app
    limit = stretched(seconds)
    deadline = time.monotonic() + limit
    turns = 0
    while True:
        await asyncio.sleep(0 if turns < 50 else 0.001)  # a handler waiting on a thread: stop spinning
        turns += 1
        pumps = [app, *app.screen.walk_children(with_self=True)]
        if all(_parked(pump) for pump in pumps):
            return
        if time.monotonic() > deadline:
            busy = ", ".join(repr(pump) for pump in pumps if not _parked(pump))
            raise AssertionError(f"still handling messages after {limit:.0f} s: {busy}")


async def type_keys(pilot, *keys: str) -> None:
    """Keys one at a time, as a person types them: each one handled before the next is sent.

    The events are those `pilot.press` sends (same key names and characters).
    """
    import unicodedata

    from textual import events
    from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

    app = pilot.app
    for key in keys:
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)
        original = REPLACED_KEYS.get(key, key)
        try:
            char: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
        except KeyError:
            char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)
        await handled(pilot)
    await app._animator.wait_until_complete()
    await handled(pilot)


def rows(data: Path, sql: str, params: tuple = ()) -> list:
    """The rows of a query on the data directory's database."""
    import sqlite3

    from drill.store.reader import DB_NAME

    conn = sqlite3.connect(data / DB_NAME)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def pytest_collection_modifyitems(items):
    """The pilot tests (an app each, and Textual's waits for idle) first, the quick ones after: xdist hands
    out tests in this order, so the run no longer ends on one worker still driving an app or a snapshot
    while the others have nothing left. The same order on every worker; within a module, as written."""
    import inspect

    def drives_an_app(item) -> bool:
        return inspect.iscoroutinefunction(getattr(item, "obj", None)) or "snap_compare" in item.fixturenames

    items.sort(key=lambda item: not drives_an_app(item))
