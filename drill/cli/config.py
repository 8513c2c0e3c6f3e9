"""`drill config`: where the settings file is, what is in effect and why, and setting one key."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from drill.cli import options
from drill.config import settings as cfg
from drill.words import counted

if TYPE_CHECKING:
    from drill.cli import Subcommands

DATA_DIR_HELP = "where the database (and its saved settings) live"


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="drill's settings file (TOML, in the platform's config folder; $DRILL_CONFIG names another). "
        "Flags override it; it overrides what earlier flags saved.",
    )
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    actions.add_parser("path", help="print the settings file's path")
    show = actions.add_parser("show", help="the settings in effect and where each comes from")
    options.add_data_dir(show, DATA_DIR_HELP)
    assign = actions.add_parser(
        "set", help="check a value and write it into the file, keeping its comments and other keys"
    )
    options.add_data_dir(assign, DATA_DIR_HELP)
    assign.add_argument(
        "key", metavar="KEY", help=f"one of {', '.join(cfg.KEYS[:-1])}, or keys.BINDING_ID such as keys.review.suspend"
    )
    assign.add_argument("value", metavar="VALUE", help='the value; for keys.BINDING_ID, "" removes the override')


def run(args: argparse.Namespace) -> int:
    path = cfg.config_path(getattr(args, "data_dir", None))
    if args.config_action == "path":
        print(path)
        return 0
    if args.config_action == "show":
        return _show(args, path)
    return _set(args, path)


def _show(args: argparse.Namespace, path: Path) -> int:
    """The settings in effect as TOML, each with where it came from."""
    from drill.text_table import Column, text_table
    from drill.workspace import Workspace

    settings = cfg.load_settings(path)
    saved = Workspace(options.data_dir(args), settings=settings).saved_settings()
    flags = {key: getattr(args, key, None) for key in ("new_per_day", "day_starts_at", "new_order")}
    rows: list[tuple[str, str]] = []
    for setting in cfg.effective(settings, saved, flags):
        if setting.key != "keys":
            rows.append((f"{setting.key} = {cfg.shown(setting.value)}", setting.source))
            continue
        bindings = dict(settings.keys)
        rows += [(f"keys.{json.dumps(b)} = {cfg.shown(k)}", setting.source) for b, k in sorted(bindings.items())]
        if not bindings:
            rows.append(("keys = {}", setting.source))
    print(f"# {path}" + ("" if path.exists() else " (no file yet: `drill config set` writes one)"))
    for line in text_table(
        [Column(), Column()], [(setting, f"# {source}") for setting, source in rows], headings=False
    ):
        print(line)
    return 0


def _set(args: argparse.Namespace, path: Path) -> int:
    """Check KEY VALUE, write it into the file (switching the scheduler first when that is the key), say what changed."""
    try:
        change = cfg.parse_assignment(path, args.key, args.value)
    except cfg.ConfigError as exc:
        print(f"drill: {exc}", file=sys.stderr)
        return 2
    doc = cfg.read_document(path)  # a file that is not TOML: ConfigError, exit 1 from main
    switched = None
    if change.key == "scheduler":
        try:
            switched = _switch_scheduler(args, str(change.value), path)
        except ValueError as exc:  # a logged grade the scheduler cannot replay: nothing was changed
            print(f"drill: cannot switch to {change.value}: {exc}", file=sys.stderr)
            return 1
    doc, before = cfg.assign(doc, change)
    cfg.write_document(path, doc)
    was = "unset" if before is None else cfg.shown(before)
    now = "unset" if change.binding is not None and not change.value else cfg.shown(change.value)
    if was == now:
        print(f"{change.name}: {now} (unchanged) ({path})")
    else:
        print(f"{change.name}: {was} -> {now} ({path})")
    if switched:
        print(switched)
    try:
        cfg.load_settings(path)
    except cfg.ConfigError as exc:  # another key of the file is still wrong
        print(f"drill: {exc}", file=sys.stderr)
        return 1
    return 0


def _switch_scheduler(args: argparse.Namespace, name: str, path: Path) -> str:
    """Reschedule the stored cards with `name` by replaying the review log; a sentence saying what happened.

    The replay keeps to the file's max_interval_days (the default while another key of the file is wrong).
    """
    try:
        max_interval = cfg.load_settings(path).max_interval_days
    except cfg.ConfigError:
        max_interval = cfg.Settings().max_interval_days
    from drill.study.scheduling import switch_scheduler
    from drill.workspace import Workspace

    workspace = Workspace(options.data_dir(args))
    try:
        done = switch_scheduler(workspace.store(), name, max_interval=max_interval)
    finally:
        workspace.close()
    return (
        f"rescheduled {counted(done.cards, 'card')} with {name} by replaying {counted(done.reviews, 'logged review')}"
    )
