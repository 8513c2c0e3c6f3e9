"""--today: the commands and the review app take another day as today (to follow a plan ahead, or to test one)."""

from __future__ import annotations

import argparse
import datetime as dt
import json

from drill.cli import main
from drill.cli.options import running_clock_for


def test_the_app_clock_runs_on_the_day_given():
    day = dt.date.today() + dt.timedelta(days=20)
    clock = running_clock_for(argparse.Namespace(today=day))
    first = clock()
    assert first.date() == day
    assert clock() >= first  # time still runs: answer times and the mock's countdown keep working
    assert running_clock_for(argparse.Namespace(today=None)) == dt.datetime.now


def test_today_before_or_after_the_command_reaches_it(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--today", "2027-03-01", "stats", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["--data-dir", str(data), "stats", "--json", "--today", "2027-03-01"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert before["today"] == after["today"] == "2027-03-01"


def test_the_app_is_built_with_the_clock_of_today(monkeypatch, tmp_path):
    from drill.ui import app as ui_app

    built = {}

    def capture(args):
        built["clock"] = ui_app.make_app(args).clock
        return 0

    monkeypatch.setattr(ui_app, "run_app", capture)
    day = dt.date.today() + dt.timedelta(days=3)
    assert main(["--data-dir", str(tmp_path / "data"), "--today", day.isoformat()]) == 0
    assert built["clock"]().date() == day
