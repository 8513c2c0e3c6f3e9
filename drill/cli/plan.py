"""`drill plan`: the interview date, readiness on it, and the daily plan that gets there.

--date, --track, --minutes and --target are saved in the settings file (as `drill config set`
would write them), so the daily queue, `drill stats` and the stats screen follow them;
--clear removes the date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from drill.cli import options
from drill.config import settings as cfg

if TYPE_CHECKING:
    from drill.cli import Subcommands

ALL_CARDS = "all"  # --track all: plan over every card (the settings file's "")

# the settings each option saves, in the order they are written
SAVED = (
    ("date", "interview_date"),
    ("track", "interview_track"),
    ("minutes", "minutes_per_day"),
    ("target", "readiness_target"),
)


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="Readiness on your interview date (predicted recall per topic if you stop now, and if you "
        "follow the plan) and the plan: new cards and minutes each day, early reviews in the last days, mock days. "
        "The options are saved in the settings file; the daily queue follows the plan.",
    )
    options.add_data_dir(parser)
    options.add_decks(parser)
    parser.add_argument("--date", type=options.iso_day, metavar="YYYY-MM-DD", help="the interview date (saved)")
    parser.add_argument(
        "--track",
        metavar="TRACK",
        help=f"plan over one track's cards: training, inference or kernels; {ALL_CARDS} for every card (saved)",
    )
    parser.add_argument(
        "--minutes", type=options.positive_count, metavar="N", help="minutes a day you give drill (saved)"
    )
    parser.add_argument("--target", type=float, metavar="RECALL", help="the recall to reach, such as 0.9 (saved)")
    parser.add_argument("--clear", action="store_true", help="remove the interview date; the queue is as before")
    options.add_today(parser)
    parser.add_argument("--json", action="store_true", help=options.JSON_HELP)


def run(args: argparse.Namespace) -> int:
    path = cfg.config_path(getattr(args, "data_dir", None))
    given = [(key, getattr(args, option)) for option, key in SAVED if getattr(args, option) is not None]
    if args.clear:
        if given:
            print("drill plan: --clear removes the date; give it alone", file=sys.stderr)
            return 2
        return _clear(path)
    if args.date is not None:
        today = _today(args, cfg.load_settings(path))
        if args.date <= today:
            print(
                f"drill plan: --date {args.date.isoformat()} is not after today ({today.isoformat()})", file=sys.stderr
            )
            return 2
    try:
        changes = [cfg.parse_assignment(path, key, _text(key, value)) for key, value in given]
    except cfg.ConfigError as exc:
        print(f"drill: {exc}", file=sys.stderr)
        return 2
    if changes:
        doc = cfg.read_document(path)
        for change in changes:
            doc, _ = cfg.assign(doc, change)
        cfg.write_document(path, doc)
    return _show(args, cfg.load_settings(path))


def _text(key: str, value: object) -> str:
    """An option's value as `drill config set` takes it."""
    if key == "interview_track" and str(value).strip().lower() == ALL_CARDS:
        return ""
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _clear(path: Path) -> int:
    doc = cfg.read_document(path)
    doc, before = cfg.remove(doc, "interview_date")
    if before is None or before == "":
        print(f"no interview date was set ({path})")
        return 0
    cfg.write_document(path, doc)
    print(f"interview_date: {cfg.shown(before)} -> unset ({path}); the daily queue is as before")
    return 0


def _today(args: argparse.Namespace, settings: cfg.Settings) -> dt.date:
    """--today, else the study day now (the day's start hour from a flag, the file, the saved setting)."""
    from drill.workspace import Workspace

    workspace = Workspace(
        options.data_dir(args),
        settings=settings,
        today=getattr(args, "today", None),
        day_starts_at=getattr(args, "day_starts_at", None),
    )
    return workspace.study_day()


def _show(args: argparse.Namespace, settings: cfg.Settings) -> int:
    from drill.study.readiness_text import render_plan
    from drill.workspace import Workspace

    if settings.interview_date is None:
        print("drill plan: no interview date is set: drill plan --date YYYY-MM-DD", file=sys.stderr)
        return 1
    today = _today(args, settings)
    if settings.interview_date < today:
        print(
            f"drill plan: the interview date {settings.interview_date.isoformat()} has passed: "
            "drill plan --date YYYY-MM-DD sets another, drill plan --clear removes it",
            file=sys.stderr,
        )
        return 1
    workspace = Workspace(options.data_dir(args), options.deck_roots(args), settings=settings)
    try:
        saved = workspace.saved_settings()
        _, _, new_order = cfg.study_settings(settings, saved, new_order=getattr(args, "new_order", None))
        figures = workspace.readiness(today, new_order=new_order)
    finally:
        workspace.close()
    assert figures is not None  # a date is set and has not passed
    if args.json:
        print(json.dumps(figures.as_json(), indent=2))
    else:
        print(render_plan(figures, figures.now.cards))
    return 0
