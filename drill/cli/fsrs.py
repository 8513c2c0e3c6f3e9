"""`drill fsrs`: fit the memory model's parameters to the learner's record, show them, or go back to the defaults.

The fitted parameters are kept in the database's saved settings (`fsrs_parameters`),
beside the review log they were fitted to, not in the settings file: they describe
this data folder's learner (a second folder, another profile, keeps its own), and
when FSRS schedules, saving them and rescheduling every card by replaying the log
with them is one transaction (as a scheduler switch is). Every prediction (readiness,
the plan, calibration) uses them, and FSRS scheduling too when it is the scheduler.
They travel with the log: `drill export reviews` writes them on the file's first line and
`drill import reviews` makes them the folder's when it has none (drill.cli.exchange).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from drill.cli import options
from drill.words import counted

if TYPE_CHECKING:
    from drill.cli import Subcommands
    from drill.workspace import Workspace


def add_parser(subparsers: Subcommands, name: str, help_text: str) -> None:
    parser = subparsers.add_parser(name, help=help_text)
    actions = parser.add_subparsers(dest="fsrs_action", metavar="ACTION", required=True)
    fit = actions.add_parser(
        "fit",
        help="fit FSRS's parameters to your reviews (400 or more), judged by log loss on the latest 20 %% held out; "
        "saved only when they predict the held-out reviews better",
    )
    reset = actions.add_parser("reset", help="go back to FSRS's default parameters")
    show = actions.add_parser("show", help="the parameters in use, fitted or the defaults")
    for action in (fit, reset, show):
        options.add_data_dir(action, options.DATABASE_HELP)
    fit.add_argument("--json", action="store_true", help=options.JSON_HELP)


def run(args: argparse.Namespace) -> int:
    from drill.workspace import Workspace

    workspace = Workspace(options.data_dir(args), settings=getattr(args, "settings", None))
    try:
        if args.fsrs_action == "fit":
            return _fit(args, workspace)
        if args.fsrs_action == "reset":
            return _reset(workspace)
        return _show(workspace)
    finally:
        workspace.close()


def _fit(args: argparse.Namespace, workspace: Workspace) -> int:
    from drill.study.fitting import FitUnavailable, NotEnoughReviews, fit_parameters

    try:
        fitted = fit_parameters(workspace.review_log())
    except (FitUnavailable, NotEnoughReviews) as exc:
        print(f"drill fsrs fit: {exc}", file=sys.stderr)
        return 1
    saved = fitted.improved and not fitted.kept_defaults
    rescheduled = use_parameters(workspace, fitted.parameters) if saved else None
    if args.json:
        print(json.dumps({**fitted.as_json(), "saved": saved, "rescheduled": rescheduled}, indent=2))
        return 0
    print(
        f"Fitted on the first {fitted.fitted_on} of {fitted.reviews} reviews and their {fitted.same_day} same-day "
        f"repeats, at the times logged, in {fitted.seconds:.1f} s; judged on the {fitted.held_out} later reviews held out."
    )
    change = (fitted.log_loss_before - fitted.log_loss_after) / fitted.log_loss_before
    print(
        f"Log loss on the held-out reviews: {fitted.log_loss_before:.4f} with the defaults, "
        f"{fitted.log_loss_after:.4f} fitted."
    )
    if fitted.kept_defaults:
        print("The optimizer kept the defaults (too few reviews of a card on a later day): nothing saved.")
    elif saved:
        print(
            f"The fitted parameters predict your reviews better ({change:.1%} lower log loss): saved. "
            "Readiness, the plan and calibration use them" + _scheduling_words(rescheduled) + "."
        )
    else:
        print("The fitted parameters predict your held-out reviews no better than the defaults: nothing saved.")
    return 0


def _scheduling_words(rescheduled: int | None) -> str:
    if rescheduled is None:
        return "; FSRS scheduling will too when you switch to it (drill config set scheduler fsrs)"
    return f", and FSRS rescheduled {counted(rescheduled, 'card')} with them"


def use_parameters(workspace: Workspace, parameters: tuple[float, ...] | None) -> int | None:
    """Save the parameters (None: the defaults); when FSRS schedules, reschedule every card with them.

    The number of cards rescheduled, or None when SM-2 schedules.
    """
    from drill.study.scheduling import PARAMETERS_SETTING, parameters_text, saved_scheduler, switch_scheduler

    store = workspace.store()
    if saved_scheduler(workspace.saved_settings()) == "fsrs":
        return switch_scheduler(store, "fsrs", workspace.settings.max_interval_days, parameters).cards
    if parameters is None:
        store.remove_setting(PARAMETERS_SETTING)
    else:
        store.set_setting(PARAMETERS_SETTING, parameters_text(parameters))
    return None


def _reset(workspace: Workspace) -> int:
    if workspace.fsrs_parameters() is None:
        print("FSRS already uses its default parameters.")
        return 0
    rescheduled = use_parameters(workspace, None)
    words = "" if rescheduled is None else f"; FSRS rescheduled {counted(rescheduled, 'card')} with them"
    print(f"FSRS is back to its default parameters{words}.")
    return 0


def _show(workspace: Workspace) -> int:
    parameters = workspace.fsrs_parameters()
    if parameters is None:
        print("FSRS uses its default parameters (drill fsrs fit fits them to your reviews).")
    else:
        print("FSRS uses parameters fitted to your reviews (drill fsrs reset goes back to the defaults):")
        print(" ".join(f"{p:.4f}" for p in parameters))
    return 0
