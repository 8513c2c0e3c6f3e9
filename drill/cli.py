"""The `drill` command: the review app by default, and check, calc, stats, kernel, gpu."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Callable, Sequence

# Sub-commands that live in their own modules, each with add_parser(sub) and run(args).
_PLUGINS = ("drill.calc.cli", "drill.kernel.cli")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", metavar="PATH", help="where the database and drafts live (default: $DRILL_HOME or the platform's user data folder)")
    common.add_argument("--decks", metavar="PATH", action="append", help="extra deck file or folder (repeatable); the bundled decks are always included")

    parser = argparse.ArgumentParser(
        prog="drill",
        parents=[common],
        description="Daily practice for AI-infrastructure interviews. With no command: review today's cards.",
    )
    parser.add_argument("--new-per-day", type=int, metavar="N", help="new cards per day (saved as a setting)")
    parser.add_argument("--day-starts-at", type=int, metavar="HOUR", help="local hour the study day rolls over (saved)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}

    p = sub.add_parser("check", parents=[common], help="validate decks; exit 1 on any problem")
    p.add_argument("paths", nargs="*", metavar="PATH", help="deck files or folders (default: the bundled decks)")
    handlers["check"] = cmd_check

    p = sub.add_parser("stats", parents=[common], help="counts, due cards, weak topics")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    handlers["stats"] = cmd_stats

    for name in _PLUGINS:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            if exc.name and exc.name.startswith(name.rsplit(".", 1)[0]):
                continue
            raise
        before = set(sub.choices)
        module.add_parser(sub)
        for added in set(sub.choices) - before:
            handlers[added] = module.run
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from drill.ui.app import run_app

        return run_app(args)
    try:
        return handlers[args.command](args)
    except BrokenPipeError:
        return 0


def deck_roots(args: argparse.Namespace, paths_given: Sequence[str] = ()) -> list[Path]:
    from drill import paths

    if paths_given:
        return [Path(p) for p in paths_given]
    return [paths.cards_dir(), *[Path(p) for p in (args.decks or [])]]


def cmd_check(args: argparse.Namespace) -> int:
    from drill.cards.loader import load_decks

    decks = load_decks(deck_roots(args, args.paths), deep=True)
    for problem in decks.problems:
        print(problem)
    if decks.problems:
        print(f"{len(decks.problems)} problem(s) in {len(decks.cards)} good card(s)", file=sys.stderr)
        return 1
    print(f"ok: {len(decks.cards)} cards", file=sys.stderr)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from drill import paths
    from drill.cards.loader import load_decks
    from drill.stats import collect
    from drill.store.store import Store

    decks = load_decks(deck_roots(args))
    store = Store(paths.data_dir(args.data_dir))
    try:
        report = collect(decks.cards, store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from drill.stats import render_text

        print(render_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
