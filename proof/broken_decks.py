"""Proof: whatever a deck file holds, drill reports problems with file and line, and never crashes or hangs.

Generates broken decks with hypothesis (broken YAML, wrong types, huge strings,
unicode and control characters, CRLF line endings, byte-order marks, bad
UTF-8, duplicate ids, bad Jinja2 templates in parameterised cards, deep
nesting, YAML alias bombs), each mixed with cards that are valid, and checks:

- `load_decks([bundled cards, deck], deep=True)` returns, within a time and
  memory limit, without an exception;
- every problem names the file, a card id (or `-`) and a line >= 1; line 0
  only for errors about the whole file (counted and shown by kind);
- the valid cards of a deck that is still readable YAML load, and so do all
  bundled cards; a deck with a definite error has a problem naming it;
- for a sample, `drill check PATH` (a real process) exits 0 or 1 with no
  traceback, and the app starts with the deck (`DrillApp` under
  `run_test()`) and lists the deck's problems in `app.start.deck_problems`.

Each load runs in a forked child (see _decks_common.run_boxed) so a hang is a
counted failure, not a stuck proof. The bundled cards are the same in every
example, so their deep checks are computed once and reused; every generated
card is checked afresh.

    .venv/bin/python proof/broken_decks.py [--examples N] [--cli-every K] [--app-every K]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yaml  # noqa: E402
from _decks_common import BUNDLED, REPO, Tally, has_traceback, line0_kind, problem_summary, run_boxed, valid_card  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from drill.cards import kinds  # noqa: E402
from drill.cards.loader import MAX_DECK_BYTES, load_decks  # noqa: E402

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
TOPICS = ["gpu-arch", "memory-accounting", "ddp", "transformer-shapes"]
KIND_NAMES = list(kinds.KINDS)
CARD_KEYS = [
    "id",
    "kind",
    "topic",
    "prompt",
    "answer",
    "sources",
    "tags",
    "rubric",
    "given",
    "steps",
    "aliases",
    "params",
    "answers",
    "ledger",
    "evidence",
    "choices",
    "correct",
    "language",
    "starter",
    "harness",
    "target_pct",
    "promt",
]
BAD_TEMPLATES = [
    "{{ n ",
    "{% for i in n %}x{% endfor %}",
    "{{ n.__class__ }}",
    "{{ nope }}",
    "{{ n / 0 }}",
    "{{ 'a' * 10**9 }}",
    "{{ 10 ** 10 ** 10 }}",
    "{% include 'x.yaml' %}",
    "{{ n|attr('__class__') }}",
    "{{ range(10**9)|list }}",
    "{{ lipsum() }}",
    "{{ n.real.__class__ }}",
    "{% set x = 1 %}",
    "{{ self }}",
    "{{ '%9999999d'|format(n) }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ (n,) * 10**9 }}",
    "{{ n|pprint }}",
    "{{ }}",
    "{% if %}",
    "{#",
]


# --- generating decks --------------------------------------------------------------------------------


@dataclass
class Deck:
    """A generated deck: its bytes and what the proof expects of it."""

    data: bytes
    valid_ids: list[str]
    definite: bool  # at least one card-level or file-level error is certain
    file_broken: bool  # the file may no longer be readable YAML: its valid cards need not load
    parts: list[str] = field(default_factory=list)
    definite_alone: bool | None = None  # broken even checked on its own (a clash with a bundled id is not)

    def __post_init__(self) -> None:
        if self.definite_alone is None:
            self.definite_alone = self.definite


def _item(card: dict[str, Any]) -> str:
    """One card as a YAML list item under `cards:` (two spaces in)."""
    dumped = yaml.dump([card], Dumper=DUMPER, allow_unicode=True, sort_keys=False, width=1 << 30)
    return textwrap.indent(dumped, "  ")


def _base(card_id: str, kind: str = "concept") -> dict[str, Any]:
    return {"id": card_id, "kind": kind, "topic": "gpu-arch", "prompt": "p?", "answer": "a.", "sources": ["s"]}


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=30)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def wrong_types(draw: Any, n: int) -> str:
    card = _base(f"wt-{n}", draw(st.sampled_from(KIND_NAMES + ["nonsense", ""])))
    for key in draw(st.lists(st.sampled_from(CARD_KEYS), min_size=1, max_size=5, unique=True)):
        card[key] = draw(values)
    card.pop(draw(st.sampled_from(["id", "kind", "topic", "prompt", "answer", "sources"])))  # always at least one error
    return _item(card)


@st.composite
def huge_strings(draw: Any, n: int) -> str:
    size = draw(st.sampled_from([10_000, 100_000, 1_000_000]))
    char = draw(st.sampled_from(["x", "é", "𝔁", "\u200b", "{", " "]))
    key = draw(st.sampled_from(["prompt", "answer", "topic", "sources", "tags", "id"]))
    huge = '"' + char * size + '"'  # none of the characters needs escaping inside double quotes
    value = huge if draw(st.booleans()) else f"[{huge}]"
    fields = {
        "id": f"huge-{n}",
        "kind": "concept",
        "topic": "gpu-arch",
        "prompt": '"p?"',
        "answer": '"a."',
        "sources": '["s"]',
    }
    fields[key] = value
    # an empty rubric item: a definite error, whatever the huge value does
    return "  - " + "\n    ".join(f"{k}: {v}" for k, v in fields.items()) + '\n    rubric: [""]\n'


@st.composite
def unicode_card(draw: Any, n: int) -> str:
    text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=200)
    card = _base(f"uni-{n}")
    card["prompt"], card["answer"] = draw(text), draw(text)
    card["tags"] = [draw(text)]
    card["id"] = draw(
        st.sampled_from([f"uni-{n}", f"Üni-{n}", f"uni {n}", f"uni-{n}\u0301", f"../uni-{n}", f"uni/{n}", "-"])
    )
    card["topic"] = draw(st.sampled_from(["gpu-arch", "gpu-arch\u200b", "GPU-ARCH", "ｇｐｕ-arch"]))
    card["sources"] = [""]  # a definite error besides whatever the text does
    return _item(card)


@st.composite
def bad_jinja(draw: Any, n: int) -> str:
    bad = draw(st.sampled_from(BAD_TEMPLATES))
    noise = draw(st.text(alphabet="{}%#n +-*/()'\"|._ab019", max_size=40))
    template = draw(st.sampled_from([bad, bad + noise, noise + bad]))
    card = {
        "id": f"jinja-{n}",
        "kind": "memory_ledger",
        "topic": "memory-accounting",
        "params": draw(
            st.sampled_from(
                [
                    {"n": {"range": [1, 8]}},
                    {"n": {"range": [0, 10**12]}},
                    {"n": {"range": [5, 1]}},
                    {"n": {"choices": []}},
                    {"n": {"model": ["no-such-model"]}},
                    {"n": "x"},
                    {"__class__": {"range": [1, 2]}},
                ]
            )
        ),
        "prompt": "How much? {{ n }}",
        "answers": [{"label": "x", "expr": "n * 4", "unit": "bytes"}],
        "answer": "a",
        "sources": ["s"],
    }
    where = draw(st.sampled_from(["prompt", "answer", "expr", "formula"]))
    if where in ("prompt", "answer"):
        card[where] = template
    elif where == "expr":
        card["answers"][0]["expr"] = template
    else:
        card["ledger"] = [{"term": "t", "formula": template, "expr": "n", "unit": "count"}]
    if draw(st.booleans()):
        card["answers"].append({"label": "y", "expr": "nope(n)", "unit": "furlongs"})  # a definite error
    else:
        card["params"] = {"n": {"range": [5, 1]}}  # a definite error: low above high
    return _item(card)


@st.composite
def deep_nesting(draw: Any, n: int) -> str:
    depth = draw(st.one_of(st.integers(2, 200), st.integers(200, 3000)))
    opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
    key = draw(st.sampled_from(["tags", "steps", "aliases", "params", "answers", "choices", "extra"]))
    kind = {
        "steps": "shape_trace",
        "aliases": "shape_trace",
        "params": "memory_ledger",
        "answers": "memory_ledger",
        "choices": "diagnosis",
    }.get(key, "concept")
    nested = opener * depth + "x" + closer * depth
    return f"  - id: deep-{n}\n    kind: {kind}\n    topic: gpu-arch\n    prompt: p\n    answer: a\n    sources: [s]\n    {key}: {nested}\n"


def alias_bomb_text(n: int, width: int, levels: int, key: str) -> str:
    """A card whose `key` holds `levels` anchored lists, each `width` aliases of the one before."""
    kind = {
        "steps": "shape_trace",
        "aliases": "shape_trace",
        "params": "memory_ledger",
        "answers": "memory_ledger",
        "ledger": "memory_ledger",
        "choices": "diagnosis",
    }.get(key, "concept")
    rows = [f"l0: &b{n}l0 [" + ", ".join(['"lol"'] * width) + "]"]
    rows += [f"l{i}: &b{n}l{i} [" + ", ".join([f"*b{n}l{i - 1}"] * width) + "]" for i in range(1, levels)]
    if key in ("params", "aliases"):
        body = "\n".join(f"      {r}" for r in rows)
        value = f"\n{body}"
    else:
        items = [r.split(": ", 1)[1] for r in rows]
        value = " [" + ", ".join(items) + "]"
    # Every other required key is there, so nothing stops the loader before it reaches the bomb.
    extra = {
        "shape_trace": "    given: x\n" + ("" if key == "steps" else '    steps: [{label: a, shape: "(B)"}]\n'),
        "diagnosis": "    evidence: e\n    correct: lol\n",
        "memory_ledger": ("" if key == "params" else "    params: {n: {range: [1, 2]}}\n")
        + ("" if key == "answers" else '    answers: [{label: x, expr: "n", unit: count}]\n'),
    }.get(kind, "")
    return f"  - id: bomb-{n}\n    kind: {kind}\n    topic: gpu-arch\n    prompt: p\n    answer: a\n    sources: [s]\n{extra}    {key}:{value}\n"


@st.composite
def alias_bomb(draw: Any, n: int) -> str:
    key = draw(st.sampled_from(["params", "aliases", "steps", "answers", "ledger", "choices", "tags"]))
    if (
        draw(st.integers(0, 99)) == 37
    ):  # now and then the real thing: 9 levels of 9 (387 million strings); not 0, which hypothesis favours
        return alias_bomb_text(n, 9, 9, key)
    width, levels = draw(st.integers(2, 6)), draw(st.integers(1, 5))
    return alias_bomb_text(n, width, levels, key)


def duplicate_of_bundled(n: int, bundled_ids: list[str], draw: Any) -> str:
    return valid_card("concept", draw(st.sampled_from(bundled_ids)))


BROKEN = {
    "wrong_types": wrong_types,
    "huge_strings": huge_strings,
    "unicode": unicode_card,
    "bad_jinja": bad_jinja,
    "deep_nesting": deep_nesting,
    "alias_bomb": alias_bomb,
}
FILE_CHANGES = [
    "none",
    "none",
    "none",
    "none",
    "crlf",
    "bom",
    "crlf+bom",
    "syntax",
    "truncate",
    "control",
    "bad_utf8",
    "top_level",
    "tabs",
]
# Whole decks that replace the generated text, and whether each is certainly a problem.
TOP_LEVEL = [
    ("", True),
    ("- a\n- b\n", True),
    ("just text\n", True),
    ("deck: x\n", True),
    ("deck: x\ncards: 3\n", True),
    ("cards:\n  - 1\n  - [2]\n", True),
    ("deck: x\ncards: []\nextra: 1\n", True),
    ("null\n", True),
    ("---\n---\n", True),
    ("deck: [a, b]\ncards: []\n", False),
    ("cards: []\n", False),
]
SYNTAX_BREAKS = [
    "  - [unclosed\n",
    "cards: : :\n",
    "  - {a: 1\n",
    "\t- id: tab\n",
    "  - *undefined_alias\n",
    "  - &a &b x\n",
    "  - 'unterminated\n",
    "  - !!python/object/apply:os.system ['true']\n",
    "  ? [complex, key]\n  : v\n",
    "%YAML 9.9\n",
]


@st.composite
def decks(draw: Any, bundled_ids: list[str]) -> Deck:
    n_valid = draw(st.integers(0, 3))
    valid_kinds = [draw(st.sampled_from(list(kinds.KINDS.keys() - {"kernel"}))) for _ in range(n_valid)]
    valid = [(f"ok-{i}-{k.replace('_', '-')}", k) for i, k in enumerate(valid_kinds)]
    chunks: list[tuple[str, str]] = [("valid", valid_card(k, cid)) for cid, k in valid]
    names = draw(st.lists(st.sampled_from(list(BROKEN)), max_size=4))
    for i, name in enumerate(names):
        chunks.append((name, draw(BROKEN[name](i))))
    if draw(st.integers(0, 4)) == 0:
        chunks.append(("duplicate_bundled", duplicate_of_bundled(0, bundled_ids, draw)))
    order = draw(st.permutations(list(range(len(chunks)))))
    chunks = [chunks[i] for i in order]
    if valid and draw(st.integers(0, 3)) == 0:  # a second card with a valid card's id, after it
        chunks.append(("duplicate_id", valid_card("concept", valid[0][0])))
    parts = [name for name, _ in chunks]
    text = "deck: Generated\ncards:\n" + "".join(t for _, t in chunks)
    change = draw(st.sampled_from(FILE_CHANGES))
    parts.append(f"file:{change}")
    file_broken = change not in ("none", "crlf", "bom", "crlf+bom", "truncate")
    truncated = False
    if change == "syntax":
        lines = text.splitlines(keepends=True)
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from(SYNTAX_BREAKS)))
        text = "".join(lines)
    elif change == "tabs":
        text = text.replace("    ", "\t", 1)
    elif change == "top_level":
        text, top_broken = draw(st.sampled_from(TOP_LEVEL))
    data = text.encode("utf-8")
    if change in ("crlf", "crlf+bom"):
        data = data.replace(b"\n", b"\r\n")
    if change in ("bom", "crlf+bom"):
        data = "\ufeff".encode() + data
    if change == "truncate":
        cut = draw(st.integers(0, len(data)))
        truncated, file_broken = cut < len(data), cut < len(data)
        data = data[:cut]
    elif change == "control":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\x01", b"\x07", b"\x1b[31m", b"\x00", b"\x7f"])) + data[at:]
    elif change == "bad_utf8":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x85"])) + data[at:]
    if change == "tabs" and b"\t" not in data:
        file_broken = False
    if len(data) > MAX_DECK_BYTES:  # refused whole and unread, by design: its valid cards need not load
        file_broken = True
    # A cut may end the file at a card boundary and leave a valid deck; everything else broken is certain.
    definite = any(p != "valid" for p in parts[:-1]) or (file_broken and not truncated) or len(data) > MAX_DECK_BYTES
    alone = any(p not in ("valid", "duplicate_bundled") for p in parts[:-1]) or (file_broken and not truncated)
    if change == "top_level":  # the whole text was replaced: only the replacement counts
        definite = alone = top_broken
    return Deck(data, [cid for cid, _ in valid], definite, file_broken, parts, alone)


def explicit_decks() -> list[Deck]:
    """Cases every run includes, whatever hypothesis draws: the full billion laughs and deep nesting."""
    out = []
    for key in ("params", "aliases", "steps", "choices"):
        text = (
            "deck: Bomb\ncards:\n"
            + valid_card("concept", "ok-before")
            + alias_bomb_text(0, 9, 9, key)
            + valid_card("concept", "ok-after")
        )
        out.append(
            Deck(
                text.encode(),
                ["ok-before", "ok-after"],
                True,
                False,
                ["valid", "alias_bomb(9x9)", "valid", "file:none"],
            )
        )
    text = (
        "deck: Deep\ncards:\n"
        + valid_card("concept", "ok-before")
        + "  - id: deep\n    kind: concept\n    topic: gpu-arch\n    prompt: p\n    answer: a\n    sources: [s]\n    tags: "
        + "[" * 1000
        + "]" * 1000
        + "\n"
    )
    out.append(Deck(text.encode(), ["ok-before"], True, False, ["valid", "deep_nesting(1000)", "file:none"]))
    return out


# --- checking -----------------------------------------------------------------------------------------


def memoize_bundled_checks() -> None:
    """The bundled cards are identical in every example: check each once and reuse the messages."""
    original = kinds.KindSpec.check
    memo: dict[tuple[str, int, str], list[str]] = {}
    root = BUNDLED.resolve()

    def check(self: kinds.KindSpec, card: Any) -> list[str]:
        if not Path(card.path).resolve().is_relative_to(root):
            return original(self, card)
        key = (str(card.path), card.line, card.content_hash)
        if key not in memo:
            memo[key] = original(self, card)
        return list(memo[key])

    kinds.KindSpec.check = check  # type: ignore[method-assign]


def load_task(path: Path, deck: Deck, bundled_paths: set[str]):
    def task() -> dict[str, Any]:
        t0 = time.perf_counter()
        decks = load_decks([BUNDLED, path], deep=True)
        ms = (time.perf_counter() - t0) * 1000
        summary = problem_summary(decks.problems, path)
        summary["ms"] = ms
        summary["lost_valid"] = [
            i for i in deck.valid_ids if i not in decks.cards or str(decks.cards[i].path) != str(path)
        ]
        summary["bundled_loaded"] = sum(1 for c in decks.cards.values() if str(c.path) in bundled_paths)
        summary["foreign"] = [str(p)[:200] for p in decks.problems if p.path != str(path)]
        return summary

    return task


def app_task(path: Path, data_dir: Path):
    def task() -> dict[str, Any]:
        from drill.start import AppOptions
        from drill.ui.app import make_app

        expected = {str(p) for p in load_decks([BUNDLED, path]).problems if p.path == str(path)}

        async def start() -> dict[str, Any]:
            app = make_app(AppOptions(data_dir, [BUNDLED, path]))
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.app.workers.wait_for_complete()
                await pilot.pause()
                got = {str(p) for p in app.start.deck_problems}
                return {
                    "started": True,
                    "screen": type(app.screen).__name__,
                    "missing": sorted(expected - got)[:3],
                    "naming": sum(1 for p in app.start.deck_problems if p.path == str(path)),
                }

        return asyncio.run(start())

    return task


OUTPUT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<id>[^:]*): ")


def run_cli(path: Path, home: Path, timeout: float) -> dict[str, Any]:
    env = {**os.environ, "DRILL_HOME": str(home), "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "drill.cli", "check", str(path)],
            capture_output=True,
            env=env,
            timeout=timeout,
            cwd=home,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.perf_counter() - t0}
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    lines = out.splitlines()
    odd = [ln for ln in lines if not OUTPUT_LINE.match(ln)]
    return {
        "status": "ok",
        "rc": done.returncode,
        "traceback": has_traceback(out + err),
        "lines": len(lines),
        "odd_lines": odd[:3],
        "odd_count": len(odd),
        "seconds": time.perf_counter() - t0,
        "err": err[-500:],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--examples", type=int, default=1000, help="generated decks (default 1000), besides the fixed cases"
    )
    ap.add_argument("--cli-every", type=int, default=50, help="run `drill check PATH` on every K-th deck (default 50)")
    ap.add_argument("--app-every", type=int, default=100, help="start the app on every K-th deck (default 100)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds one load may take (default 10)")
    ap.add_argument("--memory-mb", type=int, default=2048, help="memory one load may add (default 2048)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="loads at once")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--keep", action="store_true", help="keep the generated decks")
    args = ap.parse_args()
    started = time.perf_counter()

    memoize_bundled_checks()
    bundled = load_decks([BUNDLED], deep=True)
    bundled_paths = {str(c.path) for c in bundled.cards.values()}
    bundled_ids = sorted(bundled.cards)
    print(
        f"bundled decks: {len(bundled.cards)} cards, {len(bundled.problems)} problem(s) (their deep checks computed once)"
    )

    root = Path(tempfile.mkdtemp(prefix="drill-broken-decks-"))
    (root / "decks").mkdir()
    generated: list[Deck] = []
    paths_: list[Path] = []

    def keep(deck: Deck) -> None:
        """Write the deck out and keep only what the checks need (huge decks would fill memory)."""
        path = root / "decks" / f"deck{len(generated):04d}.yaml"
        path.write_bytes(deck.data)
        deck.data = b""
        generated.append(deck)
        paths_.append(path)

    fixed = explicit_decks()
    for deck in fixed:
        keep(deck)

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(deck=decks(bundled_ids))
    def collect(deck: Deck) -> None:
        keep(deck)

    collect()
    kinds_seen = Tally()
    for deck in generated:
        for part in deck.parts:
            kinds_seen.add(part.split("(")[0])
    print(
        f"generated {len(generated)} decks ({len(fixed)} fixed cases + {len(generated) - len(fixed)} from hypothesis) in {time.perf_counter() - started:.1f} s"
    )
    print("  parts: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds_seen.counts.items())))

    results = run_boxed(
        [load_task(p, d, bundled_paths) for p, d in zip(paths_, generated)],
        timeout=args.timeout,
        extra_mb=args.memory_mb,
        jobs=args.jobs,
        progress="loads",
    )
    fails = Tally()
    notes = Tally()
    slowest: tuple[float, str] = (0.0, "")
    for path, deck, r in zip(paths_, generated, results):
        label = f"{path.name} [{', '.join(deck.parts)}]"
        if r.status == "timeout":
            fails.add("loads that hung (time limit)", label)
            continue
        if r.status == "crashed":
            fails.add("loads that crashed or ran out of memory", f"{label}: {r.detail}")
            continue
        if r.status == "error":
            last = r.detail.strip().splitlines()[-1]
            fails.add(f"tracebacks (uncaught exceptions) in load_decks: {last.split(':')[0]}", f"{label}: {last[:160]}")
            continue
        s = r.value
        if s["ms"] > slowest[0]:
            slowest = (s["ms"], label)
        for text in s["bad_place"]:
            fails.add("problems without file, line or card id", f"{label}: {text[:160]}")
        for message, text in s["line0"]:
            kind = line0_kind(message)
            (notes if "allowed" in kind or "has a position" in kind else fails).add(
                f"line 0: {kind}", f"{label}: {text[:160]}"
            )
        if s["lost_valid"] and not deck.file_broken:
            fails.add("valid cards that did not load", f"{label}: {s['lost_valid']}")
        if s["bundled_loaded"] != len(bundled.cards):
            fails.add("bundled cards lost", f"{label}: {s['bundled_loaded']} of {len(bundled.cards)}")
        if deck.definite and s["naming_deck"] == 0:
            fails.add("broken decks with no problem naming the file", label)
        if s["foreign"]:
            fails.add("problems naming another file", f"{label}: {s['foreign'][0]}")
        if s["longest_message"] > 10_000:
            notes.add("problem messages longer than 10,000 characters", f"{label}: {s['longest_message']:,} characters")

    cli_runs = [i for i in range(len(generated)) if args.cli_every > 0 and i % args.cli_every == 0]
    cli_seconds = []
    for i in cli_runs:
        label = f"{paths_[i].name} [{', '.join(generated[i].parts)}]"
        home = root / "cli-home" / str(i)
        home.mkdir(parents=True)
        c = run_cli(paths_[i], home, timeout=max(60.0, args.timeout * 3))
        cli_seconds.append(c["seconds"])
        if c["status"] == "timeout":
            fails.add("drill check runs that hung", label)
            continue
        if c["traceback"] or c["rc"] not in (0, 1):
            fails.add(
                "drill check runs with a traceback or an odd exit status", f"{label}: rc {c['rc']}: {c['err'][-160:]}"
            )
        if (
            generated[i].definite_alone and c["rc"] != 1
        ):  # `drill check PATH` checks PATH alone, not against the bundled ids
            fails.add("drill check runs that missed a broken deck", f"{label}: rc {c['rc']}")
        if c["odd_count"]:
            notes.add(
                "drill check output lines not in `path:line: id: message` form (a message running over lines)",
                f"{label}: {c['odd_lines'][0][:120]!r}",
                c["odd_count"],
            )

    app_idx = [i for i in range(len(generated)) if args.app_every > 0 and i % args.app_every == 0]
    app_results = run_boxed(
        [app_task(paths_[i], root / "app-home" / str(i)) for i in app_idx],
        timeout=max(30.0, args.timeout * 3),
        extra_mb=args.memory_mb,
        jobs=args.jobs,
    )
    for i, r in zip(app_idx, app_results):
        label = f"{paths_[i].name} [{', '.join(generated[i].parts)}]"
        if r.status != "ok":
            fails.add("app starts failed", f"{label}: {r.status}: {(r.detail.strip().splitlines() or [''])[-1][:160]}")
            continue
        if r.value["missing"]:
            fails.add(
                "app starts whose deck_problems lack the deck's problems", f"{label}: {r.value['missing'][0][:160]}"
            )
        elif (
            generated[i].definite
            and not generated[i].file_broken
            and r.value["naming"] == 0
            and any(
                p in generated[i].parts
                for p in ("wrong_types", "huge_strings", "unicode", "duplicate_bundled", "duplicate_id")
            )
        ):
            fails.add("app starts whose deck_problems do not name the broken file", label)

    total = time.perf_counter() - started
    tracebacks = sum(v for k, v in fails.counts.items() if k.startswith("tracebacks")) + fails.get(
        "drill check runs with a traceback or an odd exit status"
    )
    print()
    print(f"examples:                          {len(generated)}")
    print(f"tracebacks:                        {tracebacks}")
    print(
        f"loads that hung or blew up:        {fails.get('loads that hung (time limit)') + fails.get('loads that crashed or ran out of memory')} (limit {args.timeout:g} s, +{args.memory_mb} MB each)"
    )
    print(
        f"problems without file/line:        {fails.get('problems without file, line or card id') + sum(v for k, v in fails.counts.items() if k.startswith('line 0'))}"
    )
    print(f"valid cards lost:                  {fails.get('valid cards that did not load')}")
    print(f"broken decks not named:            {fails.get('broken decks with no problem naming the file')}")
    print(f"drill check runs:                  {len(cli_runs)} (slowest {max(cli_seconds, default=0):.1f} s)")
    print(f"app starts:                        {len(app_idx)}, failed {fails.get('app starts failed')}")
    print(f"slowest load that finished:        {slowest[0]:.0f} ms ({slowest[1][:100]})")
    print(f"time:                              {total:.1f} s")
    if notes.counts:
        print("\nnotes (allowed, reported as found):")
        for key, n in notes.counts.items():
            print(f"  {n:5d}  {key}")
            for sample in notes.samples.get(key, [])[:2]:
                print(f"         e.g. {sample[:220]}")
    if fails.counts:
        print("\nfailures:")
        for key, n in fails.counts.items():
            print(f"  {n:5d}  {key}")
            for sample in fails.samples.get(key, [])[:3]:
                print(f"         e.g. {sample[:220]}")
    keep = args.keep or bool(fails.counts)
    if keep:
        print(f"\ndecks kept in {root / 'decks'}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    ok = not fails.counts
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
