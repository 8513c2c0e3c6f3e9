"""`drill stats` only reads: as a fresh process, with an interview date set, it never imports SQLModel (which takes
most of a second to import on a small machine), whether the day's plan and the replay are made or read back."""

from __future__ import annotations

import json
import subprocess
import sys

from drill.config.settings import config_path
from tests.cli.test_stats_figures_kept import DATE, TODAY, history  # noqa: F401  (the fixture)

RUN_STATS = """
import json, sys
from pathlib import Path
from drill import paths
paths.cards_dir = lambda: Path(sys.argv[1])  # the world's decks, as the test's own process sees them
from drill.cli import main
code = main(["stats", "--json", "--data-dir", sys.argv[2], "--today", sys.argv[3]])
print(json.dumps({"code": code, "loaded": sorted(m for m in ("sqlmodel", "sqlalchemy") if m in sys.modules)}))
"""


def stats_in_a_process(data) -> dict[str, object]:
    cards = data.parent / "cards"
    done = subprocess.run(
        [sys.executable, "-c", RUN_STATS, str(cards), str(data), TODAY.isoformat()],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    report = json.loads("\n".join(lines[:-1]))
    return {**json.loads(lines[-1]), "readiness": report["readiness"]}


def test_stats_with_a_date_imports_no_sqlmodel(history):  # noqa: F811
    config_path().write_text(f"interview_date = {DATE.isoformat()}\nminutes_per_day = 20\n", encoding="utf-8")
    first = stats_in_a_process(history)  # makes the day's plan and the replay, and keeps them
    again = stats_in_a_process(history)  # reads them back
    for run in (first, again):
        assert run["code"] == 0 and run["loaded"] == []
        assert run["readiness"] is not None
    assert again["readiness"] == first["readiness"]
