"""`drill` with no command: the review app's flags, the rules between them, and opening the app."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from drill.cli import options

# The app's modules are imported when it opens: another command needs none of them.
if TYPE_CHECKING:
    from drill.start import AppOptions, MockAsked

# --weak with no N practises this many of the weakest topics
WEAKEST_TOPICS = 3

# The flags that open the review app: given with a command, they are a mistake (but `mock` opens the app too).
APP_ONLY_FLAGS = (("--card", "card"), ("--cram", "cram"), ("--topic", "topic"), ("--weak", "weak"))


def gpu_host(text: str) -> str:
    """--gpu-host: user@host, an ssh alias, either with :port; never something ssh would read as an option."""
    from drill.hosts import BadHost, parse_host
    from drill.words import shortened

    try:
        parse_host(text)
    except BadHost as exc:
        raise argparse.ArgumentTypeError(f"{exc} (got {shortened(text)})") from None
    return text.strip()


def hour_of_day(text: str) -> int:
    """--day-starts-at: a local hour, 0 to 23."""
    value = options.whole_number(text)
    if not 0 <= value <= 23:
        raise argparse.ArgumentTypeError(f"must be an hour from 0 to 23 (got {value})")
    return value


def new_card_order(text: str) -> str:
    """--new-order: one of the session's new-card orders."""
    from drill.study.session import NEW_ORDERS

    value = text.strip().lower()
    if value not in NEW_ORDERS:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(NEW_ORDERS)} (got {text!r})")
    return value


def top_parser() -> argparse.ArgumentParser:
    """The `drill` parser with the review app's flags, before the sub-commands are added."""
    from drill import __version__
    from drill.study.session import DEFAULT_FOCUS_NEW, NEW_ORDERS

    parser = options.Parser(
        prog="drill",
        description="Daily practice for AI-infrastructure interviews. With no command: review today's cards.",
    )
    options.add_data_dir(parser, default=None)
    options.add_decks(parser, default=None)
    parser.add_argument("--version", action="version", version=f"drill {__version__}")
    parser.add_argument(
        "--new-per-day", type=options.non_negative, metavar="N", help="new cards per day (saved as a setting)"
    )
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
        type=options.positive_count,
        nargs="?",
        const=WEAKEST_TOPICS,
        metavar="N",
        help=f"practise the N weakest topics (default {WEAKEST_TOPICS}; `drill stats` shows the weakness score)",
    )
    parser.add_argument(
        "--focus-new",
        type=options.non_negative,
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
    options.add_today(parser, default=None)
    return parser


def no_arguments() -> argparse.Namespace:
    """What the `drill` parser makes of a bare `drill`, without building it (a test holds the two equal)."""
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
            "today",
        )
    )
    return argparse.Namespace(**defaults, cram=False, command=None)


def check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Stop with argparse's one-line error on flags that cannot go together."""
    if args.command is not None and args.command != "mock":
        given = [flag for flag, key in APP_ONLY_FLAGS if getattr(args, key)]
        if given:
            parser.error(f"{given[0]} opens the review app; leave out the command {args.command!r}")
    if args.card is not None and (args.topic or args.weak):
        parser.error("--card opens one card; leave out --topic and --weak")
    if args.focus_new is not None and not (args.topic or args.weak):
        parser.error("--focus-new goes with --topic or --weak (the new cards of the topics practised)")


def app_options(args: argparse.Namespace, *, mock: MockAsked | None = None) -> AppOptions:
    """The review app's options from parsed arguments (the settings file as `_run` read it, else read now)."""
    from drill.config.settings import load_settings
    from drill.start import AppOptions

    settings = getattr(args, "settings", None)
    return AppOptions(
        data_dir=options.data_dir(args),
        deck_roots=options.deck_roots(args),
        settings=settings if settings is not None else load_settings(),
        chosen_day=getattr(args, "today", None),  # the app's clock is moved to that study day
        new_per_day=getattr(args, "new_per_day", None),
        day_starts_at=getattr(args, "day_starts_at", None),
        new_order=getattr(args, "new_order", None),
        card_id=getattr(args, "card", None),
        cram=bool(getattr(args, "cram", False)),
        topics=tuple(getattr(args, "topic", None) or ()),
        weak=getattr(args, "weak", None),
        focus_new=getattr(args, "focus_new", None),
        gpu_host=getattr(args, "gpu_host", None),
        mock=mock,
    )


def run(args: argparse.Namespace, *, mock: MockAsked | None = None) -> int:
    """Open the review app (`args.settings` already read); `mock`: with the mock setup open (`drill mock`)."""
    import gc

    # A start makes many objects that live as long as the app (the modules, the decks, the screen), and little
    # garbage: the collector waits until the first card is painted (DrillApp turns it back on), then skips those
    # objects. It waits from here, before the start's modules are imported, and is on again whatever happens.
    gc.disable()
    try:
        chosen = app_options(args, mock=mock)  # the Namespace stops here: the app takes typed options
        from drill.ui.app import run_app

        return run_app(chosen)
    finally:
        gc.enable()
