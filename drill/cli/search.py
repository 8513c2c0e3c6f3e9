"""`drill search QUERY`: the cards a query finds, ranked as the browser ranks them, with the line that matched.

The query is the browser's: words (each also found in its other forms: TP and tensor
parallel, FlashAttention and flash attention), "phrases", and topic:, kind:, tag:, id:
and is: filters. Exit 0 when a card is found, 1 when none is, 2 on a bad command line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from typing import TYPE_CHECKING, TypedDict

from drill.cli import options

if TYPE_CHECKING:
    from drill.cli import Subcommands

DEFAULT_LIMIT = 20
QUERY_HELP = 'words, "a phrase", topic:T kind:K tag:T id:X is:due|new|leech|suspended|... (quote it in the shell)'


class FoundCard(TypedDict):
    id: str
    topic: str
    kind: str
    line: str  # the first line of the prompt, else of the answer, holding a matched word (templates rendered)


class SearchResult(TypedDict):
    """What --json prints."""

    query: str
    found: int  # every card the query finds; `cards` holds the first --limit of them
    cards: list[FoundCard]
    suggestion: str | None  # the query with its misspelt words corrected, when it finds little
    notes: list[str]  # a filter no card can meet, with the name it may mean


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="Search every card as the browser does (ctrl+f in the app): all words and filters must hold; "
        "an abbreviation finds its words and the words their abbreviation (cards/data/search-words.yaml), a word "
        "also finds the words it begins, and a query that finds little suggests a spelling from the cards' words. "
        "Prints each card's id, topic, kind and the line that matched, most relevant first.",
    )
    options.add_data_dir(parser)
    options.add_decks(parser)
    parser.add_argument("query", nargs="+", metavar="QUERY", help=QUERY_HELP)
    parser.add_argument("--json", action="store_true", help=options.JSON_HELP)
    parser.add_argument(
        "--limit",
        type=options.positive_count,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"show the first N cards (default {DEFAULT_LIMIT})",
    )


def run(args: argparse.Namespace) -> int:
    from drill.browse import (
        CardIndex,
        matches,
        matching_line,
        rendered_line,
        spelling_hints,
        suggestion,
        unknown_filters,
    )
    from drill.workspace import Workspace

    query = " ".join(args.query)
    if not query.strip():
        print("drill search: give words or filters to search for (drill search --help)", file=sys.stderr)
        return 2
    workspace = Workspace(options.data_dir(args), options.deck_roots(args), settings=getattr(args, "settings", None))
    if workspace.decks.problems:
        print(f"drill search: {workspace.decks.left_out()}", file=sys.stderr)
    today = workspace.study_day()
    studied = workspace.studied_on(today) if "is:" in query.lower() else set()  # the log is read for is:today
    index = CardIndex(workspace.cards, workspace.states(), today, studied)
    found = matches(index, query)
    shown = found[: args.limit]
    cards = [
        FoundCard(
            id=card_id,
            topic=workspace.cards[card_id].topic,
            kind=workspace.cards[card_id].kind,
            line=rendered_line(workspace.cards[card_id], matching_line(index, card_id, query)),
        )
        for card_id in shown
    ]
    notes = unknown_filters(index, query)
    if args.json:
        result = SearchResult(
            query=query, found=len(found), cards=cards, suggestion=suggestion(index, query), notes=notes
        )
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0 if found else 1
    _print_rows(cards)
    for line in [*notes, *spelling_hints(index, query)]:
        print(line, file=sys.stderr)
    if not found:
        print("no card matches: each word and filter must hold", file=sys.stderr)
        return 1
    if len(found) > len(shown):
        print(f"{len(shown)} of {len(found)} cards shown (--limit N for more)", file=sys.stderr)
    return 0


def _print_rows(cards: list[FoundCard]) -> None:
    """One card a line: id, topic and kind in columns, then the matched line, cut to the terminal's width."""
    if not cards:
        return
    id_width = max(len(card["id"]) for card in cards)
    topic_width = max(len(card["topic"]) for card in cards)
    kind_width = max(len(card["kind"]) for card in cards)
    room = None
    if sys.stdout.isatty():
        room = max(20, shutil.get_terminal_size().columns - id_width - topic_width - kind_width - 6)
    for card in cards:
        line = card["line"]
        if room is not None and len(line) > room:
            line = line[: room - 1] + "…"
        print(f"{card['id']:<{id_width}}  {card['topic']:<{topic_width}}  {card['kind']:<{kind_width}}  {line}")
