"""`drill check`: validate decks, exit 1 on any problem (and on warnings with --strict)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from drill.cli import options
from drill.words import counted

if TYPE_CHECKING:
    from drill.cards.model import Card, Problem
    from drill.cli import Subcommands


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text)
    options.add_data_dir(parser)
    options.add_decks(parser)
    parser.add_argument("paths", nargs="*", metavar="PATH", help="deck files or folders (default: the bundled decks)")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on warnings too (a diagnosis card whose right choice stands out by its length or wording)",
    )


def run(args: argparse.Namespace) -> int:
    from drill.cards.loader import load_decks

    decks = load_decks(options.deck_roots(args, args.paths), deep=True)
    if args.paths:
        decks.problems.extend(_bundled_clashes(decks.cards))
    for problem in decks.problems:
        print(problem)
    for warning in decks.warnings:
        print(warning)
    if decks.problems:
        print(f"{counted(len(decks.problems), 'problem')} in {counted(len(decks.cards), 'good card')}", file=sys.stderr)
        return 1
    if decks.warnings and args.strict:
        print(
            f"{counted(len(decks.warnings), 'warning')} in {counted(len(decks.cards), 'card')} (--strict)",
            file=sys.stderr,
        )
        return 1
    warned = f", {counted(len(decks.warnings), 'warning')}" if decks.warnings else ""
    print(f"ok: {counted(len(decks.cards), 'card')}{warned}", file=sys.stderr)
    return 0


def _bundled_clashes(cards: Mapping[str, Card]) -> list[Problem]:
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
