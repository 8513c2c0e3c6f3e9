"""Proof: a hostile deck cannot run code, read files or write outside the data directory.

Writes a folder of hostile decks to a temporary directory:

- Jinja2 sandbox escapes in prompts, answers, `expr` and `formula` of
  parameterised cards;
- YAML Python tags (`!!python/object/apply:os.system [...]` and friends);
- path traversal, absolute paths and links in every file a kernel card
  names, and `../` in card ids;
- absurd parameter ranges and choice lists;
- kernel cards whose own harness (or Triton starter) would create a canary
  file when imported, and a trusted harness with compiled Python slipped in
  beside it afterwards.

Then runs `drill check`, `drill kernel run ID` for every kernel card,
`drill kernel list`, `drill stats --decks ...`, and starts the app with the
decks (and once per parameterised card, showing that card, pressing
nothing), all with a temporary data directory. It asserts that no canary
file exists anywhere it could land, that nothing changed outside the data
directories, that the judge never started, and that no traceback appeared.

    .venv/bin/python proof/hostile_decks.py [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import inspect
import json
import os
import py_compile
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yaml  # noqa: E402
from _decks_common import BUNDLED, REPO, has_traceback, run_boxed  # noqa: E402

from drill import paths  # noqa: E402

TOKEN = secrets.token_hex(4)
CANARY = f"DRILL_CANARY_{TOKEN}"
CLI_TIMEOUT = 180.0
SLOW_CHECK_TIMEOUT = 60.0
LEAKS = (
    "<class '",
    "<function ",
    "<module '",
    "<built-in",
    "<bound method",
    "TemplateReference",
    "<Context ",
    "Popen",
    "/etc/passwd:",
    "root:x:0:0",
)


@dataclass
class Outcome:
    attack: str
    channel: str
    outcome: str
    ok: bool


# --- the hostile decks --------------------------------------------------------------------------------


def template_attacks(canary: Path) -> list[tuple[str, str]]:
    """(name, template) pairs; each would run `touch canary`, read a file or reach Python internals if it got out."""
    touch = f"touch {canary}"
    return [
        ("mro subclasses", "{{ ''.__class__.__mro__[1].__subclasses__() }}"),
        ("cycler globals os.system", f"{{{{ cycler.__init__.__globals__.os.system('{touch}') }}}}"),
        ("joiner globals os.popen", f"{{{{ joiner.__init__.__globals__['os'].popen('{touch}').read() }}}}"),
        ("namespace globals", f"{{{{ namespace.__init__.__globals__.os.system('{touch}') }}}}"),
        ("lipsum globals", f"{{{{ lipsum.__globals__['os'].system('{touch}') }}}}"),
        ("self template reference context", "{{ self._TemplateReference__context }}"),
        ("self context", "{{ self.__init__.__globals__ }}"),
        ("config / request globals", f"{{{{ config.__class__.__init__.__globals__['os'].system('{touch}') }}}}"),
        ("calculator function globals", f"{{{{ params.__globals__['os'].system('{touch}') }}}}"),
        ("calculator function code", "{{ params.__code__.co_consts }}"),
        ("attr filter", "{{ n|attr('__class__')|attr('__mro__') }}"),
        ("escaped underscores", "{{ n['\\x5f\\x5fclass\\x5f\\x5f'] }}"),
        ("built item name", "{{ n[('_' * 2) ~ 'class' ~ ('_' * 2)] }}"),
        ("format method", "{{ '{0.__class__}'.format(n) }}"),
        ("printf of internals", "{{ '%s'|format(n.__class__) }}"),
        ("for loop over subclasses", "{% for c in [].__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}"),
        (
            "catch_warnings builtins",
            f"{{% for c in ().__class__.__base__.__subclasses__() %}}{{% if c.__name__ == 'catch_warnings' %}}{{{{ c()._module.__builtins__['__import__']('os').system('{touch}') }}}}{{% endif %}}{{% endfor %}}",
        ),
        ("include a file", "{% include '/etc/passwd' %}"),
        ("import a module", "{% import 'os' as os %}{{ os.system('true') }}"),
        ("extends a file", "{% extends '/etc/passwd' %}"),
        ("set and macro", "{% set x = n.__class__ %}{% macro m() %}{{ x }}{% endmacro %}{{ m() }}"),
        ("dict method call", "{{ {'a': 1}.items() }}"),
        ("string method call", "{{ 'abc'.upper() }}"),
        ("huge power", "{{ 9 ** (9 ** 9) }}"),
        ("huge string", "{{ 'x' * 10 ** 12 }}"),
        ("huge printf width", "{{ '%999999999d'|format(n) }}"),
        ("range global", "{{ range(10 ** 12)|list|length }}"),
        ("recursion through nesting", "{{ " + "(" * 5000 + "n" + ")" * 5000 + " }}"),
    ]


EXPR_ATTACKS = [
    ("expr: function globals", "params.__globals__['os'].system('true')"),
    ("expr: mro subclasses", "''.__class__.__mro__[1].__subclasses__()|length"),
    ("expr: builtins via cycler", "cycler.__init__.__globals__.__builtins__.__import__('os').getpid()"),
    ("expr: huge power", "n ** (10 ** 12)"),
    ("expr: lambda-like call", "(n).__class__(7)"),
]

YAML_TAG_ATTACKS = [
    ("!!python/object/apply:os.system", '!!python/object/apply:os.system ["touch {canary}"]'),
    ("!!python/object/new:subprocess.Popen", '!!python/object/new:subprocess.Popen [["touch", "{canary}"]]'),
    ("!!python/name:os.system", "!!python/name:os.system"),
    ("!!python/module:os", "!!python/module:os"),
    ("full tag python/object/apply", '!<tag:yaml.org,2002:python/object/apply:os.system> ["touch {canary}"]'),
    ("!!python/object:drill.cards.model.Card", "!!python/object:drill.cards.model.Card {{id: x}}"),
    ("unknown local tag", "!evil {{a: 1}}"),
]


def ledger_card(
    card_id: str,
    *,
    prompt: str = "Bytes of {{ n }} floats?",
    answer: str = "{{ n * 4 }}",
    expr: str = "n * 4",
    formula: str | None = None,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    card: dict[str, Any] = {
        "id": card_id,
        "kind": "memory_ledger",
        "topic": "memory-accounting",
        "params": params if params is not None else {"n": {"range": [1, 8]}},
        "prompt": prompt,
        "answers": [{"label": "bytes", "expr": expr, "unit": "bytes"}],
        "answer": answer,
        "sources": ["hostile"],
    }
    if formula is not None:
        card["ledger"] = [{"term": "t", "formula": formula, "expr": "n", "unit": "count"}]
    return card


def kernel_card(card_id: str, **files: Any) -> dict[str, Any]:
    card = {
        "id": card_id,
        "kind": "kernel",
        "topic": "cuda-reduction",
        "language": "cuda",
        "starter": "evil.cu",
        "solution": "evil.cu",
        "writeup": "evil.md",
        "harness": "evil_harness.py",
        "target_pct": 70,
        "prompt": "Make it fast.",
        "answer": "a",
        "sources": ["hostile"],
    }
    card.update(files)
    return card


def write_deck(path: Path, title: str, cards: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        yaml.safe_dump({"deck": title, "cards": cards}, allow_unicode=True, sort_keys=False, width=1 << 20),
        encoding="utf-8",
    )


def evil_python(canary: Path, body: str) -> str:
    return f"import pathlib\npathlib.Path({str(canary)!r}).touch()  # proof canary: must never run\n" + body


def build(root: Path) -> dict[str, Any]:
    """Write every hostile deck; returns what the checks need."""
    decks, outside, cwd = root / "decks", root / "outside", root / "cwd"
    for d in (decks, outside, cwd):
        d.mkdir(parents=True)
    canary = root / "cwd" / CANARY  # absolute paths in the attacks; relative ones would land in cwd too
    info: dict[str, Any] = {"decks": decks, "cwd": cwd, "canary": canary, "cards": {}, "raw": {}}

    # templates
    cards = []
    for i, (name, tpl) in enumerate(template_attacks(canary)):
        for where in ("prompt", "answer", "formula"):
            cid = f"tpl-{i:02d}-{where}"
            kwargs = {where: tpl} if where != "formula" else {"formula": tpl}
            cards.append(ledger_card(cid, **kwargs))
            info["cards"][cid] = ("template", f"{name} in {where}")
            info["raw"][cid] = tpl
    for i, (name, expr) in enumerate(EXPR_ATTACKS):
        cid = f"expr-{i:02d}"
        cards.append(ledger_card(cid, expr=expr))
        info["cards"][cid] = ("template", name)
        info["raw"][cid] = expr
    # a concept card's prompt is Markdown, never a template: the text must simply show
    cards.append(
        {
            "id": "concept-jinja",
            "kind": "concept",
            "topic": "gpu-arch",
            "prompt": "{{ cycler.__init__.__globals__.os.system('true') }}",
            "answer": "{{ self }}",
            "sources": ["hostile"],
        }
    )
    info["cards"]["concept-jinja"] = ("template", "Jinja in a concept card (plain text)")
    info["raw"]["concept-jinja"] = cards[-1]["prompt"] + cards[-1]["answer"]
    write_deck(decks / "templates.yaml", "Hostile templates", cards)

    # absurd parameters
    ranges = [
        ("range 0..10^12", {"n": {"range": [0, 10**12]}}, "n * 4"),
        ("range -10^15..10^15", {"n": {"range": [-(10**15), 10**15]}}, "n * 4"),
        ("range beyond 10^15", {"n": {"range": [0, 10**18]}}, "n * 4"),
        ("range of 300 digits", {"n": {"range": [0, 10**300]}}, "n * 4"),
        ("step 10^15", {"n": {"range": [0, 10**15], "step": 10**15}}, "n + 1"),
        ("n ** n with n up to 10^12", {"n": {"range": [2, 10**12]}}, "n ** n"),
        ("float choices inf and nan", {"n": {"choices": [float("inf"), float("nan"), 1e308]}}, "n * 4"),
    ]
    cards = []
    for i, (name, params, expr) in enumerate(ranges):
        cid = f"range-{i:02d}"
        first = next(iter(params))
        cards.append(ledger_card(cid, params=params, expr=expr, prompt=f"How much for {{{{ {first} }}}}?", answer="a"))
        info["cards"][cid] = ("range", name)
    write_deck(decks / "ranges.yaml", "Absurd ranges", cards)
    # decks whose deep check may take long: each checked on its own, with a time limit
    slow = root / "decks-slow"
    write_deck(
        slow / "choices.yaml",
        "A long choice list",
        [ledger_card("choices-20000", params={"n": {"choices": list(range(1, 20001))}})],
    )
    many = {f"p{i}": {"choices": list(range(1, 51))} for i in range(300)}
    write_deck(
        slow / "params.yaml",
        "Many parameters",
        [ledger_card("params-300", params=many, expr="p0 * 4", prompt="How much for {{ p0 }}?", answer="a")],
    )
    info["slow"] = [
        ("20,000 choices for one parameter", slow / "choices.yaml"),
        ("300 parameters of 50 choices each", slow / "params.yaml"),
    ]

    # YAML tags: each in its own file, since one bad tag stops the whole file
    for i, (name, tag) in enumerate(YAML_TAG_ATTACKS):
        text = (
            f"deck: Tag {i}\ncards:\n  - id: tag-{i:02d}\n    kind: concept\n    topic: gpu-arch\n"
            f"    prompt: {tag.format(canary=canary)}\n    answer: a\n    sources: [s]\n"
        )
        (decks / f"tag{i:02d}.yaml").write_text(text, encoding="utf-8")
        info["cards"][f"tag-{i:02d}"] = ("yaml", name)
    (decks / "tag-top.yaml").write_text(f'!!python/object/apply:os.system ["touch {canary}"]\n', encoding="utf-8")
    info["cards"]["tag-top"] = ("yaml", "!!python/object/apply at the top of a deck")

    # card ids
    ids = ["../evil", "..", "evil/../../x", "./x", "..\\evil", "/etc/passwd", "evil\x00", "ｅｖｉｌ"]
    cards = [
        {"id": cid, "kind": "concept", "topic": "gpu-arch", "prompt": "p", "answer": "a", "sources": ["s"]}
        for cid in ids
    ]
    write_deck(decks / "ids.yaml", "Hostile ids", cards)
    for cid in ids:
        info["cards"][f"id:{cid!r}"] = ("id", f"card id {cid!r}")

    # kernels: their own Python, links, traversal
    (decks / "kernels" / "harness").mkdir(parents=True)
    (decks / "answers").mkdir()
    reduce_harness = (paths.kernels_dir() / "harness" / "reduce_harness.py").read_text()
    (decks / "kernels" / "harness" / "evil_harness.py").write_text(evil_python(canary, reduce_harness))
    (decks / "kernels" / "harness" / "softmax_harness.py").write_text(
        evil_python(canary, (paths.kernels_dir() / "harness" / "softmax_harness.py").read_text())
    )
    (outside / "evil_harness.py").write_text(evil_python(canary, reduce_harness))
    (outside / "secret.txt").write_text("a secret beside the decks\n")
    os.symlink(outside / "evil_harness.py", decks / "kernels" / "harness" / "link_harness.py")
    shutil.copy(paths.kernels_dir() / "reduce.cu", decks / "kernels" / "evil.cu")
    (decks / "kernels" / "evil_starter.py").write_text(
        evil_python(canary, (paths.kernels_dir() / "softmax.py").read_text())
    )
    shutil.copy(paths.answers_dir() / "reduce.cu", decks / "answers" / "evil.cu")
    (decks / "answers" / "evil.md").write_text("# notes\n")
    kernel = [
        ("evil", {}, "its own harness, which would touch the canary"),
        (
            "evil-starter",
            {
                "language": "triton",
                "starter": "evil_starter.py",
                "solution": "softmax.py",
                "writeup": "softmax.md",
                "harness": "rmsnorm_harness.py",
                "topic": "triton-softmax",
            },
            "its own Triton starter (imported when there is no draft), which would touch the canary",
        ),
        (
            "evil-shadow",
            {
                "language": "triton",
                "starter": "softmax.py",
                "solution": "softmax.py",
                "writeup": "softmax.md",
                "harness": "softmax_harness.py",
                "topic": "triton-softmax",
            },
            "a harness named like a bundled one (the deck's copy would touch the canary)",
        ),
        ("evil-link", {"harness": "link_harness.py"}, "a harness that is a link to a file outside the deck"),
        ("evil-up", {"harness": "../../outside/evil_harness.py"}, "harness ../../outside/evil_harness.py"),
        ("evil-abs", {"harness": str(outside / "evil_harness.py")}, "an absolute harness path"),
        ("evil-pyc-name", {"harness": "evil_harness.pyc"}, "a compiled harness (.pyc)"),
        (
            "evil-starter-up",
            {"starter": "../../outside/secret.txt"},
            "starter ../../outside/secret.txt (read into the editor)",
        ),
        ("evil-solution-abs", {"solution": "/etc/passwd"}, "solution /etc/passwd (shown as the reference)"),
        ("evil-writeup-up", {"writeup": "../" * 12 + "etc/passwd"}, "writeup ../../…/etc/passwd (shown after the run)"),
    ]
    write_deck(decks / "kernels.yaml", "Hostile kernels", [kernel_card(cid, **files) for cid, files, _ in kernel])
    info["kernel"] = [(cid, why) for cid, _, why in kernel]

    # a trusted folder whose harness is then shadowed by compiled Python
    calm = root / "decks-pyc"
    (calm / "kernels" / "harness").mkdir(parents=True)
    (calm / "answers").mkdir()
    (calm / "kernels" / "harness" / "calm_harness.py").write_text(reduce_harness)
    shutil.copy(paths.kernels_dir() / "reduce.cu", calm / "kernels" / "evil.cu")
    shutil.copy(paths.answers_dir() / "reduce.cu", calm / "answers" / "evil.cu")
    (calm / "answers" / "evil.md").write_text("# notes\n")
    write_deck(calm / "deck.yaml", "Calm", [kernel_card("calm", harness="calm_harness.py")])
    info["calm"] = calm
    return info


def slip_in_compiled_python(calm: Path, canary: Path) -> Path:
    """A hash-based .pyc that Python would load in place of the harness source the learner read."""
    harness = calm / "kernels" / "harness" / "calm_harness.py"
    evil = calm.parent / "evil_source.py"
    evil.write_text(evil_python(canary, harness.read_text()))
    cfile = Path(importlib.util.cache_from_source(str(harness)))
    py_compile.compile(
        str(evil), cfile=str(cfile), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True
    )
    evil.unlink()
    return cfile


# --- watching ------------------------------------------------------------------------------------


def snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple[int, int, str]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not any((here / d) == s for s in skip)]
        for name in dirnames + filenames:
            p = here / name
            st = p.lstat()
            digest = ""
            if p.is_file() and not p.is_symlink() and st.st_size <= 64 << 20:
                digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
            out[str(p.relative_to(root))] = (
                st.st_size if not p.is_dir() else 0,
                st.st_mtime_ns if not p.is_dir() else 0,
                digest,
            )
    return out


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changed = [f"changed {k}" for k in before.keys() & after.keys() if before[k] != after[k]]
    return sorted(
        changed
        + [f"new {k}" for k in after.keys() - before.keys()]
        + [f"gone {k}" for k in before.keys() - after.keys()]
    )


def find_canaries(places: list[tuple[Path, int]]) -> list[str]:
    found = []
    for top, depth in places:
        base = len(top.parts)
        for dirpath, dirnames, filenames in os.walk(top, onerror=lambda e: None):
            if len(Path(dirpath).parts) - base >= depth:
                dirnames[:] = []
            found += [str(Path(dirpath) / f) for f in filenames + dirnames if f.startswith("DRILL_CANARY_")]
    return sorted(set(found))


# --- running drill -------------------------------------------------------------------------------


def drill(args: list[str], env: dict[str, str], cwd: Path, timeout: float = CLI_TIMEOUT) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "drill.cli", *args],
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            cwd=cwd,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"rc": None, "out": "", "err": "", "seconds": time.perf_counter() - t0, "timeout": True}
    return {
        "rc": done.returncode,
        "out": done.stdout,
        "err": done.stderr,
        "seconds": time.perf_counter() - t0,
        "timeout": False,
    }


def app_task(data_root: Path, roots: list[Path], card_ids: list[str]):
    """Start the app with the decks, then once per card showing that card; press nothing."""

    def task() -> dict[str, Any]:
        from drill.start import AppOptions
        from drill.ui.app import DrillApp, make_app
        from drill.ui.markdown_view import MarkdownView

        per_card = "card_id" in inspect.signature(DrillApp.__init__).parameters
        out: dict[str, Any] = {"per_card": per_card, "cards": {}}

        async def start(data_dir: Path, card_id: str | None) -> dict[str, Any]:
            kwargs = {"card_id": card_id} if card_id else {}
            app = make_app(AppOptions(data_dir, roots, **kwargs))
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.app.workers.wait_for_complete()
                await pilot.pause()
                try:
                    shown = app.screen.query_one("#prompt", MarkdownView).source
                except Exception as exc:  # noqa: BLE001 - the layout is not the point here
                    shown = f"(no prompt view: {type(exc).__name__})"
                notes = [str(n.message)[:300] for n in getattr(app, "_notifications", [])]
                try:
                    from textual.widgets import Static

                    verdict = str(app.screen.query_one("#verdict", Static).render())
                except Exception:  # noqa: BLE001 - the layout is not the point here
                    verdict = ""
                return {
                    "problems": [str(p)[:300] for p in app.start.deck_problems],
                    "shown": shown[:4000],
                    "notes": notes,
                    "screen": type(app.screen).__name__,
                    "verdict": verdict[:300],
                }

        out["start"] = asyncio.run(start(data_root / "app", None))
        if per_card:
            for cid in card_ids:
                try:
                    out["cards"][cid] = asyncio.run(start(data_root / "app", cid))
                except Exception as exc:  # noqa: BLE001 - reported per card
                    out["cards"][cid] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        else:  # the app cannot open one card on request: render each card's form as the review screen does
            import random

            from drill.cards.loader import load_decks
            from drill.cards.templating import TemplateProblem, draw_params, render

            cards = load_decks(roots).cards
            for cid in card_ids:
                try:
                    rendered = render(cards[cid], draw_params(cards[cid], random.Random(1)))
                    out["cards"][cid] = {"shown": rendered.prompt[:4000] + rendered.answer[:2000], "notes": []}
                except TemplateProblem as exc:
                    out["cards"][cid] = {"shown": "", "notes": [str(exc)[:300]]}
        return out

    return task


def _sandbox() -> tuple[Any, Any]:
    """The card sandbox and the switch that says which functions a run may call."""
    try:
        from drill.cards.sandbox import CALLABLE_NOW, ENV
    except ImportError:  # before the templates were split into modules
        from drill.cards.templating import _CALLABLE_NOW as CALLABLE_NOW  # type: ignore[attr-defined, no-redef]
        from drill.cards.templating import ENV
    return ENV, CALLABLE_NOW


def sandbox_alone(attacks: list[tuple[str, str]]) -> list[tuple[str, str, bool]]:
    """The second fence by itself: each template compiled and rendered in the sandbox with the allow-list skipped.

    Any exception is a refusal (the product turns each into a card problem);
    output that shows Python internals, or anything that is not an exception
    (SystemExit...), is a way out.
    """
    from drill.calc.expressions import NAMES

    env, callable_now = _sandbox()
    names = {**NAMES, "n": 3}
    results = []
    for name, tpl in attacks:
        token = callable_now.set(tuple(v for v in names.values() if callable(v)))
        try:
            text = env.from_string(tpl).render(dict(names))
            leaked = [mark for mark in LEAKS if mark in text and mark not in tpl]
            results.append((name, f"rendered {text[:70]!r}", not leaked))
        except Exception as exc:  # noqa: BLE001 - every exception is the sandbox saying no
            results.append((name, f"refused: {type(exc).__name__}: {str(exc)[:80]}", True))
        except BaseException as exc:  # noqa: BLE001 - SystemExit and the like got past it
            results.append((name, f"got out: {type(exc).__name__}", False))
        finally:
            callable_now.reset(token)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="open only the prompt-template cards one by one, and give the long choice list 20 s",
    )
    args = ap.parse_args()
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="drill-hostile-"))
    info = build(root)
    decks, cwd, canary, calm = info["decks"], info["cwd"], info["canary"], info["calm"]
    data, tmp = root / "data", root / "tmp"
    tmp.mkdir()
    env = {**os.environ, "DRILL_HOME": str(data), "DRILL_JUDGE_CPU": "1", "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    skip = (data, tmp, root / "app-data")
    outcomes: list[Outcome] = []
    tracebacks: list[str] = []

    def note(attack: str, channel: str, outcome: str, ok: bool) -> None:
        outcomes.append(Outcome(attack, channel, outcome, ok))

    def run(argv: list[str], timeout: float = CLI_TIMEOUT) -> dict[str, Any]:
        r = drill(argv, env, cwd, timeout)
        if has_traceback(r["out"] + r["err"]):
            tracebacks.append(f"drill {' '.join(argv)}: {(r['out'] + r['err']).strip().splitlines()[-1][:200]}")
        return r

    print(f"hostile decks in {root} (canary name {CANARY})")
    s0 = snapshot(root, skip)
    r = run(["trust", str(calm)])
    s1 = snapshot(root, skip)
    note(
        "trusted folder, then compiled Python slipped in",
        "drill trust decks-pyc (before)",
        f"exit {r['rc']}",
        r["rc"] == 0 and not diff(s0, s1),
    )
    slip_in_compiled_python(calm, canary)
    before = snapshot(root, skip)

    # drill check on the hostile folder
    r = run(["check", str(decks)])
    problems: dict[str, list[str]] = {}
    for line in r["out"].splitlines():
        parts = line.split(": ", 2)
        if len(parts) == 3:
            problems.setdefault(parts[1], []).append(parts[2])
            problems.setdefault(Path(parts[0].rsplit(":", 1)[0]).name, []).append(parts[2])
    print(
        f"drill check {decks.name}/: exit {r['rc']}, {len(r['out'].splitlines())} problem line(s), {r['seconds']:.1f} s"
    )
    note(
        "every hostile deck",
        "drill check",
        f"exit {r['rc']} in {r['seconds']:.1f} s",
        r["rc"] == 1 and not r["timeout"] and r["seconds"] < SLOW_CHECK_TIMEOUT,
    )
    for key, (group, name) in info["cards"].items():
        if group == "id":
            continue  # counted together below
        msgs = problems.get("tag-top.yaml" if key == "tag-top" else key, [])
        if key == "concept-jinja":
            note(name, "drill check", "plain text, no problem" if not msgs else msgs[0][:100], True)
        elif group == "range":
            note(name, "drill check", msgs[0][:110] if msgs else "no problem (bounded)", True)
        else:
            note(name, "drill check", msgs[0][:110] if msgs else "NOT REPORTED", bool(msgs))
    ids_reported = sum(1 for m in problems.get("ids.yaml", []) if "id must be" in m)
    note("8 hostile card ids", "drill check", f"{ids_reported} rejected as ids", ids_reported == 8)

    limit = 20.0 if args.quick else SLOW_CHECK_TIMEOUT
    for name, path in info["slow"]:
        r = run(["check", str(path)], timeout=limit)
        slow_ok = not r["timeout"]
        note(
            name,
            f"drill check decks-slow/{path.name}",
            f"exit {r['rc']} in {r['seconds']:.1f} s"
            if slow_ok
            else f"did not finish in {limit:g} s (drill check hangs)",
            slow_ok,
        )

    # the judge
    for cid, why in info["kernel"]:
        if (
            cid == "evil-shadow"
        ):  # the bundled files win and the deck's copy is never used; running it would judge bundled code
            r2 = run(["kernel", "list", "--json", "--decks", str(decks)])
            rows = {row["id"]: row for row in json.loads(r2["out"] or "[]")}
            row = rows.get(cid, {})
            ok = row.get("locked") is None and str(row.get("starter", "")).startswith(str(paths.kernels_dir()))
            note(why, "drill kernel list", "bundled files used, deck copy ignored" if ok else f"unexpected: {row}", ok)
            continue
        r = run(["kernel", "run", cid, "--decks", str(decks)])
        first = (r["err"].strip().splitlines() or [""])[-1].replace("drill kernel run: ", "")
        note(why, f"drill kernel run {cid}", f"exit {r['rc']}: {first[:120]}", r["rc"] == 2)
    r = run(["kernel", "run", "calm", "--decks", str(calm)])
    first = (r["err"].strip().splitlines() or [""])[-1].replace("drill kernel run: ", "")
    note(
        "trusted folder, then compiled Python slipped in",
        "drill kernel run calm",
        f"exit {r['rc']}: {first[:120]}",
        r["rc"] == 2,
    )
    r = run(["trust", str(calm)])
    note(
        "trusted folder, then compiled Python slipped in",
        "drill trust decks-pyc (after)",
        f"exit {r['rc']}: {(r['err'].strip().splitlines() or [''])[-1][:110]}",
        r["rc"] == 1,
    )
    r = run(["kernel", "list", "--decks", str(decks)])
    locked = sum(1 for line in r["out"].splitlines() if "(locked" in line)
    note(
        "kernel cards of the hostile deck",
        "drill kernel list",
        f"exit {r['rc']}, {locked} shown locked",
        r["rc"] == 0 and locked == len(info["kernel"]) - 1,
    )

    # stats
    r = run(["stats", "--decks", str(decks)])
    note("every hostile deck", "drill stats --decks", f"exit {r['rc']} in {r['seconds']:.1f} s", r["rc"] == 0)
    r = run(["stats", "--json", "--decks", str(decks), "--decks", str(info["slow"][0][1].parent)])
    note(
        "every hostile deck and the slow ones",
        "drill stats --json --decks",
        f"exit {r['rc']} in {r['seconds']:.1f} s",
        r["rc"] == 0,
    )

    # the app
    ledger_ids = [k for k, (g, _) in info["cards"].items() if g in ("template", "range") and k != "concept-jinja"] + [
        "concept-jinja",
        "evil",
        "evil-writeup-up",
    ]
    if args.quick:
        ledger_ids = [k for k in ledger_ids if not k.endswith(("-answer", "-formula"))]
    [app] = run_boxed([app_task(root / "app-data", [BUNDLED, decks], ledger_ids)], timeout=600, extra_mb=4096)
    if app.status != "ok":
        note(
            "every hostile deck",
            "app start",
            f"{app.status}: {(app.detail.strip().splitlines() or [''])[-1][:160]}",
            False,
        )
        if app.status == "error":
            tracebacks.append("app: " + app.detail.strip().splitlines()[-1][:200])
    else:
        start = app.value["start"]
        names = sum(1 for p in start["problems"] if str(decks) in p)
        note(
            "every hostile deck",
            "app start",
            f"started ({start['screen']}), {names} deck problem(s) listed",
            start["screen"] != "" and names > 0,
        )
        channel = (
            "app, one card shown" if app.value["per_card"] else "card form rendered (the app cannot open one card)"
        )
        leaks, errors, shown_cards = [], [], 0
        for cid, res in app.value["cards"].items():
            if "error" in res:
                errors.append(f"{cid}: {res['error']}")
                continue
            shown_cards += 1
            text = res.get("shown", "") + " ".join(res.get("notes", []))
            raw = info["raw"].get(cid, "")
            for mark in LEAKS:
                if mark in text and mark not in raw:  # the card's own text, shown unrendered, is no leak
                    leaks.append(f"{cid}: shows {mark!r}")
        note(
            "every parameterised hostile card, and the kernel ones",
            channel,
            f"{shown_cards} shown, {len(errors)} failed, {len(leaks)} leaked internals or files",
            not errors and not leaks,
        )
        for cid in ("evil", "evil-writeup-up"):
            res = app.value["cards"].get(cid, {})
            if res.get("verdict"):
                print(f"  app shows {cid}: {res['verdict'][:160]}")
        for e in errors[:5]:
            print(f"  app error: {e}")
        for e in leaks[:5]:
            print(f"  leak: {e}")

    # the sandbox alone
    alone = sandbox_alone(template_attacks(canary) + [(n, "{{ " + e + " }}") for n, e in EXPR_ATTACKS])
    refused = sum(1 for _, text, _ in alone if text.startswith("refused"))
    note(
        f"{len(alone)} template attacks, allow-list skipped",
        "the Jinja2 sandbox alone",
        f"{refused} refused, {len(alone) - refused} rendered harmlessly, {sum(1 for *_, ok in alone if not ok)} got out",
        all(ok for *_, ok in alone),
    )
    for name, text, ok in alone:
        if not ok or not text.startswith("refused"):
            print(f"  sandbox alone: {name}: {text}")

    # what must not have happened
    after = snapshot(root, skip)
    changed = diff(before, after)
    judges = sorted(p.name for p in tmp.glob("drill-judge-*"))
    canaries = find_canaries(
        [(root, 12), (Path.cwd(), 1), (REPO, 1), (Path("/tmp"), 3), (Path(tempfile.gettempdir()), 2)]
    )
    note(
        "all of the above",
        "files outside the data directory",
        "unchanged" if not changed else f"{len(changed)} changed: {changed[:4]}",
        not changed,
    )
    note("all of the above", "judge processes started", "none" if not judges else ", ".join(judges[:3]), not judges)
    note(
        "all of the above",
        f"canary files ({CANARY})",
        "none" if not canaries else ", ".join(canaries[:3]),
        not canaries,
    )
    note("all of the above", "tracebacks", "none" if not tracebacks else tracebacks[0][:160], not tracebacks)
    width = max(len(o.attack) for o in outcomes)
    chan = max(len(o.channel) for o in outcomes)
    print()
    for o in outcomes:
        print(f"{'ok  ' if o.ok else 'FAIL'}  {o.attack:<{width}}  {o.channel:<{chan}}  {o.outcome}")
    failed = [o for o in outcomes if not o.ok]
    print()
    print(
        f"attacks checked: {len(outcomes)}, failed: {len(failed)}, canaries: {len(canaries)}, files changed outside the data directory: {len(changed)}, "
        f"judge starts: {len(judges)}, tracebacks: {len(tracebacks)}"
    )
    print(f"time: {time.perf_counter() - started:.1f} s")
    if args.keep or failed:
        print(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    print("PASS" if not failed else "FAIL")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
