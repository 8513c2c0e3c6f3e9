"""The `drill` command: the review app by default, and check, calc, stats, kernel, gpu."""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from drill.paths import DataDirError, overlong_argument, shortened
from drill.store.errors import StoreError

# Sub-commands that live in their own modules, each with add_parser(sub) and run(args).
# A module is imported only when its command is on the command line (or for --help);
# the others get a placeholder with the same name and help, so `drill stats` does not
# pay for importing every calculator.
_PLUGINS: dict[str, dict[str, str]] = {
    "drill.calc.cli": {"calc": "calculators behind the numeric cards"},
    "drill.kernel.cli": {
        "kernel": "judge kernel cards without the app",
        "gpu": "this machine's GPU as the kernel judge sees it",
        "trust": "let kernel cards from a deck folder run its Python",
    },
    "drill.mock.cli": {"mock": "a timed mock interview: plan, list, report (no option: sit one)"},
    "drill.exchange.cli": {
        "export": "cards to Anki (.apkg) or CSV; the review log to CSV",
        "import": "a review log from CSV (importing twice adds nothing)",
    },
    "drill.config.cli": {"config": "the settings file: path, show, set KEY VALUE"},
}


def non_negative(text: str) -> int:
    """--new-per-day: a whole number, 0 or more."""
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (got {value})")
    return value


def gpu_host(text: str) -> str:
    """--gpu-host: user@host, an ssh alias, either with :port; never something ssh would read as an option."""
    from drill.hosts import BadHost, parse_host, shown

    try:
        parse_host(text)
    except BadHost as exc:
        raise argparse.ArgumentTypeError(f"{exc} (got {shown(text)})") from None
    return text.strip()


def positive_count(text: str) -> int:
    """--weak N: a whole number, 1 or more."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


def hour_of_day(text: str) -> int:
    """--day-starts-at: a local hour, 0 to 23."""
    value = _whole_number(text)
    if not 0 <= value <= 23:
        raise argparse.ArgumentTypeError(f"must be an hour from 0 to 23 (got {value})")
    return value


def new_card_order(text: str) -> str:
    """--new-order: one of the session's new-card orders."""
    from drill.session import NEW_ORDERS

    value = text.strip().lower()
    if value not in NEW_ORDERS:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(NEW_ORDERS)} (got {text!r})")
    return value


def _whole_number(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None


def build_parser(
    argv: Sequence[str] | None = None,
) -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    from drill.session import DEFAULT_FOCUS_NEW, NEW_ORDERS

    def shared(default: object) -> argparse.ArgumentParser:
        common = argparse.ArgumentParser(add_help=False)
        common.add_argument(
            "--data-dir",
            metavar="PATH",
            default=default,
            help="where the database and drafts live (default: $DRILL_HOME or the platform's user data folder)",
        )
        common.add_argument(
            "--decks",
            metavar="PATH",
            action="append",
            default=default,
            help="extra deck file or folder (repeatable); the bundled decks are always included",
        )
        return common

    # The options may come before or after a command. A command's copy must leave
    # out its defaults, or `drill --data-dir X stats` would lose X to the default.
    common = shared(argparse.SUPPRESS)
    parser = argparse.ArgumentParser(
        prog="drill",
        parents=[shared(None)],
        description="Daily practice for AI-infrastructure interviews. With no command: review today's cards.",
    )
    from drill import __version__

    parser.add_argument("--version", action="version", version=f"drill {__version__}")
    parser.add_argument("--new-per-day", type=non_negative, metavar="N", help="new cards per day (saved as a setting)")
    parser.add_argument(
        "--day-starts-at", type=hour_of_day, metavar="HOUR", help="local hour the study day rolls over, 0-23 (saved)"
    )
    parser.add_argument(
        "--new-order",
        type=new_card_order,
        metavar="|".join(NEW_ORDERS),
        help="which new cards come first: lab (the labs' topics in turn, the default), "
        "random (a fresh draw each study day) or deck (deck by deck) (saved)",
    )
    parser.add_argument(
        "--card",
        metavar="ID",
        help="open one card now, e.g. to preview a card you are writing; counts as a review unless --cram",
    )
    parser.add_argument(
        "--gpu-host",
        type=gpu_host,
        metavar="USER@HOST",
        help="judge kernel cards on this host over SSH (drill with its kernels extra installed there)",
    )
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        action="append",
        help="practise only this topic (repeatable; see `drill stats` for the topic ids)",
    )
    parser.add_argument(
        "--weak",
        type=positive_count,
        nargs="?",
        const=3,
        metavar="N",
        help="practise the N weakest topics (default 3; `drill stats` shows the weakness score)",
    )
    parser.add_argument(
        "--focus-new",
        type=non_negative,
        metavar="N",
        help=f"with --topic/--weak: introduce up to N new cards of those topics a day, even once the day's "
        f"new cards are done (default {DEFAULT_FOCUS_NEW})",
    )
    parser.add_argument(
        "--cram",
        action="store_true",
        help="review without changing the schedule: with --topic/--weak every card of those topics, "
        "hardest first; logged as cram and left out of retention",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}

    p = sub.add_parser("check", parents=[common], help="validate decks; exit 1 on any problem")
    p.add_argument("paths", nargs="*", metavar="PATH", help="deck files or folders (default: the bundled decks)")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on warnings too (a diagnosis card whose right choice stands out by its length or wording)",
    )
    handlers["check"] = cmd_check

    p = sub.add_parser("stats", parents=[common], help="counts, due cards, weak topics")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    handlers["stats"] = cmd_stats

    words = set(sys.argv[1:] if argv is None else argv)
    everything = bool(words & {"-h", "--help"})
    for name, commands in _PLUGINS.items():
        if not everything and not words & set(commands):
            for command, help_text in commands.items():
                sub.add_parser(command, help=help_text, add_help=False)
            continue
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


def no_arguments() -> argparse.Namespace:
    """What build_parser's parser makes of a bare `drill`, without building it (a test holds the two equal)."""
    defaults: dict[str, Any] = dict.fromkeys(
        (
            "data_dir",
            "decks",
            "new_per_day",
            "day_starts_at",
            "new_order",
            "card",
            "gpu_host",
            "topic",
            "weak",
            "focus_new",
        )
    )
    return argparse.Namespace(**defaults, cram=False, command=None)


def attach_negative_values(argv: list[str]) -> list[str]:
    """`--params -7B` as `--params=-7B`: argparse takes a value such as -7B for an option and says the flag
    lacks its argument; attached, the value reaches its check, which can say what is wrong with it."""
    out: list[str] = []
    for token in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and re.match(r"-\.?\d", token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from drill.textsafe import shown_output

    with shown_output():  # a control character in a card, a path or a kernel's output reaches no terminal
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    if not (sys.argv[1:] if argv is None else argv):  # the daily start: the review app, every option at its default
        return _run(no_arguments(), {})
    own_process = argv is None  # run as `drill`, not called from Python
    argv = attach_negative_values(list(sys.argv[1:] if argv is None else argv))
    parser, handlers = build_parser(argv)
    # argparse (3.11) drops a `--` given as a value and hands the option or argument a list
    for token in argv:
        if re.fullmatch(r"--[\w-]+=--", token):
            parser.error(f"argument {token[:-3]}: expected a value, not --")
    if argv.count("--") > 1:
        parser.error("-- given twice: a value that is -- itself cannot be told apart (for a file, write ./--)")
    args = parser.parse_args(argv)
    # before any command opens one: the system's refusal was a traceback (`config` checks each value itself)
    overlong = overlong_argument(argv) if args.command != "config" else None
    if overlong:
        print(f"drill: {overlong}", file=sys.stderr)
        return 2
    if args.command is not None and args.command != "mock":
        given = [
            f
            for f, v in (("--card", args.card), ("--cram", args.cram), ("--topic", args.topic), ("--weak", args.weak))
            if v
        ]
        if given:
            parser.error(f"{given[0]} opens the review app; leave out the command {args.command!r}")
    if args.card is not None and (args.topic or args.weak):
        parser.error("--card opens one card; leave out --topic and --weak")
    if args.focus_new is not None and not (args.topic or args.weak):
        parser.error("--focus-new goes with --topic or --weak (the new cards of the topics practised)")
    code = _run(args, handlers)
    if own_process and args.command == "kernel" and getattr(args, "kernel_command", None) == "run":
        # `drill kernel run` as its own process: the verdict is printed and the attempt committed, so skip the
        # interpreter's teardown of everything imported (about 0.1 s of a cold verdict)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (BrokenPipeError, OSError):  # a reader that closed early (| head) does not want the rest
                pass
        os._exit(code)
    return code


def _run(args: argparse.Namespace, handlers: dict[str, Callable[[argparse.Namespace], int]]) -> int:
    from drill.config.settings import ConfigError, load_settings

    try:
        if args.command != "config":  # `drill config` stays open to show and mend a bad file
            args.settings = load_settings()
        if args.command is None:
            import gc

            # A start makes many objects that live as long as the app, and little garbage: the collector
            # waits until the first card is painted (DrillApp turns it back on), then skips those objects.
            gc.disable()
            from drill.ui.app import run_app

            return run_app(args)
        return handlers[args.command](args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except (StoreError, DataDirError) as exc:  # a damaged, locked, read-only or too-new database; an unusable folder
        print(f"drill: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:  # the settings file: which file, which key, what is wrong
        print(f"drill: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        # a path under MAX_PATH_BYTES whose one folder or file name is longer than the system allows
        print(f"drill: {shortened(str(exc.filename))}: a name in this path is too long for the system", file=sys.stderr)
        return 2


def deck_roots(args: argparse.Namespace, paths_given: Sequence[str] = ()) -> list[Path]:
    from drill import paths

    if paths_given:
        return [Path(p) for p in paths_given]
    return [paths.cards_dir(), *[Path(p) for p in (args.decks or [])]]


def cmd_check(args: argparse.Namespace) -> int:
    from drill.cards.loader import load_decks

    decks = load_decks(deck_roots(args, args.paths), deep=True)
    decks.problems.extend(_bundled_clashes(decks.cards) if args.paths else [])
    for problem in decks.problems:
        print(problem)
    for warning in decks.warnings:
        print(warning)
    if decks.problems:
        print(f"{len(decks.problems)} problem(s) in {len(decks.cards)} good card(s)", file=sys.stderr)
        return 1
    if decks.warnings and args.strict:
        print(f"{len(decks.warnings)} warning(s) in {len(decks.cards)} cards (--strict)", file=sys.stderr)
        return 1
    warned = f", {len(decks.warnings)} warning(s)" if decks.warnings else ""
    print(f"ok: {len(decks.cards)} cards{warned}", file=sys.stderr)
    return 0


def _bundled_clashes(cards: dict[str, Any]) -> list[Any]:
    """Ids of the checked decks that a bundled card has too: the app always loads the bundled decks beside them."""
    from drill import paths
    from drill.cards.loader import load_decks
    from drill.cards.model import Problem

    bundled = load_decks([paths.cards_dir()]).cards
    return [
        Problem(
            str(card.path), card.line, card.id, f"duplicate id: a bundled card has it too ({other.path}:{other.line})"
        )
        for card in cards.values()
        if (other := bundled.get(card.id)) is not None and Path(other.path).resolve() != Path(card.path).resolve()
    ]


def cmd_stats(args: argparse.Namespace) -> int:
    from drill import paths
    from drill.cards.loader import load_decks_cached
    from drill.config.settings import load_settings
    from drill.progress import ensure_schema
    from drill.stats import collect

    settings = getattr(args, "settings", None) or load_settings()

    def chosen(key: str) -> Any:
        """A flag given before `stats`, else the settings file's value; None leaves it to the saved setting."""
        flag = getattr(args, key, None)
        return flag if flag is not None else settings.from_file(key)

    data_dir = paths.data_dir(args.data_dir)
    ensure_schema(data_dir)  # an older file: the Store migrates it once
    # The database is read in a thread while the decks load (SQLite lets go of the GIL as it reads).
    from concurrent.futures import ThreadPoolExecutor

    from drill.stats import read_for_report

    with ThreadPoolExecutor(max_workers=1) as pool:
        rows = pool.submit(read_for_report, data_dir, chosen("day_starts_at"))
        decks = load_decks_cached(deck_roots(args), data_dir)
        read = rows.result()
    if decks.problems:
        print(f"drill stats: {decks.left_out()}", file=sys.stderr)
    # Flags given before `stats` (drill --day-starts-at 0 stats) shape this report
    # only; otherwise the settings file, then the settings the review app saved.
    report = collect(
        decks.cards,
        data_dir,
        rollover_hour=chosen("day_starts_at"),
        new_per_day=chosen("new_per_day"),
        new_order=chosen("new_order"),
        read=read,
    )
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from drill.stats import render_text

        print(render_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
