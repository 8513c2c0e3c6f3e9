"""--today: the commands and the review app take another day as today (to follow a plan ahead, or to test one).

One rule (drill.config.study_day): --today D is the study day D at any hour, in the app as in `drill stats`,
`drill plan` and `drill mock`; without it, the study day starts at the rollover hour.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json

import pytest

from drill.cli import main
from drill.config.study_day import clock_on, study_day_of

DAY = dt.date(2027, 3, 1)
# 02:00 and 10:00 of a calendar day: before and after the default 04:00 rollover
BEFORE_ROLLOVER = dt.datetime(2026, 11, 20, 2, 0)
AFTER_ROLLOVER = dt.datetime(2026, 11, 20, 10, 0)


def fixed(moment: dt.datetime):
    return lambda: moment


@pytest.mark.parametrize("now", [BEFORE_ROLLOVER, AFTER_ROLLOVER], ids=["02:00", "10:00"])
@pytest.mark.parametrize("hour", [0, 4, 23])
def test_the_moved_clock_is_on_the_chosen_study_day_at_any_hour(now, hour):
    clock = clock_on(DAY, hour, fixed(now))
    assert study_day_of(clock(), hour) == DAY == study_day_of(now, hour, DAY)
    assert clock() - now == dt.timedelta(days=(clock().date() - now.date()).days)  # moved by whole days only


def test_before_the_rollover_the_moved_clock_reads_the_next_calendar_date():
    """02:00 counts for the study day before it: the clock of study day D reads D + 1, 02:00."""
    assert clock_on(DAY, 4, fixed(BEFORE_ROLLOVER))() == dt.datetime(2027, 3, 2, 2, 0)
    assert clock_on(DAY, 4, fixed(AFTER_ROLLOVER))() == dt.datetime(2027, 3, 1, 10, 0)


def test_without_today_the_clock_is_the_systems_and_time_runs():
    system = dt.datetime.now
    assert clock_on(None, 4, system) is system
    clock = clock_on(DAY, 4)
    first = clock()
    assert clock() >= first  # time still runs: answer times and the mock's countdown keep working
    assert study_day_of(first, 4) == DAY


def test_today_before_or_after_the_command_reaches_it(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--today", "2027-03-01", "stats", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["--data-dir", str(data), "stats", "--json", "--today", "2027-03-01"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert before["today"] == after["today"] == "2027-03-01"


def _app_day(monkeypatch, data, argv, now):
    """The study day the app opens on for `drill ARGV` with the system clock at `now` (the app is built, not run)."""
    from drill.ui import app as ui_app

    built = {}

    def capture(options):
        app = ui_app.make_app(dataclasses.replace(options, clock=fixed(now)))
        built["app_day"] = app.today()
        built["session_day"] = app.session.today
        built["clock"] = app.clock()
        return 0

    monkeypatch.setattr(ui_app, "run_app", capture)
    assert main(["--data-dir", str(data), *argv]) == 0
    return built


@pytest.mark.parametrize("now", [BEFORE_ROLLOVER, AFTER_ROLLOVER], ids=["before-rollover", "after-rollover"])
@pytest.mark.parametrize("rollover", [None, "0", "23"])
def test_the_app_and_every_command_open_the_same_day_for_today(monkeypatch, tmp_path, capsys, now, rollover):
    data = tmp_path / "data"
    hour = [] if rollover is None else ["--day-starts-at", rollover]
    today = ["--today", DAY.isoformat()]
    opened = _app_day(monkeypatch, data, [*hour, *today], now)
    assert opened["app_day"] == opened["session_day"] == DAY
    assert study_day_of(opened["clock"], 4 if rollover is None else int(rollover)) == DAY

    assert main(["--data-dir", str(data), *hour, *today, "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["today"] == DAY.isoformat()

    # an interview a week ahead: the day the plan starts from is the point, and each day of a plan over the
    # bundled decks is a simulated day of study (a month ahead cost several seconds of CPU per case)
    interview = DAY + dt.timedelta(days=7)
    assert main(["--data-dir", str(data), *hour, *today, "plan", "--date", interview.isoformat(), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["days_left"] == (interview - DAY).days
    assert plan["plan"]["days"][0]["date"] == (DAY + dt.timedelta(days=1)).isoformat()  # the plan's day after today

    from drill.cli import mock as mock_cli

    args = argparse.Namespace(
        data_dir=str(data), decks=None, today=DAY, day_starts_at=None if rollover is None else int(rollover)
    )
    _, mock_day = mock_cli._context(args)
    assert mock_day == DAY


def test_the_mock_command_takes_today_after_it(monkeypatch, tmp_path):
    from drill.cli import mock as mock_cli

    seen = {}
    real = mock_cli._context

    def spy(args):
        workspace, day = real(args)
        seen["day"] = day
        return workspace, day

    monkeypatch.setattr(mock_cli, "_context", spy)
    assert main(["--data-dir", str(tmp_path / "data"), "mock", "--list", "--today", DAY.isoformat()]) == 0
    assert seen["day"] == DAY


@pytest.mark.parametrize("now", [BEFORE_ROLLOVER, AFTER_ROLLOVER], ids=["before-rollover", "after-rollover"])
def test_without_today_the_app_and_stats_share_the_rollover_of_the_settings_file(monkeypatch, tmp_path, now):
    """A settings file's day_starts_at is the app's and the commands' alike (the mock command read only the
    saved setting)."""
    from drill.cli import mock as mock_cli
    from drill.config.settings import load_settings
    from drill.workspace import Workspace

    config = tmp_path / "config.toml"
    config.write_text("day_starts_at = 0\n", encoding="utf-8")
    monkeypatch.setenv("DRILL_CONFIG", str(config))
    data = tmp_path / "data"
    opened = _app_day(monkeypatch, data, [], now)
    assert opened["app_day"] == now.date()  # 00:00 rollover: 02:00 is already that calendar day
    workspace = Workspace(data, [], settings=load_settings(), clock=fixed(now))
    assert workspace.study_day() == now.date()
    assert workspace.rollover_hour() == 0
    args = argparse.Namespace(data_dir=str(data), decks=None, settings=load_settings(), today=None)
    monkeypatch.setattr(mock_cli, "_close_abandoned", lambda workspace: None)
    workspace, _ = mock_cli._context(args)
    assert workspace.rollover_hour() == 0
