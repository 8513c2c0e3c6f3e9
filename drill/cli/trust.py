"""`drill trust`: let kernel cards from a deck folder run its Python, list the trusted folders, revoke one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from drill.cli import options
from drill.cli.kernel import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from drill.words import counted

if TYPE_CHECKING:
    from drill.cli import Subcommands


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="Kernel cards from your own decks run Python (their harness) in the judge. Read that code, "
        "then trust the folder: it is recorded with a hash of every Python file under its kernels/ folder, and any "
        "change to them locks the folder's cards again. Exit 0 on success, 1 when there is nothing to trust "
        "or nothing to revoke, 2 on a usage error.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the deck folder (or a deck file in it) whose kernels/ Python you have read",
    )
    parser.add_argument("--list", action="store_true", help="the trusted folders and whether they changed since")
    parser.add_argument("--revoke", metavar="PATH", help="stop trusting a folder")
    options.add_data_dir(parser, "where the trust record lives")


def run(args: argparse.Namespace) -> int:
    from drill.kernel import trust

    given = [name for name, on in (("PATH", args.path), ("--list", args.list), ("--revoke", args.revoke)) if on]
    if len(given) != 1:
        print("usage: drill trust PATH | --list | --revoke PATH", file=sys.stderr)
        return EXIT_USAGE
    data_dir = options.data_dir(args)
    if args.list:
        records = trust.load_trusted(data_dir)
        if not records:
            print(f"no trusted deck folders (record: {trust.trust_file(data_dir)})")
            return EXIT_OK
        for record in records.values():
            print(
                f"{record.folder}  {counted(len(record.files), 'file')}, trusted {record.trusted_at}: {trust.folder_state(record)}"
            )
        return EXIT_OK
    if args.revoke:
        if not trust.revoke(args.revoke, data_dir):
            print(f"drill trust: {trust.deck_folder(args.revoke)} was not trusted; nothing to revoke", file=sys.stderr)
            return EXIT_FAILED
        print(f"no longer trusted: {trust.deck_folder(args.revoke)} (recorded in {trust.trust_file(data_dir)})")
        return EXIT_OK
    if not Path(args.path).expanduser().exists():
        print(f"drill trust: no such file or folder: {args.path}", file=sys.stderr)
        return EXIT_USAGE
    try:
        record, where = trust.trust(args.path, data_dir)
    except trust.NothingToTrust as exc:
        print(f"drill trust: {exc}; nothing to trust", file=sys.stderr)
        return EXIT_FAILED
    except (OSError, ValueError) as exc:
        print(f"drill trust: {exc}", file=sys.stderr)
        return EXIT_FAILED
    width = max(len(rel) for rel in record.files)
    print(f"trusting the Python of {record.folder}:")
    for rel, digest in record.files.items():
        print(f"  {rel:<{width}}  sha256 {digest}")
    harnesses = len(trust.harness_files(record.files))
    print(f"{counted(len(record.files), 'file')}, {harnesses} of them harnesses; recorded in {where}")
    print("kernel cards from this folder may now run this code; a change to any of these files locks them again")
    return EXIT_OK
