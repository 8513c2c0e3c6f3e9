"""The `drill` command: the review app by default, and the sub-commands listed in COMMANDS.

The package is the top layer: each sub-command's parser, help text and runner live in one module here
(check, stats, search, calc, kernel, gpu, trust, mock, exchange, config, plan, fsrs); the review app's own flags in `app`;
the options every command shares in `options`. Nothing below imports this package.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from drill.cli import app
from drill.paths import DataDirError, overlong_argument
from drill.store.errors import StoreError
from drill.words import shortened

Handler = Callable[[argparse.Namespace], int]

if TYPE_CHECKING:
    from typing import TypeAlias

    # what each sub-command's module is given to add its parser to
    Subcommands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


@dataclass(frozen=True)
class Command:
    """A sub-command: its name, the line `drill --help` lists for it, and the module that parses and runs it.

    The module has `add_parser(subparsers, name, help_text)` and `run(args) -> int`.
    """

    name: str
    help: str
    module: str
    # False for a command whose module is light to import: its full parser is always built, so that a parser
    # built without the command line (tests, scripts) still parses it
    lazy: bool = True


# In the order `drill --help` lists them. A lazy command's module is imported only when the command is on
# the command line (or for --help); otherwise it gets a placeholder with the same name and help, so
# `drill stats` does not pay for importing every calculator.
COMMANDS = (
    Command("check", "validate decks; exit 1 on any problem", "drill.cli.check", lazy=False),
    Command("stats", "counts, due cards, weak topics", "drill.cli.stats", lazy=False),
    Command("search", "find cards by words and filters, ranked as the browser ranks them", "drill.cli.search"),
    Command("calc", "calculators behind the numeric cards", "drill.cli.calc"),
    Command("kernel", "judge kernel cards without the app", "drill.cli.kernel"),
    Command("gpu", "this machine's GPU as the kernel judge sees it", "drill.cli.gpu"),
    Command("trust", "let kernel cards from a deck folder run its Python", "drill.cli.trust"),
    Command("mock", "a timed mock interview: plan, list, report (no option: sit one)", "drill.cli.mock"),
    Command("export", "cards to Anki (.apkg) or CSV; the review log to CSV", "drill.cli.exchange"),
    Command("import", "a review log from CSV (importing twice adds nothing)", "drill.cli.exchange"),
    Command("config", "the settings file: path, show, set KEY VALUE", "drill.cli.config"),
    Command("plan", "the interview date: readiness on it and the daily plan that gets there", "drill.cli.plan"),
    Command("fsrs", "fit the memory model to your record (fit), or back to its defaults (reset)", "drill.cli.fsrs"),
)

HELP_WORDS = {"-h", "--help"}


def build_parser(argv: Sequence[str] | None = None) -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The `drill` parser, with the full parser of each command named in `argv` (of every one for --help)."""
    words = set(sys.argv[1:] if argv is None else argv)
    parser = app.top_parser()
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers: dict[str, Handler] = {}
    for command in COMMANDS:
        if command.lazy and command.name not in words and not words & HELP_WORDS:
            subparsers.add_parser(command.name, help=command.help, add_help=False)
            continue
        module = importlib.import_module(command.module)
        module.add_parser(subparsers, command.name, command.help)
        handlers[command.name] = module.run
    return parser, handlers


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
    given = list(sys.argv[1:] if argv is None else argv)
    if not given:  # the daily start: the review app, every option at its default
        return _run(app.no_arguments(), {})
    own_process = argv is None  # run as `drill`, not called from Python
    given = attach_negative_values(given)
    parser, handlers = build_parser(given)
    # argparse (3.11) drops a `--` given as a value and hands the option or argument a list
    for token in given:
        if re.fullmatch(r"--[\w-]+=--", token):
            parser.error(f"argument {token[:-3]}: expected a value, not --")
    if given.count("--") > 1:
        parser.error("-- given twice: a value that is -- itself cannot be told apart (for a file, write ./--)")
    args = parser.parse_args(given)
    # before any command opens one: the system's refusal was a traceback (`config` checks each value itself)
    if args.command != "config":
        overlong = overlong_argument(given)
        if overlong:
            print(f"drill: {overlong}", file=sys.stderr)
            return 2
    app.check_combinations(parser, args)
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


def _run(args: argparse.Namespace, handlers: dict[str, Handler]) -> int:
    """Run the command (the review app when none), each expected failure as one line on stderr."""
    from drill.config.settings import ConfigError, config_path, load_settings

    try:
        if args.command != "config":  # `drill config` stays open to show and mend a bad file
            args.settings = load_settings(config_path(getattr(args, "data_dir", None)))
        if args.command is None:
            return app.run(args)
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
