"""The app factory used by `drill` and by the tests."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Callable, Sequence

from textual.app import App

from drill import paths
from drill.cards.loader import load_decks_cached
from drill.session import DEFAULT_NEW_PER_DAY, DEFAULT_ROLLOVER_HOUR, ReviewSession, build_queue, study_day
from drill.store import fast


class DrillApp(App[int]):
    CSS_PATH = "drill.tcss"
    TITLE = "drill"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        data_dir: Path,
        deck_roots: Sequence[Path] | None = None,
        *,
        clock: Callable[[], dt.datetime] = dt.datetime.now,
        new_per_day: int | None = None,
        day_starts_at: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)
        self.clock = clock
        self.seed = seed
        decks = load_decks_cached(deck_roots, self.data_dir)
        self.deck_problems = decks.problems
        saved = fast.read_settings(self.data_dir)
        self.settings_to_save = {
            k: str(v) for k, v in (("new_per_day", new_per_day), ("day_starts_at", day_starts_at)) if v is not None
        }
        self.new_per_day = new_per_day if new_per_day is not None else int(saved.get("new_per_day", DEFAULT_NEW_PER_DAY))
        self.rollover_hour = (
            day_starts_at if day_starts_at is not None else int(saved.get("day_starts_at", DEFAULT_ROLLOVER_HOUR))
        )
        states = fast.read_states(self.data_dir)
        today = study_day(clock(), self.rollover_hour)
        new_done = sum(1 for s in states.values() if s.introduced_on == today)
        queue = build_queue(decks.cards.values(), states, today, new_limit=self.new_per_day, new_done_today=new_done)
        self.session = ReviewSession(cards=decks.cards, states=states, queue=queue, today=today)

    def on_mount(self) -> None:
        from drill.ui.review import ReviewScreen

        self.push_screen(ReviewScreen())


def make_app(args: argparse.Namespace) -> DrillApp:
    roots = [paths.cards_dir(), *[Path(p) for p in (args.decks or [])]]
    return DrillApp(
        paths.data_dir(args.data_dir),
        roots,
        new_per_day=getattr(args, "new_per_day", None),
        day_starts_at=getattr(args, "day_starts_at", None),
    )


def run_app(args: argparse.Namespace) -> int:
    app = make_app(args)
    app.run()
    return app.return_code or 0
