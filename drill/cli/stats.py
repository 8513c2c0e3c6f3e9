"""`drill stats`: counts, due cards and weak topics, as text or JSON."""

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


def run(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from drill.cards.deck_cache import load_decks_cached
    from drill.config.settings import load_settings
    from drill.progress import ensure_schema
    from drill.stats import collect, read_for_report, render_text

    settings = getattr(args, "settings", None) or load_settings()

    def chosen(key: str) -> Any:
        """A flag given before `stats`, else the settings file's value; None leaves it to the saved setting."""
        flag = getattr(args, key, None)
        if flag is not None:
            return flag
        return settings.from_file(key)

    data_dir = options.data_dir(args)
    ensure_schema(data_dir)  # an older file: the Store migrates it once
    # The database is read in a thread while the decks load (SQLite lets go of the GIL as it reads).
    with ThreadPoolExecutor(max_workers=1) as pool:
        rows = pool.submit(read_for_report, data_dir, chosen("day_starts_at"))
        decks = load_decks_cached(options.deck_roots(args), data_dir)
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
        print(render_text(report))
    return 0
