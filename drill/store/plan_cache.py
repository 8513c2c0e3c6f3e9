"""The kept plan: the study day's plan to the interview date, kept as JSON in plan.json beside the database.

Making the plan follows hundreds of simulated runs (drill.study.plan); it is the same all day
(drill.study.readiness), so the first start or `drill stats` of a study day makes it and the
ones after it read it back. What it was made of is its key (drill.study.kept_plan.plan_key);
the planner's own code joins it here, as the replay cache's does (drill.store.replay_cache): an
edit to a module the plan follows makes the plan again. A file for another key is replaced by
the next plan made: one plan is kept, the one of the latest inputs.

A file, not a table, like the replay cache: it is derived data that can always be made again,
so it needs no migration, it is read by one open and written atomically beside the database
without the Store (a start never imports SQLModel), and a plan that cannot be kept is simply
made next time. The file is plain JSON, never pickle: its first line is the key, compared as
text before anything is parsed; the second the plan (drill.study.kept_plan.plan_json). A file
that is missing, for another key or spoiled is not used.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from drill.store.derived_file import STUDY, file_digest, write_atomically
from drill.study.kept_plan import plan_from_json, plan_json
from drill.study.plan import StudyPlan

PLAN_FILE = "plan.json"
# The modules whose rules make a plan: an edit to one (an editable install keeps its version) makes it again.
_PLANNER_SOURCES = (
    "plan.py",
    "plan_runs.py",
    "day_cards.py",
    "memory_law.py",
    "forecast.py",
    "uncertainty.py",
    "grades.py",
    "pace.py",
    "sm2.py",
    "kept_plan.py",
)


@dataclass(frozen=True)
class PlanFile:
    """The kept plan of a data folder (drill.study.kept_plan.PlanKeeper)."""

    data_dir: Path

    @property
    def path(self) -> Path:
        return Path(self.data_dir) / PLAN_FILE

    def kept(self, key: str) -> StudyPlan | None:
        """The plan kept under `key`; None when the file holds another or cannot be read."""
        try:
            with self.path.open("rb") as fh:
                if fh.readline().rstrip(b"\n") != _file_key(key).encode("utf-8"):
                    return None  # another day, other inputs or other code: nothing more is parsed
                return plan_from_json(json.loads(fh.readline()))
        except Exception:  # whatever is wrong with it (cut short, edited, another layout), the plan is made again
            return None

    def keep(self, key: str, plan: StudyPlan) -> None:
        """Write `plan` under `key` atomically; a plan that cannot be written is simply made again next time."""
        try:
            body = json.dumps(plan_json(plan), separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError):  # a value JSON cannot hold (a NaN from a spoiled parameter)
            return
        text = _file_key(key).encode("utf-8") + b"\n" + body + b"\n"
        write_atomically(self.path, text, ".plan-")  # not written: each plan is made afresh


def _file_key(key: str) -> str:
    """The plan's key with the planner's code and drill's version."""
    import drill

    code = hashlib.sha256()
    for name in _PLANNER_SOURCES:
        code.update((file_digest(STUDY / name) or "-").encode("ascii"))
    return f"{key} {code.hexdigest()} {getattr(drill, '__version__', 'unknown')}"
