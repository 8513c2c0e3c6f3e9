"""The top-level flags: bad values stop with one plain line and exit 2, good ones get through."""

import os
import subprocess
import sys

import pytest

from drill import cli
from drill.cli import stats as stats_command
from tests.conftest import bundled_cards, stretched


def run_drill(tmp_path, *args):
    """`drill --data-dir <tmp>/data ARGS` in a child process; DRILL_HOME points into tmp too."""
    env = {**os.environ, "DRILL_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "drill.cli", "--data-dir", str(tmp_path / "data"), *args],
        capture_output=True,
        text=True,
        timeout=stretched(120),
        env=env,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--new-per-day", "-5"], "argument --new-per-day: must be 0 or more (got -5)"),
        (["--new-per-day", "ten"], "argument --new-per-day: must be a whole number (got 'ten')"),
        (["--new-per-day", "2.5"], "argument --new-per-day: must be a whole number (got '2.5')"),
        (["--day-starts-at", "24"], "argument --day-starts-at: must be an hour from 0 to 23 (got 24)"),
        (["--day-starts-at", "-1"], "argument --day-starts-at: must be an hour from 0 to 23 (got -1)"),
        (["--day-starts-at", "4am"], "argument --day-starts-at: must be a whole number (got '4am')"),
        (
            ["--new-order", "alphabetical"],
            "argument --new-order: must be one of lab, random, deck (got 'alphabetical')",
        ),
        (["--cram", "stats"], "--cram opens the review app; leave out the command 'stats'"),
        (["--card", "softmax", "stats"], "--card opens the review app; leave out the command 'stats'"),
    ],
)
def test_bad_flag_exits_2_with_one_line(tmp_path, args, message):
    done = run_drill(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [f"drill: error: {message}"]
    assert done.stderr.rstrip().splitlines()[-1] == errors[0]


def test_good_flags_reach_stats_and_write_nothing_outside_the_data_dir(tmp_path):
    """One child process for both checks: each costs over half a second of CPU (the store, the bundled decks)."""
    import json

    done = run_drill(
        tmp_path, "--new-per-day", "0", "--day-starts-at", "23", "--new-order", "random", "stats", "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["new_per_day"], report["day_starts_at"], report["new_order"]) == (0, 23, "random")
    assert report["new_today"] == 0
    assert (tmp_path / "data" / "drill.sqlite3").exists() and not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], {"new_per_day": None, "day_starts_at": None, "new_order": None, "card": None, "cram": False}),
        (["--new-per-day", "0", "--day-starts-at", "0"], {"new_per_day": 0, "day_starts_at": 0}),
        (["--new-per-day", " 25 ", "--day-starts-at", "23"], {"new_per_day": 25, "day_starts_at": 23}),
        (["--new-order", "deck"], {"new_order": "deck"}),
        (["--new-order", "Random"], {"new_order": "random"}),
        (["--card", "softmax"], {"card": "softmax", "cram": False}),
        (["--card", "softmax", "--cram"], {"card": "softmax", "cram": True}),
        (["--cram"], {"card": None, "cram": True}),
    ],
)
def test_good_flags_parse(argv, expected):
    parser, _ = cli.build_parser()
    args = parser.parse_args(argv)
    assert args.command is None
    assert {k: getattr(args, k) for k in expected} == expected


@pytest.mark.parametrize(
    "argv",
    [["--data-dir", "X", "stats"], ["stats", "--data-dir", "X"], ["--data-dir", "Y", "check", "--data-dir", "X"]],
)
def test_data_dir_holds_before_or_after_the_command(argv):
    parser, _ = cli.build_parser()
    assert parser.parse_args(argv).data_dir == "X"


def test_store_error_is_one_line_and_exit_1(monkeypatch, capsys):
    from drill.store.errors import StoreError

    def broken(args):
        raise StoreError("/x/drill.sqlite3", "/x/drill.sqlite3 was written by a newer drill", "newer")

    monkeypatch.setattr(stats_command, "run", broken)
    assert cli.main(["stats"]) == 1
    out = capsys.readouterr()
    assert out.err == "drill: /x/drill.sqlite3 was written by a newer drill\n" and out.out == ""


def test_a_file_that_is_no_database_is_reported_not_raised(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "drill.sqlite3").write_text("these are notes, not a database\n" * 40)
    done = run_drill(tmp_path, "stats")
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("drill: ") and "drill.sqlite3" in line and "Traceback" not in done.stderr


def test_interrupt_exits_130_quietly(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(stats_command, "run", interrupted)
    assert cli.main(["stats"]) == 130
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""


def test_other_errors_are_not_swallowed(monkeypatch):
    def buggy(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(stats_command, "run", buggy)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["stats"])


def test_a_bare_drill_gets_the_parsers_defaults_without_building_it():
    parser, _ = cli.build_parser([])
    assert vars(cli.app.no_arguments()) == vars(parser.parse_args([]))


def test_version_prints_the_package_version_and_exits_0(capsys):
    from drill import __version__

    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"drill {__version__}"


@pytest.mark.parametrize(
    ("argv", "attached"),
    [
        (["calc", "zero", "--params", "-7B"], ["calc", "zero", "--params=-7B"]),
        (["--new-per-day", "-.5"], ["--new-per-day=-.5"]),
        (["--new-per-day", "3"], ["--new-per-day", "3"]),
        (["--params=-7B", "-3"], ["--params=-7B", "-3"]),  # already attached: left alone
        (["kernel", "run", "reduce", "-f", "x.cu"], ["kernel", "run", "reduce", "-f", "x.cu"]),
    ],
)
def test_a_value_that_starts_with_a_minus_stays_with_its_option(argv, attached):
    assert cli.attach_negative_values(argv) == attached


@pytest.mark.parametrize(
    "argv,name",
    [(["stats"], "stats"), (["mock", "--plan", "--minutes", "10"], "mock"), (["kernel", "list"], "kernel")],
)
def test_a_command_that_goes_on_without_broken_cards_says_so(tmp_path, write_deck, capsys, argv, name):
    deck = write_deck("deck: Mine\ncards:\n  - id: broken\n    kind: concept\n")  # no topic, prompt, answer
    assert cli.main(["--data-dir", str(tmp_path / "data"), *argv, "--decks", str(deck)]) == 0
    err = capsys.readouterr().err
    assert f"drill {name}: 4 problems in the decks, those cards left out (`drill check` lists them)" in err
    if name == "stats":
        assert cli.main(["--data-dir", str(tmp_path / "data"), *argv]) == 0
        assert "problem" not in capsys.readouterr().err  # the bundled decks alone: nothing to say


# --focus-new: new cards of the focused topics past the day's limit ------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--focus-new", "-1", "--topic", "moe"], "argument --focus-new: must be 0 or more (got -1)"),
        (["--focus-new", "many", "--topic", "moe"], "argument --focus-new: must be a whole number (got 'many')"),
        (["--focus-new", "5"], "--focus-new goes with --topic or --weak (the new cards of the topics practised)"),
    ],
)
def test_a_bad_focus_new_stops_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"drill: error: {message}"


def focused_app(tmp_path, *flags):
    from drill.cli.app import app_options
    from drill.ui.app import make_app

    parser, _ = cli.build_parser()
    # --new-per-day 0: the day's new cards are done before the topic is chosen
    return make_app(
        app_options(parser.parse_args(["--data-dir", str(tmp_path / "data"), "--new-per-day", "0", *flags]))
    )


def test_a_topic_starts_its_new_cards_when_the_days_are_done(tmp_path):
    moe = [cid for cid, card in bundled_cards().items() if card.topic == "moe"]
    assert len(moe) > 10
    assert focused_app(tmp_path).session.queue == []
    app = focused_app(tmp_path, "--topic", "moe")
    assert len(app.session.queue) == 10 and set(app.session.queue) <= set(moe)
    app = focused_app(tmp_path, "--topic", "moe", "--focus-new", "3")
    assert len(app.session.queue) == 3 and app.session.focus_new == 3


def test_a_topic_held_back_by_focus_new_says_so_and_names_the_flag(tmp_path):
    from drill.ui.review_words import done_text

    app = focused_app(tmp_path, "--topic", "moe", "--focus-new", "0")
    assert app.session.queue == []
    text = done_text(app.session)
    assert "Nothing in moe is due today." in text and "`--focus-new 0` lets a focused session introduce none" in text
    assert "`drill --topic moe --focus-new 10`" in text and "`drill --topic moe --cram`" in text
