"""`drill export anki|csv|reviews OUT` and `drill import reviews|anki IN` (a review export carries the fitted FSRS
parameters, and its import brings them back; an Anki export can carry each card's schedule and reviews, and an
Anki package's reviews of drill's notes come back into the log)."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator

from drill.cli import options
from drill.words import counted

if TYPE_CHECKING:
    from drill.workspace import Workspace

# The only files an export replaces: one with its suffix (see _target)
SUFFIXES = {"anki": ".apkg", "csv": ".csv", "reviews": ".csv"}
EXPORTS = {
    "anki": "every card but kernel and scenario cards as notes of an Anki package (.apkg); re-importing it updates only the "
    "notes whose cards changed (--with-history: with each card's schedule and reviews)",
    "csv": "every card but kernel and scenario cards as CSV: id, deck, topic, kind, tags, prompt, answer, rubric, sources",
    "reviews": "the review log as CSV, every column `drill import reviews` needs to restore it, and the FSRS "
    "parameters fitted to it (drill fsrs fit) on a first line of their own",
}


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    """`export` or `import`, as `name` says (the two share this module's file handling)."""
    if name == "export":
        _add_export(subparsers, name, help_text)
    else:
        _add_import(subparsers, name, help_text)


def _data_options(parser: argparse.ArgumentParser) -> None:
    options.add_data_dir(parser, options.DATABASE_HELP)
    options.add_decks(parser)


def _add_export(subparsers: Any, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="Write the cards (bundled decks and --decks) or the review history to a file. "
        "A parameterised card is written with one fixed draw of its numbers.",
    )
    _data_options(parser)
    what = parser.add_subparsers(dest="what", metavar="anki|csv|reviews", required=True)
    for export, export_help in EXPORTS.items():
        one = what.add_parser(export, help=export_help, description=export_help)
        _data_options(one)
        one.add_argument("out", metavar="OUT", help=_out_help(export))
        if export == "anki":
            one.add_argument(
                "--with-history",
                action="store_true",
                help="each card's schedule (due date, interval, ease, FSRS memory) and its reviews go too: Anki "
                "takes them when its import is told to include scheduling",
            )


def _out_help(export: str) -> str:
    replaced = f"the file to write; a {SUFFIXES[export]} file already there is replaced, any other file is left alone"
    if export == "anki":
        return replaced
    return f"{replaced} (- for standard output)"


def _add_import(subparsers: Any, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="Add the reviews of a CSV file written by `drill export reviews` to the history, and the FSRS "
        "parameters fitted to them when this data folder has none of its own; or the reviews an Anki package "
        "holds of the notes drill exported. Reviews already there are skipped; a file with any problem changes "
        "nothing.",
    )
    _data_options(parser)
    what = parser.add_subparsers(dest="what", metavar="reviews|anki", required=True)
    reviews = what.add_parser("reviews", help="a review log from CSV")
    _data_options(reviews)
    reviews.add_argument("source", metavar="IN", help="the CSV file to read")
    anki_help = (
        "the reviews of drill's notes (known by their GUID) in an Anki package (.apkg or .colpkg), each at its "
        "time, its answer taken as a grade: Again 1, Hard 3, Good 4, Easy 5; other notes are counted and left alone"
    )
    anki = what.add_parser("anki", help=anki_help, description=anki_help)
    _data_options(anki)
    anki.add_argument("source", metavar="IN", help="the .apkg or .colpkg file to read")


def run(args: argparse.Namespace) -> int:
    handlers: dict[str, Callable[[argparse.Namespace], int]]
    if args.command == "export":
        handlers = {"anki": _export_anki, "csv": _export_csv, "reviews": _export_reviews}
    else:
        handlers = {"reviews": _import_reviews, "anki": _import_anki}
    try:
        return handlers[args.what](args)
    except ExportError as exc:
        print(f"drill {args.command}: {exc}", file=sys.stderr)
        return 1


class ExportError(Exception):
    """A file that cannot be written or read; the message names it."""


def _cards(args: argparse.Namespace) -> list[Any]:
    from drill.cards.loader import load_decks
    from drill.exchange.flat import NOT_EXPORTED, exportable, flatten_all

    decks = load_decks(options.deck_roots(args))
    if decks.problems:
        print(f"drill export: {decks.left_out()}", file=sys.stderr)
    left_out = left_out_notice(Counter(c.kind for c in decks.cards.values() if c.kind in NOT_EXPORTED))
    if left_out:
        print(f"drill export: {left_out}", file=sys.stderr)
    return flatten_all(exportable(decks.cards))


LEFT_OUT_WHY = {
    "kernel": "answered by running code on a GPU (`drill kernel run`)",
    "scenario": "asked in stages in a mock round (`drill mock --round`)",
}


def left_out_notice(counts: Mapping[str, int]) -> str:
    """Words for the cards an export leaves out, by kind, with why a flashcard cannot ask them; "" for none."""
    kinds = [kind for kind in LEFT_OUT_WHY if counts.get(kind)]
    if not kinds:
        return ""
    listed = " and ".join(counted(counts[kind], f"{kind} card") for kind in kinds)
    if len(kinds) == 1:
        only = kinds[0]
        subject = "it is" if counts[only] == 1 else "they are"
        why = f"{subject} {LEFT_OUT_WHY[only]}"
    else:
        why = "; ".join(f"a {kind} card is {LEFT_OUT_WHY[kind]}" for kind in kinds)
    return f"{listed} left out: {why}, which a flashcard cannot do"


def _target(out: str, suffix: str) -> Path:
    """The file an export writes for OUT. One already there is replaced only when it has the export's suffix:
    a deck or any other file given as OUT by mistake is left alone."""
    if not out.strip():
        raise ExportError("no file given: name the file to write, for example cards" + suffix)
    given = Path(out)
    target = given.resolve() if given.is_symlink() else given  # a link keeps pointing where it did
    if not target.exists():
        return target
    if target.is_dir():
        raise ExportError(f"cannot write {out} (it is a folder)")
    if not target.is_file():
        raise ExportError(f"cannot write {out} (not a regular file: a device, a pipe or a socket)")
    if target.suffix.lower() != suffix:
        raise ExportError(
            f"{out} is already there and is not a {suffix} file; drill replaces only a {suffix} file it could "
            "have written: name a new file, or remove this one first"
        )
    return target


@contextmanager
def _replacing(target: Path, out: str) -> Iterator[Path]:
    """A temporary path beside `target` that becomes it once written, so a failed export leaves no half file."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    except OSError as exc:
        raise ExportError(f"cannot write {out} ({exc.strerror or exc})") from exc
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def _text_out(out: str, target: Path | None) -> Iterator[IO[str]]:
    """Standard output for `-` (target None), else the file `target` (from `_target`)."""
    if target is None:
        yield sys.stdout
        return
    with _replacing(target, out) as tmp:
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                yield fh
        except OSError as exc:
            raise ExportError(f"cannot write {out} ({exc.strerror or exc})") from exc


def _csv_target(out: str) -> Path | None:
    """Where a CSV export goes, found before anything is read: None for standard output."""
    if out == "-":
        return None
    return _target(out, SUFFIXES["csv"])


def _named(out: str) -> str:
    return "standard output" if out == "-" else out


def _export_anki(args: argparse.Namespace) -> int:
    from drill.exchange.anki import write_apkg
    from drill.exchange.anki_history import History
    from drill.exchange.anki_times import load_times, save_times, times_path

    if args.out == "-":
        raise ExportError("an Anki package cannot go to standard output: name a .apkg file")
    target = _target(args.out, SUFFIXES["anki"])  # before the decks are read: a wrong OUT is said at once
    cards = _cards(args)
    history = None
    if args.with_history:
        workspace = _workspace(args)
        try:
            history = History(workspace.states(), workspace.review_records())
        finally:
            workspace.close()
    times_file = times_path(options.data_dir(args))
    known = load_times(times_file)
    with _replacing(target, args.out) as tmp:
        written = write_apkg(cards, tmp, known=known, history=history)
    try:
        save_times(times_file, written.times, known)
    except OSError as exc:
        print(
            f"drill export: cannot remember the notes' times in {times_file} ({exc.strerror or exc}); "
            "the next export will mark every note as changed",
            file=sys.stderr,
        )
    carried = ""
    if history is not None:
        carried = f", {written.scheduled} with their schedule, and {written.reviews} reviews"
    print(f"wrote {written.notes} notes{carried} to {args.out}", file=sys.stderr)
    return 0


def _export_csv(args: argparse.Namespace) -> int:
    from drill.exchange.csvio import write_cards

    target = _csv_target(args.out)
    cards = _cards(args)
    with _text_out(args.out, target) as fh:
        count = write_cards(cards, fh)
    print(f"wrote {count} cards to {_named(args.out)}", file=sys.stderr)
    return 0


def _workspace(args: argparse.Namespace) -> Workspace:
    """The learner's data that --data-dir names (its Store opened on the first write or look at the log), with the
    settings file the command read: the replay an import brings up to date is made with its memory model."""
    from drill.workspace import Workspace

    return Workspace(options.data_dir(args), settings=getattr(args, "settings", None))


def _export_reviews(args: argparse.Namespace) -> int:
    from drill.exchange.csvio import write_reviews

    target = _csv_target(args.out)
    workspace = _workspace(args)
    try:
        rows = workspace.review_records()
        parameters = workspace.fsrs_parameters()
    finally:
        workspace.close()
    with _text_out(args.out, target) as fh:
        count = write_reviews(rows, fh, parameters)
    carried = "" if parameters is None else " and the FSRS parameters fitted to them"
    print(f"wrote {count} reviews{carried} to {_named(args.out)}", file=sys.stderr)
    return 0


def _import_reviews(args: argparse.Namespace) -> int:
    """Check every row first (a file with a problem changes nothing), then add the rows, reading the file again
    as it goes: memory stays flat however long the file is."""
    from drill.exchange.csvio import CsvProblem, read_parameters, scan_reviews

    source = Path(args.source)
    if not source.is_file():
        raise ExportError(f"cannot read {source} ({'a folder' if source.is_dir() else 'no such file'})")
    most = 20
    problems = 0
    parameters = None
    with _reading(source):
        try:
            parameters = read_parameters(source)
        except ValueError as exc:
            print(CsvProblem(str(source), 1, str(exc)), file=sys.stderr)
            problems += 1
        for item in scan_reviews(source):
            if isinstance(item, CsvProblem):
                print(item, file=sys.stderr)
                problems += 1
                if problems >= most:
                    break
    if problems:
        print(f"drill import: {source} has problems; nothing imported", file=sys.stderr)
        return 1

    workspace = _workspace(args)
    strangers = UnknownCards(frozenset(workspace.cards))

    def rows() -> Iterator[dict[str, Any]]:
        for item in scan_reviews(source):
            if isinstance(item, CsvProblem):  # the file changed since it was checked
                raise ExportError(f"{item} (the file changed while it was imported; import it again)")
            strangers.see(str(item["card_id"]))
            yield item

    try:
        with _reading(source):
            counts = workspace.import_reviews(rows())
        taken = _take_parameters(workspace, parameters)
    finally:
        workspace.close()
    repeated = f"; {counts.repeated} given more than once in the file" if counts.repeated else ""
    print(
        f"imported {counts.added} reviews from {source} ({counts.already_there} already there{repeated}){taken}",
        file=sys.stderr,
    )
    if strangers.rows:
        print(strangers.words(), file=sys.stderr)
    return 0


@dataclass
class UnknownCards:
    """The rows of an imported log that name cards the decks do not hold (kept: a card removed from the decks
    keeps its history, and comes back with it if it is added again)."""

    known: frozenset[str]
    rows: int = 0
    ids: dict[str, None] = field(default_factory=dict)  # each id once, in the order the file gives them

    SHOWN = 5  # ids named in the words; the rest are counted

    def see(self, card_id: str) -> None:
        if card_id in self.known:
            return
        self.rows += 1
        self.ids.setdefault(card_id)

    def words(self) -> str:
        rows = f"{self.rows} row{'s' if self.rows != 1 else ''}"
        named = ", ".join(list(self.ids)[: self.SHOWN])
        more = f" and {len(self.ids) - self.SHOWN} more" if len(self.ids) > self.SHOWN else ""
        cards = f"{len(self.ids)} card{'s' if len(self.ids) != 1 else ''}"
        return (
            f"note: {rows} name {cards} not in the decks ({named}{more});"
            " kept, as the history of a card removed from the decks"
        )


def _import_anki(args: argparse.Namespace) -> int:
    """Add the reviews an Anki package holds of drill's notes; a second import of the same package adds none."""
    from drill.cards.loader import load_decks
    from drill.exchange.anki_import import PackageError, plan_import, read_package
    from drill.store.rows import logged_review_from_row
    from drill.study.scheduling import saved_scheduler, scheduler_named, switch_scheduler

    source = Path(args.source)
    if not source.is_file():
        raise ExportError(f"cannot read {source} ({'a folder' if source.is_dir() else 'no such file'})")
    try:
        with _reading(source):
            package = read_package(source)
    except PackageError as exc:
        raise ExportError(str(exc)) from exc
    topics = {c.id: c.topic for c in load_decks(options.deck_roots(args)).cards.values()}
    workspace = _workspace(args)
    try:
        saved = workspace.saved_settings()
        scheduler = scheduler_named(
            saved_scheduler(saved), workspace.settings.max_interval_days, workspace.fsrs_parameters()
        )
        store = workspace.store()
        logged = [logged_review_from_row(row.columns()) for row in workspace.review_records()]  # with their times
        plan = plan_import(package, topics, logged, store.states(), scheduler, workspace.rollover_hour())
        counts = workspace.import_reviews(plan.rows)
        if plan.needs_replay:  # a review older than one logged: the schedule is rebuilt from the whole log
            switch_scheduler(store, scheduler.name, scheduler.max_interval)
    finally:
        workspace.close()
    left = ""
    if plan.unknown_notes:
        left = f"; {plan.unknown_notes} notes drill did not export left alone ({plan.unknown_reviews} reviews)"
    print(
        f"imported {counts.added} reviews of {plan.cards} cards from {source} "
        f"({plan.already_there + counts.already_there} already there){left}",
        file=sys.stderr,
    )
    return 0


def _take_parameters(workspace: Workspace, parameters: tuple[float, ...] | None) -> str:
    """Make the file's fitted FSRS parameters this folder's when it has none; what happened, for the import's line.

    A folder with parameters of its own keeps them: they were fitted to its log, and `drill fsrs fit` fits the
    log as the import left it."""
    from drill.cli.fsrs import use_parameters

    if parameters is None:
        return ""
    own = workspace.fsrs_parameters()
    if own == parameters:
        return "; the FSRS parameters in the file are already this folder's"
    if own is not None:
        return (
            "; this folder keeps its own fitted FSRS parameters, not the file's "
            "(`drill fsrs fit` fits them to the log as it is now)"
        )
    rescheduled = use_parameters(workspace, parameters)
    moved = "" if rescheduled is None else f", and FSRS rescheduled {counted(rescheduled, 'card')} with them"
    return f"; the FSRS parameters fitted to them are this folder's now{moved}"


@contextmanager
def _reading(source: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise ExportError(f"cannot read {source} ({exc.strerror or exc})") from exc
