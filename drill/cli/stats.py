"""`drill stats`: counts, due cards and weak topics, as text or JSON; readiness for the interview date when one is set.

--json also carries "readiness" (null without a date) and "calibration" (predicted recall
against the learner's record), in the shape drill.study.readiness gives them.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from drill.cli import options


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text)
    options.add_data_dir(parser)
    options.add_decks(parser)
    parser.add_argument("--json", action="store_true", help=options.JSON_HELP)
    options.add_today(parser)


def run(args: argparse.Namespace) -> int:
    from drill.config.settings import load_settings
    from drill.study.progress import render_text
    from drill.workspace import Workspace

    settings = getattr(args, "settings", None) or load_settings()

    def chosen(key: str) -> Any:
        """A flag given before `stats`, else the settings file's value; None leaves it to the saved setting."""
        flag = getattr(args, key, None)
        if flag is not None:
            return flag
        return settings.from_file(key)

    # Flags given before `stats` (drill --day-starts-at 0 stats) shape this report
    # only; otherwise the settings file, then the settings the review app saved.
    workspace = Workspace(
        options.data_dir(args),
        options.deck_roots(args),
        settings=settings,
        today=getattr(args, "today", None),
        day_starts_at=getattr(args, "day_starts_at", None),
    )
    figures = workspace.stats(new_per_day=chosen("new_per_day"), new_order=chosen("new_order"))
    if workspace.summary.problems:
        print(f"drill stats: {workspace.summary.left_out()}", file=sys.stderr)
    if args.json:
        print(json.dumps(figures.as_json(), indent=2))
    else:
        print(render_text(figures.report))
        if figures.readiness is not None:
            from drill.study.readiness_text import render_block  # with a date set only: the plan's modules are many

            print()
            print(render_block(figures.readiness))
    return 0
