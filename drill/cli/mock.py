"""`drill mock`: plan a mock interview, list past mocks, write a report; with no option, sit one in the app."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drill.cli import options

if TYPE_CHECKING:
    from drill.start import MockAsked
    from drill.workspace import Workspace


def minutes(text: str) -> int:
    """--minutes: a whole number of minutes, 1 to 600."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of minutes (got {text!r})") from None
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError(f"must be 1 to 600 minutes (got {value})")
    return value


def add_parser(subparsers: Any, name: str, help_text: str) -> None:
    from drill.mock.plan import DEFAULT_MINUTES
    from drill.mock.rounds import DEFAULT_ROUND_MINUTES, MAX_ROUND_MINUTES, MIN_ROUND_MINUTES, RoundKind

    parser = subparsers.add_parser(
        name,
        help=help_text,
        description="A timed mock interview. A round (--round) is one problem asked in stages for 35-45 minutes, "
        "as real interview loops do, with follow-ups on the same problem; a quick mock (--quick) is a quiz of "
        "unrelated questions weighted toward your weakest topics. With neither, opens the app on the setup "
        "screen, which offers the rounds first and the quick mock's topics after them.",
    )
    options.add_data_dir(parser, options.DATABASE_HELP)
    options.add_decks(parser)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--plan", action="store_true", help="print the questions a mock would ask, without starting it")
    what.add_argument("--list", action="store_true", help="list past mocks")
    what.add_argument("--report", metavar="last|ID", help="write the report of a finished mock")
    form = parser.add_mutually_exclusive_group()
    form.add_argument(
        "--round",
        choices=[k.value for k in RoundKind],
        metavar="KIND",
        help="one problem in stages: " + "|".join(k.value for k in RoundKind) + " (offered first on the setup screen)",
    )
    form.add_argument("--quick", action="store_true", help="the quiz format: unrelated questions, no rounds offered")
    parser.add_argument(
        "--minutes",
        type=minutes,
        default=None,
        metavar="N",
        help=f"length of the mock (default {DEFAULT_MINUTES}; a round {DEFAULT_ROUND_MINUTES}, "
        f"{MIN_ROUND_MINUTES} to {MAX_ROUND_MINUTES})",
    )
    parser.add_argument("--topics", metavar="A,B", help="comma-separated topic ids to draw from")
    parser.add_argument("--track", metavar="ID", help="a preset mix of topics: training, inference or kernels")
    parser.add_argument("--questions", type=options.positive_count, metavar="N", help="at most N questions")
    parser.add_argument(
        "--practice",
        action="store_true",
        help="practice mode: each answer's verdict and expected answer right after it (else held until the end)",
    )
    parser.add_argument(
        "--hard",
        action="store_true",
        help="hard mode: numeric questions withhold the GPU and model figures (HBM and NVLink bandwidth, capacity, "
        "parameter counts, layers, heads), which you supply from memory; answers are checked more loosely",
    )
    parser.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--format", choices=("md", "html"), default="md", help="report format (default md)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of standard output")
    parser.add_argument("--json", action="store_true", help=f"{options.JSON_HELP} (--plan, --list)")
    options.add_today(parser)


def run(args: argparse.Namespace) -> int:
    from drill.mock.plan import PlanError

    try:
        if args.list:
            return _list(args)
        if args.report is not None:  # --report "" is a report asked for badly, not the setup screen
            return _report(args)
        if args.plan:
            return _plan(args)
    except PlanError as exc:
        print(f"drill mock: {exc}", file=sys.stderr)
        return 2
    from drill.cli.app import run as open_app

    return open_app(args, mock=mock_asked(args))


def mock_asked(args: argparse.Namespace) -> MockAsked:
    """What `drill mock` with no --list, --report or --plan asks the app's mock setup to open with."""
    from drill.mock.plan import chosen_topics
    from drill.start import MockAsked

    return MockAsked(
        minutes=args.minutes,
        topics=tuple(chosen_topics(args.topics, args.track)),
        questions=args.questions,
        practice=args.practice,
        hard=args.hard,
        round=args.round,
        quick=args.quick,
    )


def _close_abandoned(workspace: Workspace) -> None:
    """Close the mocks a closed terminal left running, so that the list and reports show them."""
    now = dt.datetime.now()
    try:
        if not workspace.has_abandoned_mock(now):
            return  # the usual case: the database layer is not even imported
        workspace.store().close_abandoned_mocks(now)
    except Exception:  # a read-only or locked database: the list shows what it can
        pass
    finally:
        workspace.close()


def _context(args: argparse.Namespace) -> tuple[Workspace, dt.date]:
    """The learner's workspace (the decks loaded, their problems said) and the study day (drill.config.study_day)."""
    from drill.workspace import Workspace

    workspace = Workspace(
        options.data_dir(args),
        options.deck_roots(args),
        settings=getattr(args, "settings", None),
        today=getattr(args, "today", None),
        day_starts_at=getattr(args, "day_starts_at", None),
    )
    _close_abandoned(workspace)
    if workspace.decks.problems:
        print(f"drill mock: {workspace.decks.left_out()}", file=sys.stderr)
    return workspace, workspace.study_day()


def _round_plan(args: argparse.Namespace) -> int:
    """`drill mock --plan --round KIND`: the round a mock would ask, its stages and their minutes."""
    from drill.mock.plan import follow_up_reserve, gpu_count, judge_can_run, reviewed_within
    from drill.mock.rounds import make_round, round_kind, round_share_on_scenarios

    workspace, today = _context(args)
    states = workspace.states()
    plan = make_round(
        workspace.cards,
        round_kind(args.round),
        minutes=args.minutes,
        seed=args.seed,
        recent=reviewed_within(states.values(), today),
        exclude=[cid for cid, s in states.items() if s.suspended],
        judge_available=judge_can_run(),
        gpus=gpu_count(),
    )
    if args.json:
        print(
            json.dumps(
                {**plan.as_json(), "minutes": plan.minutes, "questions": plan.plan.as_json()["questions"]}, indent=2
            )
        )
        return 0
    kept = follow_up_reserve(plan.minutes)
    share = round_share_on_scenarios(plan)
    print(f"a {plan.minutes}-minute {plan.kind.value} round: {plan.title} ({plan.source_id})")
    print(f"  {plan.plan.planned_minutes} minutes of stages, {kept} kept for follow-ups; {share:.0%} on this problem")
    for stage in plan.stages:
        when = "if earned" if stage.twist else f"{stage.minutes:2d} min"  # a twist is a follow-up
        print(f"  {stage.number:2d}. {when:<9}  {stage.label:<9} {stage.dimension.value:<14} {stage.card_id}")
    if not plan.timed:
        from drill.mock.rounds import NOT_TIMED

        print(f"  the kernel will be {NOT_TIMED}")
    if args.seed is None:
        print("one draw: each round draws its own problem and numbers, preferring one not asked in 7 days")
    return 0


def _plan(args: argparse.Namespace) -> int:
    if args.round:
        return _round_plan(args)
    from drill.mock.plan import (
        DEFAULT_MINUTES,
        chosen_topics,
        follow_up_reserve,
        judge_can_run,
        make_plan,
        reviewed_within,
    )
    from drill.study.standing import measured_weakness

    workspace, today = _context(args)
    cards = workspace.cards
    topics = chosen_topics(args.topics, args.track, {c.topic for c in cards.values()})
    weakness = measured_weakness(workspace.weakness(today))  # a topic not practised yet draws at the prior
    states = workspace.states()
    suspended = [cid for cid, s in states.items() if s.suspended]
    plan = make_plan(
        cards,
        weakness,
        minutes=args.minutes or DEFAULT_MINUTES,
        topics=topics,
        questions=args.questions,
        judge_available=judge_can_run(),
        seed=args.seed,
        exclude=suspended,
        recent=reviewed_within(states.values(), today),
    )
    if args.json:
        print(json.dumps(plan.as_json(), indent=2))
        return 0
    n = len(plan.questions)
    kept = follow_up_reserve(plan.minutes)
    room = f", {kept} kept for follow-ups" if kept else ""
    print(
        f"a {plan.minutes}-minute mock: {n} question{'' if n == 1 else 's'}, {plan.planned_minutes} minutes planned{room}"
    )
    for i, q in enumerate(plan.questions, 1):
        print(f"  {i:2d}. {q.minutes:2d} min  {q.kind:<13} {q.topic:<20} {q.card_id}")
    if args.seed is None:
        print("one draw of the kinds and topics a mock holds: each mock draws its own questions, weak topics first")
    return 0


def _list(args: argparse.Namespace) -> int:
    from drill.mock.run import STATUS_WORDS

    workspace, today = _context(args)
    mocks = workspace.progress_rows(today).mocks
    if args.json:
        rows = [
            {"id": i, "started_at": at, "status": status, "score": score, "minutes": minutes}
            for i, at, status, score, minutes in mocks
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not mocks:
        print("no mocks yet: `drill mock` starts one")
        return 0
    print(f"{'id':>4}  {'started':<19}  {'length':>7}  {'status':<12} {'score':>5}")
    for i, at, status, score, minutes in mocks:
        shown = "-" if score is None else f"{score:.0%}"
        words = STATUS_WORDS.get(status, status)
        print(f"{i:4d}  {at.replace('T', ' ')}  {minutes:3d} min  {words:<12} {shown:>5}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from drill.mock.plan import PlanError
    from drill.mock.render import render_html, render_markdown
    from drill.mock.run import ABANDONED

    workspace, today = _context(args)
    endings = _mock_endings(workspace, today)
    if args.report == "last":
        if not endings:
            raise PlanError("no finished mock yet")
        mock_id = next(iter(endings))
    else:
        try:
            mock_id = int(args.report)
        except ValueError:
            raise PlanError(f"--report takes `last` or a mock id (got {args.report!r})") from None
        if mock_id not in endings:
            raise PlanError(f"no finished mock {mock_id} (`drill mock --list` shows them)")
    report = workspace.mock_report(mock_id)
    if report is None:
        kept = (
            "no question was answered, so it is listed as abandoned and counts nowhere"
            if endings[mock_id] == ABANDONED
            else "its answers are kept and counted in its score and in your stats"
        )
        raise PlanError(f"mock {mock_id} has no report: it was cut off (the app closed mid-mock); {kept}")
    text = render_html(report) if args.format == "html" else render_markdown(report)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _mock_endings(workspace: Workspace, today: dt.date) -> dict[int, str]:
    """Each finished or stopped mock's id and how it ended, newest first (none before the database is current)."""
    if not workspace.has_current_schema():
        return {}
    return {m[0]: m[2] for m in workspace.progress_rows(today).mocks}
