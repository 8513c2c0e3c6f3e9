"""`drill kernel run|list`, `drill gpu calibrate` and `drill trust`: the kernel judge without the app."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli import options
from drill.config.settings import DEFAULT_JUDGE_TIMEOUT, Settings

if TYPE_CHECKING:
    from drill.kernel.client import JudgeClient
    from drill.kernel_shared.protocol import JudgeEvent

# Exit statuses: 2 for a usage error, as argparse's own; a judged card exits with its verdict's (0 or 1).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DATA_DIR_HELP = "where drafts and the GPU calibration live"
USAGE = "usage: drill kernel {run ID [--file F] [--json] [--timeout S], list}"


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    kernel = subparsers.add_parser(name, help=help_text, description="Kernel cards: judge, list.")
    kernel_commands = kernel.add_subparsers(dest="kernel_command", metavar="SUBCOMMAND")
    run = kernel_commands.add_parser(
        "run",
        help="compile, check and time a kernel card",
        description="Judge a kernel card. Exit 0 when everything that could be checked passed, "
        "1 when compilation or correctness failed, 2 on a usage error.",
    )
    run.add_argument("card_id", metavar="ID", help="a kernel card id (see `drill kernel list`)")
    run.add_argument("--file", "-f", metavar="F", help="the file to judge (default: your draft, else the starter)")
    run.add_argument("--json", action="store_true", help="print the verdict as JSON")
    run.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help=f"stop a run after S seconds (default: judge_timeout in the settings file, else {DEFAULT_JUDGE_TIMEOUT:g})",
    )
    run.add_argument("--all-shapes", action="store_true", help="time every shape the card lists, not only the first")
    run.add_argument(
        "--world",
        type=_ranks,
        metavar="N",
        help="a collective card: N ranks, one per GPU (default: every GPU; without two GPUs, 2, 3 and 4 on the CPU)",
    )
    options.add_data_dir(run, DATA_DIR_HELP)
    options.add_decks(run)
    listing = kernel_commands.add_parser("list", help="the kernel cards")
    listing.add_argument("--json", action="store_true", help=options.JSON_HELP)
    options.add_data_dir(listing, DATA_DIR_HELP)
    options.add_decks(listing)


def _ranks(text: str) -> int:
    """--world: the ranks of a collective card."""
    from drill.kernel_shared.protocol import MAX_WORLD, MIN_WORLD

    value = options.whole_number(text)
    if not MIN_WORLD <= value <= MAX_WORLD:
        raise argparse.ArgumentTypeError(f"a collective runs on {MIN_WORLD} to {MAX_WORLD} ranks (got {value})")
    return value


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "kernel_command", None)
    if command == "list":
        return _list(args)
    if command == "run":
        return _run(args)
    print(USAGE, file=sys.stderr)
    return EXIT_USAGE


def kernel_cards(args: argparse.Namespace) -> dict[str, Any]:
    from drill.cards.loader import load_decks

    decks = load_decks(options.deck_roots(args))
    if decks.problems:
        print(f"drill kernel: {decks.left_out()}", file=sys.stderr)
    return {cid: c for cid, c in decks.cards.items() if c.kind == "kernel"}


def named_kernel_card(args: argparse.Namespace) -> Any:
    """The kernel card `args.card_id`, from the one deck file that defines it when only one does (the judge waits
    for it, and parsing every deck took half a second on a first run), else from every deck; None if there is none."""
    from drill.cards.loader import load_deck_of

    deck = load_deck_of(args.card_id, options.deck_roots(args))
    card = deck.cards.get(args.card_id) if deck is not None else None
    if deck is None or card is None:
        card = kernel_cards(args).get(args.card_id)
    elif deck.problems:
        print(f"drill kernel: {deck.left_out()}", file=sys.stderr)
    return card if card is not None and card.kind == "kernel" else None


def _list(args: argparse.Namespace) -> int:
    from drill.kernel.cards import CardFileError, kernel_files
    from drill.kernel.drafts import extension_for, has_draft
    from drill.kernel.trust import locked_reason

    cards = kernel_cards(args)
    data_dir = options.data_dir(args)
    rows = []
    for card in sorted(cards.values(), key=lambda c: c.id):
        language = str(card.fields.get("language"))
        try:
            starter = str(kernel_files(card).starter)
        except CardFileError:
            starter = ""
        rows.append(
            {
                "id": card.id,
                "language": language,
                "topic": card.topic,
                "target_pct": card.fields.get("target_pct"),
                "starter": starter,
                "draft": has_draft(data_dir, card.id, extension_for(language)),
                "locked": locked_reason(card, data_dir),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    if not rows:
        print("no kernel cards found")
        return EXIT_OK
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        draft = "  (draft)" if r["draft"] else ""
        locked = "  (locked: see `drill kernel run`)" if r["locked"] else ""
        print(
            f"{r['id']:<{width}}  {r['language']:<6}  target {r['target_pct']:>3} %  {r['topic']:<16} {Path(r['starter']).name}{draft}{locked}"
        )
    return EXIT_OK


def source_for(card: Any, data_dir: Path, file: str | None) -> tuple[str, str]:
    """(text, where it came from): --file, else the draft, else the starter."""
    from drill.kernel.cards import kernel_files
    from drill.kernel.drafts import draft_path, extension_for, load_draft

    if file:
        path = Path(file)
        return path.read_text(encoding="utf-8"), str(path)
    ext = extension_for(str(card.fields.get("language")))
    draft = load_draft(data_dir, card.id, ext)
    if draft is not None:
        return draft, str(draft_path(data_dir, card.id, ext))
    from drill.kernel.trust import deck_python, pins
    from drill.kernel_shared.trusted_source import Pins, checked_source

    starter = kernel_files(card).starter
    # a deck's Triton starter is Python the judge runs: what is sent must be what the learner trusted
    pinned = Pins.from_job(pins(card, data_dir)) if starter in deck_python(card) else Pins()
    data = checked_source(starter, pinned)
    return data.decode("utf-8"), str(starter)


def _run(args: argparse.Namespace) -> int:
    from drill.kernel.bytecode import pycache_dir

    saved_prefix = sys.pycache_prefix
    saved_dont_write = sys.dont_write_bytecode
    if sys.dont_write_bytecode and sys.pycache_prefix is None:
        # the imports still ahead (the decks, the attempt log's database layer) would be compiled from
        # source on every run: keep their bytecode in drill's cache instead, never beside the sources
        sys.pycache_prefix = str(pycache_dir())
        sys.dont_write_bytecode = False
    try:
        return _run_with_bytecode(args)
    finally:
        # as it was, for a caller in the same process
        sys.pycache_prefix = saved_prefix
        sys.dont_write_bytecode = saved_dont_write


def _run_with_bytecode(args: argparse.Namespace) -> int:
    if args.timeout is None:
        args.timeout = settings_of(args).judge_timeout
    if args.timeout <= 0:
        print("drill kernel run: --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    data_dir = options.data_dir(args)
    # The judge process starts at once (importing torch and opening the GPU take the longest) while the
    # decks load; it is sent the card only once the card is known and not locked (see _judge), and it
    # reads nothing of a deck before then.
    from drill.hosts import BadHost
    from drill.kernel.client import JudgeClient, JudgeError

    try:
        command = judge_command(args)
    except BadHost as exc:
        print(f"drill kernel run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    client = JudgeClient(command, data_dir=data_dir)
    try:
        client.start()
    except JudgeError:  # the run below reports it in the verdict
        pass
    try:
        return _judge(args, client, data_dir)
    finally:
        client.abandon()


def _judge(args: argparse.Namespace, client: JudgeClient, data_dir: Path) -> int:
    from drill.kernel.job import kernel_job
    from drill.kernel.trust import locked_reason
    from drill.kernel_shared.trusted_source import NotTrusted

    card = named_kernel_card(args)
    # the attempt log's database layer takes a while to import: let it load while the judge starts and runs
    store_ready = threading.Thread(target=_import_store, daemon=True)
    store_ready.start()
    if card is None:
        known = ", ".join(sorted(kernel_cards(args))) or "none"
        print(f"drill kernel run: no kernel card {args.card_id!r} (kernel cards: {known})", file=sys.stderr)
        return EXIT_USAGE
    reason = locked_reason(card, data_dir)
    if reason:  # checked before anything is read or sent to the judge
        print(f"drill kernel run: {reason}", file=sys.stderr)
        return EXIT_USAGE
    from drill.kernel.verdict import Verdict, format_verdict, suggest_kernel_grade, torch_time_words

    try:
        source, origin = source_for(card, data_dir, args.file)
    except NotTrusted as exc:
        print(f"drill kernel run: kernel card {card.id} is locked: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, UnicodeDecodeError) as exc:
        print(f"drill kernel run: cannot read {args.file or 'the starter'}: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def progress(event: JudgeEvent) -> None:
        if not args.json and event["event"] == "case_started":
            print(f"  ... {event['name']}", file=sys.stderr, flush=True)

    timing = "all" if args.all_shapes else "first"
    job = kernel_job(card, data_dir)
    if args.world is not None:
        if card.fields.get("language") != "collective":
            print(f"drill kernel run: --world is for collective cards; {card.id} runs on one GPU", file=sys.stderr)
            return EXIT_USAGE
        job["world"] = args.world
    target = float(card.fields.get("target_pct") or 0)
    later: list[str] = []  # timings shown before PyTorch's own time was taken (a GPU new to drill)

    def show(verdict: Verdict) -> None:
        """The verdict, printed as soon as it is in: PyTorch's own time, where it is still to be taken, follows."""
        if args.json:
            return
        later.extend(t.name for t in verdict.timings if t.torch_later)
        print(f"judging {origin}")
        print(format_verdict(verdict, source_lines=source.splitlines()))
        ceiling = verdict.timing.ceiling_name if verdict.timing is not None else "copy"
        grade = suggest_kernel_grade(verdict, target)
        suggestion = (
            f"suggested grade {grade}"
            if grade is not None
            else "no suggested grade: nothing checked that it works; compare it with the reference answer"
        )
        print(f"target: {target:g} % of the {ceiling} ceiling; {suggestion}", flush=True)

    verdict = client.run(job, source, progress, timeout=args.timeout, timing=timing, on_verdict=show)
    client.abandon()  # the verdict is in: the judge has nothing left to do
    grade = suggest_kernel_grade(verdict, target)
    if args.json:  # as soon as it is in, like the words: the attempt's log follows
        data = verdict.to_json()
        data.update(file=origin, target_pct=target, suggested_grade=grade)
        print(json.dumps(data, indent=2), flush=True)
    store_ready.join()
    _record_attempt(data_dir, card.id, source, verdict.to_json())
    for t in verdict.timings:
        if t.name in later:
            print(torch_time_words(verdict, t))
    return int(verdict.exit_code())


def _import_store() -> None:
    try:
        from drill.workspace import load_store

        load_store()
    except Exception:  # _record_attempt reports it
        pass


def _record_attempt(data_dir: Path, card_id: str, source: str, result: dict[str, Any]) -> None:
    """Keep the attempt with the others the app records; a locked or broken database only warns."""
    try:
        from drill.workspace import Workspace

        workspace = Workspace(data_dir)
        try:
            workspace.writes().record_kernel_attempt(card_id, source, result)
        finally:
            workspace.close()
    except Exception as exc:  # the verdict matters more than its log
        print(f"drill kernel run: attempt not recorded: {exc}", file=sys.stderr)


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings file as `drill` read it for this command (read now when run without the main CLI)."""
    settings: Settings | None = getattr(args, "settings", None)
    if settings is None:
        from drill.config.settings import config_path, load_settings

        settings = load_settings(config_path(getattr(args, "data_dir", None)))
    return settings


def judge_command(args: argparse.Namespace) -> list[str] | None:
    """The judge child to start: over SSH when a GPU host is given (--gpu-host, or gpu_host in the settings file)."""
    host = getattr(args, "gpu_host", None) or settings_of(args).gpu_host
    if not host:
        return None
    from drill.kernel.remote import ssh_command

    return ssh_command(host)
