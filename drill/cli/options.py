"""What the commands' parsers share: where the learner's data lives, which decks are read, whole-number types."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from drill import paths

DATA_DIR_HELP = "where the database and drafts live (default: $DRILL_HOME or the platform's user data folder)"
DATABASE_HELP = "where the database lives"  # --data-dir of a command that reads or writes only the database
DECKS_HELP = "extra deck file or folder (repeatable); the bundled decks are always included"
JSON_HELP = "machine-readable output"


class Parser(argparse.ArgumentParser):
    """drill's parsers: an option must be written out in full. argparse would otherwise read a prefix as the
    option it begins, so `drill calc gemm --n 4096` failed as an ambiguous `--new-per-day`/`--new-order`, and
    a future option could change what a prefix someone scripted means. Sub-command parsers are of this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def add_data_dir(
    parser: argparse.ArgumentParser, help_text: str = DATA_DIR_HELP, default: Any = argparse.SUPPRESS
) -> None:
    """--data-dir. The options may come before or after a command: a command's copy leaves out its default
    (SUPPRESS), or `drill --data-dir X stats` would lose X to it."""
    parser.add_argument("--data-dir", metavar="PATH", default=default, help=help_text)


def add_decks(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """--decks, repeatable; a command's copy leaves out its default, as --data-dir's does."""
    parser.add_argument("--decks", metavar="PATH", action="append", default=default, help=DECKS_HELP)


def data_dir(args: argparse.Namespace) -> Path:
    """The data folder --data-dir names, else $DRILL_HOME or the platform's."""
    return paths.data_dir(getattr(args, "data_dir", None))


def deck_roots(args: argparse.Namespace, paths_given: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The deck files and folders to read: `paths_given` alone, else the bundled decks and every --decks."""
    if paths_given:
        return [Path(p) for p in paths_given]
    extra = getattr(args, "decks", None) or []
    return [paths.cards_dir(), *[Path(p) for p in extra]]


def whole_number(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number (got {text!r})") from None


def non_negative(text: str) -> int:
    """A whole number, 0 or more (--new-per-day, --focus-new)."""
    value = whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more (got {value})")
    return value


def positive_count(text: str) -> int:
    """A whole number, 1 or more (--weak N, mock's --questions)."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


TODAY_HELP = (
    "take this day (YYYY-MM-DD) as the study day, at any hour (the app's clock runs on from it): "
    "to see a plan from another day, or to test one"
)


def iso_day(text: str) -> dt.date:
    """A day written YYYY-MM-DD (--today, drill plan --date)."""
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a date such as 2026-12-15 (got {text!r})") from None


def add_today(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """--today; a command's copy leaves out its default, as --data-dir's does (`drill --today D stats` keeps D)."""
    parser.add_argument("--today", type=iso_day, metavar="YYYY-MM-DD", default=default, help=TODAY_HELP)
