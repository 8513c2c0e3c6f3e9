"""Proof: no hostile command-line value or settings file gives a traceback.

Finds every option and argument of every `drill` command by walking the
argparse parsers (nothing is listed by hand), and gives each value-taking one
each of a list of hostile values: empty, dashes, huge and non-finite numbers,
100 KB strings and paths, paths that do not exist or are folders or devices,
escape sequences, bytes that are not UTF-8, newlines, format strings, shell
and ssh tricks, bidi overrides. Flags are given once. Then it writes hostile
settings files (every key with values of every TOML type, huge and
non-finite numbers, 100 KB strings, tables nested 5,000 deep, bytes that are
not UTF-8, NUL) and runs `drill stats`, `drill config show` and
`drill config set` against each.

Each case runs `drill.cli.main(argv)` in a child Python process, as the
`drill` console script does, with its own data directory and settings file
and no terminal; a child runs a batch of cases one after the other (starting
Python and importing drill costs more than most cases), or one case alone
with --own-process. A case whose exception escapes `main` is a traceback; one
still running after --case-timeout seconds is a hang. Commands that would
open the review app are steered off it (`stats` after a top-level option,
`--plan` beside a mock option), since the app needs a terminal.

    .venv/bin/python proof/fuzz_options.py [--quick] [--values N] [--own-process] [--workers N] [--seed N]

Exit 1 on any traceback or hang.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

LONG = "a" * 100_000
HOSTILE_VALUES: list[str] = [
    "",
    " ",
    "-",
    "--",
    "-1",
    "0",
    "1",
    "9" * 5000,
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "0x10",
    "１２",
    "-7B",
    LONG,
    "/" + "d" * 300,
    "a/" * 3000,
    "/nonexistent/folder/file.yaml",
    "../../../../../../etc/passwd",
    "/etc/passwd",
    "/dev/null",
    ".",
    "~root/x",
    "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]2;owned\x07",
    "\x1b[2J\x9b31m",
    "x\udcff",
    "\udcff" * 8,
    "a\nb\rc",
    "%s%n{0}{}",
    "'; DROP TABLE review_log; --",
    "user@host:22",
    "me@b$(id)",
    "-Fcfg",
    "ü😀\u202eevil",
    "last",
    "*",
]
# Values a positional that is not under test is given, so the case reaches the option under test.
PLAIN_POSITIONAL = "x"


@dataclass(frozen=True)
class Case:
    """One run of drill: its arguments, the settings file's bytes (None: no file), and what it tries."""

    argv: list[str]
    config: bytes | None
    what: str


# -- the cases ------------------------------------------------------------------------------------------


def _parsers() -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    """Every parser of `drill` with the words that reach it: ([], the top), (["export", "csv"], ...), ..."""
    from drill.cli import build_parser

    top, _ = build_parser(["--help"])  # --help: every command's module is imported and adds its parser
    todo: list[tuple[list[str], argparse.ArgumentParser]] = [([], top)]
    while todo:
        words, parser = todo.pop(0)
        yield words, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    todo.append(([*words, name], sub))


def _off_the_app(words: list[str], parser: argparse.ArgumentParser, action: argparse.Action) -> list[str]:
    """Words that keep a case from opening the review app, which needs a terminal."""
    if not words:
        return ["stats"]  # top-level options may come before a command
    if words == ["mock"]:
        grouped = any(action in group._group_actions for group in parser._mutually_exclusive_groups)
        return [] if grouped else ["--plan"]
    return []


def _positionals(parser: argparse.ArgumentParser, skip: argparse.Action | None) -> list[str]:
    """Plain values for the positionals a parser needs (but the one under test)."""
    out: list[str] = []
    for action in parser._actions:
        if action.option_strings or action is skip or isinstance(action, argparse._SubParsersAction):
            continue
        if action.nargs in ("?", "*"):
            continue
        count = action.nargs if isinstance(action.nargs, int) else 1
        out += [PLAIN_POSITIONAL] * count
    return out


def option_cases(values: list[str], per_option: int, rng: random.Random) -> list[Case]:
    """Each flag once; each option and argument with `per_option` of `values` (all of them for 0)."""
    cases: list[Case] = []
    for words, parser in _parsers():
        has_commands = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        for action in parser._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction, argparse._VersionAction)):
                continue
            if has_commands and words and not action.option_strings:
                continue
            name = action.option_strings[-1] if action.option_strings else action.dest.upper()
            what = " ".join(["drill", *words, name])
            if action.option_strings and action.nargs == 0:  # a flag: given once, with nothing after it
                argv = [*words, *_positionals(parser, None), action.option_strings[-1]]
                cases.append(Case([*argv, *_off_the_app(words, parser, action)], None, what))
                continue
            for value in rng.sample(values, per_option) if per_option else values:
                if action.option_strings:
                    argv = [*words, *_positionals(parser, None), f"{action.option_strings[-1]}={value}"]
                else:
                    argv = [*words, *_positionals(parser, action), "--", value]
                cases.append(Case([*argv, *_off_the_app(words, parser, action)], None, what))
    return cases


def _toml_values() -> list[str]:
    return [
        "-1",
        "0",
        str(10**30),
        "1e309",
        "nan",
        "-inf",
        "true",
        '""',
        json.dumps(LONG),
        '"\\u001b]52;c;eA==\\u0007"',
        '"x\\u202e"',
        "[1, 2]",
        "{ a = 1 }",
        "1979-05-27T07:32:00Z",
        '"ctrl+ctrl+zz"',
        '"0,1,2,3,4,5"',
        '"user@host:22"',
        '"-Fcfg@x"',
    ]


def settings_cases() -> list[Case]:
    from drill.config.settings import KEYS

    files: list[tuple[str, bytes]] = []
    for key in KEYS:
        for value in _toml_values():
            files.append((f"{key} = {value[:20]}", f"{key} = {value}\n".encode()))
    bindings = ["review.suspend", "review.nope", "app.quit", "x" * 1000, "review." + "a" * 100_000]
    for binding in bindings:
        for value in _toml_values():
            files.append((f"keys.{binding[:20]} = {value[:20]}", f'[keys]\n"{binding}" = {value}\n'.encode()))
    deep = 5000
    files += [
        ("an array nested 5,000 deep", b"theme = " + b"[" * deep + b"]" * deep + b"\n"),
        ("an inline table nested 5,000 deep", b"keys = " + b"{a=" * deep + b"1" + b"}" * deep + b"\n"),
        ("a table header 5,000 deep", b"[" + b".".join([b"a"] * deep) + b"]\nx = 1\n"),
        ("bytes that are not UTF-8", b'theme = "\xff\xfe"\n'),
        ("a NUL byte", b'theme = "no\x00rd"\n'),
        ("a 1 MB string", b'theme = "' + b"a" * 1_000_000 + b'"\n'),
        ("a 1 MB key", b"a" * 1_000_000 + b" = 1\n"),
        ("not TOML", b"=\n[[[\n"),
        ("a byte-order mark", b'\xef\xbb\xbftheme = "nord"\n'),
        ("an escape sequence in a key", b'"\x1b]2;owned\x07" = 1\n'),
        ("an empty file", b""),
    ]
    commands = [["stats"], ["config", "show"], ["config", "set", "theme", "nord"]]
    return [Case(argv, body, f"settings file: {label}") for label, body in files for argv in commands]


# -- running them ---------------------------------------------------------------------------------------

# The child: runs each case through drill.cli.main with its own data directory and settings file,
# and prints one JSON line per case.
CHILD = r"""
import io, json, os, signal, sys, tempfile, traceback
sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
from drill import cli

class Hang(BaseException):
    pass

def alarm(signum, frame):
    raise Hang()

signal.signal(signal.SIGALRM, alarm)
timeout = float(sys.argv[1])
for line in sys.stdin:
    case = json.loads(line)
    home = tempfile.mkdtemp(prefix="fuzz-case-")
    os.environ["DRILL_HOME"] = os.path.join(home, "data")
    os.environ["DRILL_CONFIG"] = config = os.path.join(home, "config.toml")
    if case["config"] is not None:
        with open(config, "wb") as fh:
            fh.write(bytes.fromhex(case["config"]))
    os.chdir(home)
    out, err = io.StringIO(), io.StringIO()
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    result = {"rc": None, "traceback": None, "hang": False}
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result["rc"] = cli.main(case["argv"])
    except SystemExit as exc:
        result["rc"] = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        result["hang"] = True
    except BaseException:
        result["traceback"] = traceback.format_exc()[-3000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = real
    text = err.getvalue()
    result["stderr"] = text[:400]
    result["longest_line"] = max((len(l) for l in (text + out.getvalue()).splitlines()), default=0)
    result["escape"] = "\x1b" in text or "\x1b" in out.getvalue()
    print(json.dumps(result), flush=True)
"""


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DRILL_HOME", "DRILL_CONFIG")}
    env["PYTHONPATH"] = str(REPO)
    env["DRILL_JUDGE_CPU"] = "1"  # a kernel case never waits for a GPU
    return env


def run_batch(cases: list[Case], case_timeout: float) -> list[dict[str, Any]]:
    """Run cases in one child; a child that dies or stalls leaves its remaining cases marked as hangs."""
    lines = "".join(
        json.dumps({"argv": c.argv, "config": None if c.config is None else c.config.hex()}) + "\n" for c in cases
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(case_timeout)],
            input=lines,
            capture_output=True,
            text=True,
            env=_child_env(),
            timeout=case_timeout * len(cases) + 60,
            errors="backslashreplace",
        )
        out, err = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = "batch timed out"
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    while len(results) < len(cases):
        results.append({"rc": None, "traceback": f"the child ended early: {err[-2000:]}", "hang": False})
    return results


def run_alone(case: Case, case_timeout: float) -> dict[str, Any]:
    """One case as `python -m drill.cli ARGS`, in a process of its own."""
    home = Path(tempfile.mkdtemp(prefix="fuzz-case-"))
    env = {**_child_env(), "DRILL_HOME": str(home / "data"), "DRILL_CONFIG": str(home / "config.toml")}
    if case.config is not None:
        (home / "config.toml").write_bytes(case.config)
    args = [os.fsencode(a) for a in case.argv]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "drill.cli", *args],
            capture_output=True,
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=case_timeout,
        )
    except subprocess.TimeoutExpired:
        return {"rc": None, "traceback": None, "hang": True}
    text = (done.stdout + done.stderr).decode(errors="replace")
    return {
        "rc": done.returncode,
        "traceback": text[-3000:] if "Traceback (most recent call last)" in text else None,
        "hang": False,
        "stderr": done.stderr.decode(errors="replace")[:400],
        "longest_line": max((len(line) for line in text.splitlines()), default=0),
        "escape": b"\x1b" in done.stdout + done.stderr,
    }


MIN_CASE_TIMEOUT = 30.0


def slowest_command_seconds() -> float:
    """Seconds a `drill check` of every bundled deck takes here and now (its deep checks draw every card's numbers):
    a hostile value given to `check` may make it do no less, so a case is called a hang only well past this."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "drill", "check"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="every option once with a few values, for CI")
    parser.add_argument("--own-process", action="store_true", help="each case in a `python -m drill.cli` of its own")
    parser.add_argument("--workers", type=int, default=max(1, min(4, (os.cpu_count() or 2))))
    parser.add_argument("--batch", type=int, default=40, help="cases per child process")
    parser.add_argument(
        "--case-timeout",
        type=float,
        default=None,
        help="seconds after which a case is a hang (default: the larger of 30 and three times a `drill check` of"
        " the bundled decks, timed here first: the slowest command a case may run, on this machine at this load)",
    )
    parser.add_argument(
        "--values", type=int, default=12, help=f"hostile values per option, drawn from {len(HOSTILE_VALUES)} (0: all)"
    )
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if args.case_timeout is None:
        args.case_timeout = max(MIN_CASE_TIMEOUT, 3 * slowest_command_seconds())
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    started = time.monotonic()

    options = option_cases(HOSTILE_VALUES, 1 if args.quick else args.values, rng)
    settings = settings_cases()
    if args.quick:
        settings = rng.sample(settings, 24)
    cases = options + settings
    rng.shuffle(cases)  # slow and quick cases spread over the workers
    print(f"fuzzing {len(options)} option case(s) and {len(settings)} settings-file case(s), seed {seed}")

    if args.own_process:
        with ThreadPoolExecutor(args.workers) as pool:
            results = list(pool.map(lambda c: run_alone(c, args.case_timeout), cases))
    else:
        batches = [cases[i : i + args.batch] for i in range(0, len(cases), args.batch)]
        with ThreadPoolExecutor(args.workers) as pool:
            results = [r for batch in pool.map(lambda b: run_batch(b, args.case_timeout), batches) for r in batch]
    elapsed = time.monotonic() - started

    tracebacks = [(c, r) for c, r in zip(cases, results) if r.get("traceback")]
    hangs = [(c, r) for c, r in zip(cases, results) if r.get("hang")]
    escapes = [(c, r) for c, r in zip(cases, results) if r.get("escape")]
    long_lines = [(c, r) for c, r in zip(cases, results) if r.get("longest_line", 0) > 2000]
    codes = Counter(r.get("rc") for r in results)
    print()
    print(f"options and arguments fuzzed      {len({c.what for c in options})}")
    print(f"cases                             {len(cases)} ({len(options)} options, {len(settings)} settings files)")
    print(f"exit codes                        {dict(sorted(codes.items(), key=lambda kv: str(kv[0])))}")
    print(f"tracebacks                        {len(tracebacks)}")
    print(f"hangs (over {args.case_timeout:g} s)               {len(hangs)}")
    print(f"ESC in the output                 {len(escapes)}")
    print(f"an output line over 2,000 chars   {len(long_lines)} (not a failure: a message that quotes too much)")
    print(f"time                              {elapsed:.0f} s")
    by_kind = Counter(_last_line(r["traceback"]) + "  <- " + c.what[:60] for c, r in tracebacks)
    for line, count in by_kind.most_common(40):
        print(f"  traceback x{count}: {line}")
    for c, _ in hangs[:10]:
        print(f"  hang: {c.what[:80]}  argv={_shown(c.argv)}")
    for c, _ in escapes[:10]:
        print(f"  ESC reached the output: {c.what[:80]}")
    ok = not tracebacks and not hangs and not escapes
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "?")[:160]


def _shown(argv: list[str]) -> str:
    return " ".join(repr(a if len(a) < 40 else a[:20] + f"...({len(a)} chars)") for a in argv)[:200]


if __name__ == "__main__":
    raise SystemExit(main())
