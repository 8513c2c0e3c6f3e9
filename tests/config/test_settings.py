"""The settings file: defaults, a checked value for every key, `drill config`, and flag > file > saved setting."""

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from drill import cli
from drill.cli.app import app_options
from drill.config import settings as cfg
from drill.config.settings import ConfigError, Settings, load_settings
from drill.start import AppOptions
from drill.store.reader import read_settings
from drill.store.store import Store
from drill.ui.app import make_app
from tests.conftest import FixedClock, stretched, type_keys
from tests.ui.test_keys import CONCEPTS, db, settle

NOW = dt.datetime(2026, 5, 10, 12, 0)
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(autouse=True)
def config_file(tmp_path, monkeypatch) -> Path:
    """Every test gets its own settings file path (not there until a test writes it)."""
    path = tmp_path / "config" / "config.toml"
    monkeypatch.setenv("DRILL_CONFIG", str(path))
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def drill(*args: str, capsys) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def save(data: Path, **values: str) -> None:
    """Settings as earlier flags left them in the database."""
    store = Store(data)
    for key, value in values.items():
        store.set_setting(key, value)
    store.close()


# -- reading the file ----------------------------------------------------------------


def test_no_file_gives_the_defaults(config_file):
    settings = load_settings()
    assert settings == Settings(path=config_file)
    assert [getattr(settings, k) for k in cfg.KEYS] == [
        10,
        4,
        "sm2",
        36500,
        "lab",
        "textual-dark",
        "",
        60.0,
        None,
        "",
        60,
        0.9,
        {},
    ]
    assert settings.in_file == frozenset() and settings.from_file("new_per_day") is None


def test_the_file_lives_in_the_platform_config_folder_unless_drill_config_names_one(config_file, monkeypatch):
    from platformdirs import user_config_dir

    assert cfg.config_path() == config_file
    monkeypatch.delenv("DRILL_CONFIG")
    assert cfg.config_path() == Path(user_config_dir("drill", appauthor=False)) / "config.toml"


@pytest.mark.parametrize(
    "text, attr, value",
    [
        ("new_per_day = 0", "new_per_day", 0),
        ("new_per_day = 25", "new_per_day", 25),
        ("day_starts_at = 0", "day_starts_at", 0),
        ("day_starts_at = 23", "day_starts_at", 23),
        ('scheduler = "fsrs"', "scheduler", "fsrs"),
        ('new_order = "random"', "new_order", "random"),
        ('theme = "nord"', "theme", "nord"),
        ('theme = "textual-light"', "theme", "textual-light"),
        ('gpu_host = "me@gpu-box.example.com"', "gpu_host", "me@gpu-box.example.com"),
        ('gpu_host = ""', "gpu_host", ""),
        ('gpu_host = "gpu-box"', "gpu_host", "gpu-box"),  # an ~/.ssh/config alias, as --gpu-host takes
        ('gpu_host = "me@gpu-box:2222"', "gpu_host", "me@gpu-box:2222"),  # the port goes to ssh as -p
        ("max_interval_days = 365", "max_interval_days", 365),
        ("max_interval_days = 36500", "max_interval_days", 36500),
        ("judge_timeout = 2.5", "judge_timeout", 2.5),
        ("judge_timeout = 300", "judge_timeout", 300.0),
        (
            '[keys]\n"review.suspend" = "f6"\n"review.undo" = "f2,ctrl+z"',
            "keys",
            {"review.suspend": "f6", "review.undo": "f2,ctrl+z"},
        ),
    ],
)
def test_good_values_are_read(config_file, text, attr, value):
    settings = load_settings(write(config_file, text + "\n"))
    assert getattr(settings, attr) == value
    assert settings.in_file == {attr}


WHOLE, HOUR, SECONDS = (
    "must be a whole number >= 0",
    "must be a whole number from 0 to 23",
    "must be a number of seconds > 0",
)
THEME = "must be a Textual theme such as textual-dark, textual-light or nord"
HOST = (
    "must look like user@host, host or user@host:port, with only letters, digits, '.', '_' and '-' in the names,"
    ' or "" to judge kernels on this machine'
)
KEY_LIST = 'must be a key, or keys separated by commas, such as "ctrl+y"'
BINDING_ID = "must be a binding id such as review.suspend (a screen, a dot, a name)"
KNOWN = (
    "known: new_per_day, day_starts_at, scheduler, max_interval_days, new_order, theme, gpu_host, judge_timeout, interview_date, interview_track, minutes_per_day,"
    " readiness_target, keys"
)
DAYS = "must be a whole number of days from 1 to 36500"
BAD = [
    ('new_per_day = "lots"', f'new_per_day: {WHOLE} (got "lots")'),
    ("new_per_day = -1", f"new_per_day: {WHOLE} (got -1)"),
    ("new_per_day = 2.5", f"new_per_day: {WHOLE} (got 2.5)"),
    ("new_per_day = true", f"new_per_day: {WHOLE} (got true)"),
    ("day_starts_at = 24", f"day_starts_at: {HOUR} (got 24)"),
    ('day_starts_at = "4am"', f'day_starts_at: {HOUR} (got "4am")'),
    ('scheduler = "anki"', 'scheduler: must be one of sm2, fsrs (got "anki")'),
    ("max_interval_days = 0", f"max_interval_days: {DAYS} (got 0)"),
    ("max_interval_days = 36501", f"max_interval_days: {DAYS} (got 36501)"),
    ("max_interval_days = 365.5", f"max_interval_days: {DAYS} (got 365.5)"),
    ('max_interval_days = "100y"', f'max_interval_days: {DAYS} (got "100y")'),
    ('new_order = "alphabetical"', 'new_order: must be one of lab, random, deck (got "alphabetical")'),
    ("new_order = [1]", "new_order: must be one of lab, random, deck (got a list)"),
    ('theme = "nrod"', f'theme: {THEME} (got "nrod"); did you mean nord?'),
    ("theme = 3", f"theme: {THEME} (got 3)"),
    ('gpu_host = "a@b=c"', f'gpu_host: {HOST} (got "a@b=c")'),
    (
        'gpu_host = "-oProxyCommand=x@y"',
        "gpu_host: must not start with '-' (ssh would read it as an option); write user@host, host or"
        ' user@host:port, or "" to judge kernels on this machine (got "-oProxyCommand=x@y")',
    ),
    ('gpu_host = "me @box"', f'gpu_host: {HOST} (got "me @box")'),
    ("judge_timeout = 0", f"judge_timeout: {SECONDS} (got 0)"),
    ("judge_timeout = -5", f"judge_timeout: {SECONDS} (got -5)"),
    ("judge_timeout = nan", f"judge_timeout: {SECONDS} (got nan)"),
    ('judge_timeout = "60"', f'judge_timeout: {SECONDS} (got "60")'),
    ("keys = 3", 'keys: must be a table of binding id = "keys", such as "review.suspend" = "ctrl+y" (got 3)'),
    ('[keys]\n"review.suspend" = 5', f'keys."review.suspend": {KEY_LIST} (got 5)'),
    ('[keys]\n"review.suspend" = "ctrl y"', f'keys."review.suspend": {KEY_LIST} (got "ctrl y")'),
    ('[keys]\nsuspend = "f6"', f"keys.suspend: {BINDING_ID}"),
    ("new_per_dya = 3", "new_per_dya: unknown key (did you mean new_per_day?)"),
    ("colour = 3", f"colour: unknown key ({KNOWN})"),
    ("new_per_day = ", "not valid TOML: Invalid value (at line 1, column 15)"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[m.split(":")[0] + "-" + str(i) for i, (_, m) in enumerate(BAD)])
def test_a_bad_value_names_the_file_and_the_key(config_file, text, message):
    write(config_file, text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value) == f"{config_file}: {message}"


def test_a_file_that_is_not_utf8_or_not_a_file_is_named(config_file, tmp_path):
    config_file.parent.mkdir(parents=True)
    config_file.write_bytes(b'theme = "\xff"\n')
    with pytest.raises(ConfigError, match=re.escape(f"{config_file}: not UTF-8 text")):
        load_settings()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(ConfigError, match=re.escape(f"{folder}: cannot read the settings file")):
        load_settings(folder)


def test_the_settings_themes_are_textuals(config_file):
    from textual.theme import BUILTIN_THEMES

    assert cfg.THEMES <= set(BUILTIN_THEMES)  # the settings never accept a theme Textual lacks
    assert load_settings(write(config_file, 'theme = "gruvbox"\n')).theme == "gruvbox"
    with pytest.raises(ConfigError, match="theme: must be a Textual theme"):
        load_settings(write(config_file, 'theme = "grubvox"\n'))


def test_the_readme_documents_the_template_and_its_examples_are_the_defaults(config_file):
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index("## Settings file") : readme.index("## Commands")]
    assert cfg.TEMPLATE in section
    assert load_settings(write(config_file, cfg.TEMPLATE)) == Settings(path=config_file)
    uncommented = re.sub(r"(?m)^# ((\w+|\"[\w.]+\") = .*)$", r"\1", cfg.TEMPLATE)
    settings = load_settings(write(config_file, uncommented))
    assert settings.in_file == set(cfg.KEYS)
    defaults = Settings()
    assert [getattr(settings, k) for k in cfg.KEYS[:-1]] == [getattr(defaults, k) for k in cfg.KEYS[:-1]]
    assert dict(settings.keys) == {"review.suspend": "ctrl+y"}


# -- precedence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, in_file, saved, expected",
    [
        (None, None, None, (10, "default")),
        (None, None, "5", (5, "saved setting")),
        (None, None, "many", (10, "default")),  # a damaged saved value falls back, as before
        (None, 3, "5", (3, "file")),
        (7, 3, "5", (7, "flag")),
        (7, None, None, (7, "flag")),
        (0, 3, None, (0, "flag")),
    ],
)
def test_a_flag_beats_the_file_which_beats_the_saved_setting(config_file, flag, in_file, saved, expected):
    if in_file is not None:
        write(config_file, f"new_per_day = {in_file}\n")
    stored = {} if saved is None else {"new_per_day": saved}
    chosen = {e.key: e for e in cfg.effective(load_settings(), stored, {"new_per_day": flag})}
    assert (chosen["new_per_day"].value, chosen["new_per_day"].source) == expected
    assert cfg.study_settings(load_settings(), stored, new_per_day=flag)[0] == expected[0]


def test_stats_takes_the_flag_then_the_file_then_the_saved_setting(config_file, tmp_path, capsys):
    import json

    data = tmp_path / "data"
    save(data, new_per_day="5", new_order="deck")

    def report(*flags):
        code, out, err = drill("--data-dir", str(data), *flags, "stats", "--json", capsys=capsys)
        assert code == 0, err
        found = json.loads(out)
        return found["new_per_day"], found["new_order"], found["day_starts_at"]

    assert report() == (5, "deck", 4)
    write(config_file, "new_per_day = 3\nday_starts_at = 6\n")
    assert report() == (3, "deck", 6)
    assert report("--new-per-day", "7", "--new-order", "random") == (7, "random", 6)
    assert read_settings(data) == {"new_per_day": "5", "new_order": "deck"}  # stats saves nothing


def deck(write_deck):
    return write_deck("cards:\n" + CONCEPTS)


def test_the_app_takes_the_flag_then_the_file_then_the_saved_setting(config_file, tmp_path, write_deck):
    data = tmp_path / "data"
    save(data, new_order="deck", day_starts_at="2")
    write(config_file, 'new_order = "random"\nnew_per_day = 1\n')
    app = make_app(AppOptions(data, [deck(write_deck)], clock=FixedClock(NOW), settings=load_settings()))
    assert (app.new_order, app.new_per_day, app.rollover_hour) == ("random", 1, 2)
    assert app.start.settings_to_save == {}  # the file's values stay in the file
    app = make_app(
        AppOptions(data, [deck(write_deck)], clock=FixedClock(NOW), settings=load_settings(), new_order="lab")
    )
    assert (app.new_order, app.new_per_day) == ("lab", 1)
    assert app.start.settings_to_save == {"new_order": "lab"}  # a flag is still saved, as before


# -- a bad file stops every command -----------------------------------------------------


def run_drill(config_file: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DRILL_CONFIG": str(config_file), "DRILL_HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "drill.cli", *args], capture_output=True, text=True, timeout=stretched(120), env=env
    )


@pytest.mark.parametrize(
    "args",
    [["stats"], [], ["--card", "k-concept"], ["mock", "--list"], ["trust", "--list"], ["config", "show"]],
    ids=["stats", "app", "card", "mock", "trust", "show"],
)
def test_a_bad_file_stops_the_command_with_one_line_and_exit_1(config_file, tmp_path, args):
    write(config_file, 'new_per_day = "lots"\n')
    done = run_drill(config_file, tmp_path, *args)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f'drill: {config_file}: new_per_day: must be a whole number >= 0 (got "lots")\n'


def test_config_path_still_works_with_a_bad_file(config_file, tmp_path):
    write(config_file, "new_per_day = \n")
    done = run_drill(config_file, tmp_path, "config", "path")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{config_file}\n", "")


# -- drill config ------------------------------------------------------------------------


def test_show_says_where_each_value_comes_from(config_file, tmp_path, capsys):
    data = tmp_path / "data"
    save(data, new_order="deck")
    write(config_file, 'theme = "nord"\n[keys]\n"review.suspend" = "ctrl+y"\n')
    code, out, err = drill("--data-dir", str(data), "--day-starts-at", "6", "config", "show", capsys=capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"# {config_file}"
    sources = {re.split(r" = ", line)[0]: line.rsplit("# ", 1)[1] for line in lines[1:]}
    assert sources == {
        "new_per_day": "default",
        "day_starts_at": "flag",
        "scheduler": "default",
        "max_interval_days": "default",
        "new_order": "saved setting",
        "theme": "file",
        "gpu_host": "default",
        "judge_timeout": "default",
        "interview_date": "default",
        "interview_track": "default",
        "minutes_per_day": "default",
        "readiness_target": "default",
        'keys."review.suspend"': "file",
    }
    assert 'theme = "nord"' in out and 'new_order = "deck"' in out and "day_starts_at = 6" in out


COMMENTED = """\
# my settings
new_per_day = 12  # a dozen a day

theme = "nord"

[keys]
# undo on F2 as well
"review.undo" = "f2,ctrl+z"
"""


def test_set_keeps_comments_and_other_keys_and_says_what_changed(config_file, capsys):
    write(config_file, COMMENTED)
    code, out, err = drill("config", "set", "new_per_day", "20", capsys=capsys)
    assert code == 0, err
    assert out == f"new_per_day: 12 -> 20 ({config_file})\n"
    assert config_file.read_text() == COMMENTED.replace("new_per_day = 12", "new_per_day = 20")

    code, out, err = drill("config", "set", "keys.review.suspend", "ctrl+y", capsys=capsys)
    assert code == 0, err
    assert out == f'keys.review.suspend: unset -> "ctrl+y" ({config_file})\n'
    text = config_file.read_text()
    assert text.startswith(COMMENTED.replace("new_per_day = 12", "new_per_day = 20"))
    assert dict(load_settings().keys) == {"review.undo": "f2,ctrl+z", "review.suspend": "ctrl+y"}

    code, out, _ = drill("config", "set", "keys.review.suspend", "", capsys=capsys)
    assert (code, out) == (0, f'keys.review.suspend: "ctrl+y" -> unset ({config_file})\n')
    assert config_file.read_text() == COMMENTED.replace("new_per_day = 12", "new_per_day = 20")

    code, out, _ = drill("config", "set", "theme", "nord", capsys=capsys)
    assert (code, out) == (0, f'theme: "nord" (unchanged) ({config_file})\n')


def test_set_without_a_file_writes_the_documented_template_with_the_key_under_its_example(config_file, capsys):
    code, out, err = drill("config", "set", "day_starts_at", "6", capsys=capsys)
    assert code == 0, err
    assert out == f"day_starts_at: unset -> 6 ({config_file})\n"
    assert config_file.read_text() == cfg.TEMPLATE.replace(
        "# day_starts_at = 4\n", "# day_starts_at = 4\nday_starts_at = 6\n"
    )
    settings = load_settings()
    assert (settings.day_starts_at, settings.in_file) == (6, {"day_starts_at"})


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("new_per_day", "lots", f'new_per_day: {WHOLE} (got "lots")'),
        ("new_per_day", "-1", f"new_per_day: {WHOLE} (got -1)"),
        ("day_starts_at", "24", f"day_starts_at: {HOUR} (got 24)"),
        ("scheduler", "anki", 'scheduler: must be one of sm2, fsrs (got "anki")'),
        ("judge_timeout", "soon", f'judge_timeout: {SECONDS} (got "soon")'),
        ("gpu_host", "u@h/x", f'gpu_host: {HOST} (got "u@h/x")'),
        ("keys.suspend", "f6", f"keys.suspend: {BINDING_ID}"),
        ("keys", "ctrl+y", "keys: set one binding at a time: keys.ID KEYS, such as keys.review.suspend ctrl+y"),
        ("colour", "red", f"colour: unknown key ({KNOWN})"),
    ],
)
def test_a_bad_set_exits_2_naming_the_key_and_leaves_the_file_alone(config_file, capsys, key, value, message):
    write(config_file, COMMENTED)
    code, out, err = drill("config", "set", key, value, capsys=capsys)
    assert (code, out) == (2, "")
    assert err == f"drill: {config_file}: {message}\n"
    assert config_file.read_text() == COMMENTED


def test_set_mends_one_key_and_names_another_still_wrong(config_file, capsys):
    write(config_file, 'new_per_day = "lots"\nday_starts_at = 30\n')
    code, out, err = drill("config", "set", "new_per_day", "5", capsys=capsys)
    assert code == 1
    assert out.startswith('new_per_day: "lots" -> 5')
    assert err == f"drill: {config_file}: day_starts_at: must be a whole number from 0 to 23 (got 30)\n"
    code, _, err = drill("config", "set", "day_starts_at", "5", capsys=capsys)
    assert code == 0, err
    assert (load_settings().new_per_day, load_settings().day_starts_at) == (5, 5)


@pytest.fixture
def fake_switch(monkeypatch):
    """drill.study.scheduling with a switch_scheduler that records its calls."""
    calls = []

    def switch_scheduler(store, name, max_interval):
        calls.append((type(store).__name__, store.data_dir, name, max_interval))
        return types.SimpleNamespace(cards=4, reviews=9)

    monkeypatch.setitem(sys.modules, "drill.study.scheduling", types.SimpleNamespace(switch_scheduler=switch_scheduler))
    return calls


def test_set_scheduler_switches_the_stored_schedule_through_drill_scheduling(
    config_file, tmp_path, capsys, fake_switch
):
    data = tmp_path / "data"
    code, out, err = drill("--data-dir", str(data), "config", "set", "scheduler", "FSRS", capsys=capsys)
    assert code == 0, err
    assert fake_switch == [("Store", data, "fsrs", 36500)]
    assert out.splitlines() == [
        f'scheduler: unset -> "fsrs" ({config_file})',
        "rescheduled 4 cards with fsrs by replaying 9 logged reviews",
    ]
    assert load_settings().scheduler == "fsrs"


def test_a_switch_that_fails_leaves_the_file_alone(config_file, tmp_path, capsys, monkeypatch):
    def switch_scheduler(store, name, max_interval):
        raise ValueError("review 3 (c00): grade must be an integer 0-5, got 9")

    monkeypatch.setitem(sys.modules, "drill.study.scheduling", types.SimpleNamespace(switch_scheduler=switch_scheduler))
    write(config_file, COMMENTED)
    code, out, err = drill("--data-dir", str(tmp_path / "data"), "config", "set", "scheduler", "fsrs", capsys=capsys)
    assert (code, out) == (1, "")
    assert err == "drill: cannot switch to fsrs: review 3 (c00): grade must be an integer 0-5, got 9\n"
    assert config_file.read_text() == COMMENTED


def test_set_scheduler_and_back_saves_the_active_scheduler_and_keeps_every_review(config_file, tmp_path, capsys):
    from drill.study.records import CardState

    data = tmp_path / "data"
    store = Store(data)
    for days, grade in ((0, 4), (1, 5), (4, 3)):
        day = NOW.date() + dt.timedelta(days=days)
        at = NOW + dt.timedelta(days=days)
        store.record_review(CardState("c1"), CardState("c1"), grade=grade, at=at, day=day, duration_ms=1, mode="review")
    store.close()
    for name in ("fsrs", "sm2"):
        code, out, err = drill("--data-dir", str(data), "config", "set", "scheduler", name, capsys=capsys)
        assert code == 0, err
        assert out.splitlines()[1] == f"rescheduled 1 card with {name} by replaying 3 logged reviews"
        assert read_settings(data).get("scheduler") == name
        assert load_settings().scheduler == name
    store = Store(data)
    assert [(r.card_id, r.grade) for r in store.reviews()] == [("c1", 4), ("c1", 5), ("c1", 3)]
    store.close()


@pytest.mark.parametrize("name", ["sm2", "fsrs"])
def test_a_switch_replays_the_log_within_the_files_max_interval_days(config_file, tmp_path, capsys, name):
    from drill.study.records import CardState

    data = tmp_path / "data"
    store = Store(data)
    day = NOW.date()
    for gap in (0, 1, 6, 17, 50, 150, 465):  # perfect grades on SM-2's due dates
        day += dt.timedelta(days=gap)
        at = dt.datetime.combine(day, NOW.time())
        store.record_review(CardState("c1"), CardState("c1"), grade=5, at=at, day=day, duration_ms=1, mode="review")
    store.close()
    write(config_file, "max_interval_days = 30\n")
    code, _, err = drill("--data-dir", str(data), "config", "set", "scheduler", name, capsys=capsys)
    assert code == 0, err
    state = Store(data).states()["c1"]
    assert state.sm2.interval == 30 and state.due == day + dt.timedelta(days=30)


def test_the_review_app_grades_within_the_files_max_interval_days(config_file, tmp_path, write_deck):
    write(config_file, "max_interval_days = 400\n")
    app = make_app(app_options(argparse.Namespace(data_dir=str(tmp_path / "data"), decks=[str(deck(write_deck))])))
    assert app.session.max_interval == 400
    assert (
        make_app(AppOptions(tmp_path / "data", [deck(write_deck)])).session.max_interval == 36500
    )  # no settings given


# -- the app: key bindings and theme ------------------------------------------------------


@pytest.mark.parametrize(
    "file, idle_key, suspend_key",
    [(None, "f6", "ctrl+s"), ('[keys]\n"review.suspend" = "f6"\n', "ctrl+s", "f6")],
    ids=["default", "overridden"],
)
async def test_a_keymap_override_moves_suspend_to_another_key(
    config_file, tmp_path, write_deck, file, idle_key, suspend_key
):
    settings = load_settings(write(config_file, file)) if file else None
    data = tmp_path / "data"
    app = make_app(AppOptions(data, [deck(write_deck)], clock=FixedClock(NOW), new_order="deck", settings=settings))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
        await type_keys(pilot, idle_key)
        await settle(pilot)
        assert not db(data, "SELECT card_id FROM card_state WHERE suspended=1")
        await type_keys(pilot, suspend_key)
        await settle(pilot)
        assert db(data, "SELECT card_id FROM card_state WHERE suspended=1") == [("k-concept",)]


async def test_make_app_applies_the_files_theme_keys_and_study_settings(config_file, tmp_path, write_deck, monkeypatch):
    from drill import paths

    bare = tmp_path / "no-bundled-decks"  # the topic list and model data, but no deck
    bare.mkdir()
    (bare / "data").symlink_to(paths.cards_dir() / "data")
    monkeypatch.setattr(paths, "cards_dir", lambda: bare)
    write(config_file, 'theme = "nord"\nnew_per_day = 1\nnew_order = "deck"\n[keys]\n"review.bury" = "f7"\n')
    data = tmp_path / "data"
    app = make_app(app_options(argparse.Namespace(data_dir=str(data), decks=[str(deck(write_deck))])))
    assert (app.new_per_day, app.new_order, app.session.queue) == (1, "deck", ["k-concept"])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "nord" and app.current_theme.name == "nord"
        await type_keys(pilot, "ctrl+t")  # bury's default key no longer buries
        await settle(pilot)
        assert not db(data, "SELECT buried_until FROM card_state WHERE buried_until IS NOT NULL")
        await type_keys(pilot, "f7")
        await settle(pilot)
        assert db(data, "SELECT card_id FROM card_state WHERE buried_until IS NOT NULL") == [("k-concept",)]


def test_judge_timeout_from_the_file_reaches_drill_kernel_run(tmp_path, monkeypatch):
    import argparse

    from drill.cli import kernel as kernel_cli

    settings = tmp_path / "config.toml"
    settings.write_text("judge_timeout = 7.5\n")
    monkeypatch.setenv("DRILL_CONFIG", str(settings))
    seen = {}
    monkeypatch.setattr(
        kernel_cli, "_judge", lambda args, client, data_dir: seen.setdefault("timeout", args.timeout) and 0
    )
    args = argparse.Namespace(timeout=None, gpu_host=None, data_dir=str(tmp_path / "d"), decks=None)
    kernel_cli._run(args)
    assert seen["timeout"] == 7.5


# -- key bindings: known ids, Textual's key names, no key the learner types ---------------------------------
REFUSED_BINDINGS = [
    ("review.nope", "ctrl+y", "'review.nope' is not one of drill's binding ids (did you mean review.undo?)"),
    ("review.suspend", "ctrl+ctrl+zz", "'ctrl+ctrl+zz' is not a key: modifiers are ctrl, alt, shift"),
    ("review.suspend", "ctrl+zz", "'ctrl+zz' is not a key Textual knows"),
    ("review.suspend", "k" * 100_000, "a key name of 100,000 characters"),
    ("review.suspend", "0,1,2,3,4,5", "'0' types a character into an answer"),
    ("review.suspend", "x", "'x' types a character into an answer"),
    ("review.suspend", "shift+x", "'shift+x' types a character into an answer"),
    ("mock.skip", "exclamation_mark", "'exclamation_mark' types a character into an answer"),
    ("review.quit_when_done", "4", "'4' gives grade 4 once the answer is shown"),
    ("review.grade4", "5", "'5' gives grade 5 once the answer is shown"),
    ("review.suspend", ",".join(f"f{n}" for n in range(1, 10)), "9 keys; a binding takes at most 8"),
]


@pytest.mark.parametrize("binding, keys, message", REFUSED_BINDINGS, ids=[m[:24] for _, _, m in REFUSED_BINDINGS])
def test_a_binding_drill_cannot_use_is_one_line_from_the_file_and_from_set(config_file, capsys, binding, keys, message):
    write(config_file, f'[keys]\n"{binding}" = "{keys}"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value).startswith(f'{config_file}: keys."{binding}": {message}')
    assert len(str(caught.value)) < 300
    assert cli.main([]) == 1  # the app does not start on such a file
    err = capsys.readouterr().err
    assert err.startswith(f'drill: {config_file}: keys."{binding}": {message}') and err.count("\n") == 1

    write(config_file, COMMENTED)
    code, out, err = drill("config", "set", f"keys.{binding}", keys, capsys=capsys)
    assert (code, out) == (2, "") and err.count("\n") == 1 and message in err
    assert config_file.read_text() == COMMENTED


@pytest.mark.parametrize(
    "binding, keys",
    [
        ("review.suspend", "f6"),
        ("review.suspend", "ctrl+shift+y,alt+s"),
        ("review.grade4", "4,g"),  # grades act only once the answer is shown
        ("stats.sort", "o"),  # the stats screen has no field to type into
        ("mock.skip", "ctrl+exclamation_mark"),
        ("browser.close", "escape"),
    ],
)
def test_a_binding_drill_can_use_is_saved(config_file, capsys, binding, keys):
    code, _, err = drill("config", "set", f"keys.{binding}", keys, capsys=capsys)
    assert code == 0, err
    assert dict(load_settings().keys) == {binding: keys}


def test_a_value_that_is_not_utf8_is_refused_and_leaves_no_partial_file(config_file, capsys):
    write(config_file, COMMENTED)
    for key, value in (("keys.review.suspend", "x\udcff"), ("gpu_host", "me@box\udcff"), ("theme\udcff", "nord")):
        code, out, err = drill("config", "set", key, value, capsys=capsys)
        assert (code, out) == (2, "") and "not UTF-8 text" in err and err.count("\n") == 1
    assert config_file.read_text() == COMMENTED
    assert sorted(p.name for p in config_file.parent.iterdir()) == [config_file.name]


def test_a_failed_write_leaves_no_partial_file(config_file):
    doc = cfg.read_document(config_file)
    doc["theme"] = "x\udcff"
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        cfg.write_document(config_file, doc)
    assert not config_file.parent.exists() or list(config_file.parent.iterdir()) == []


def _screen_bindings():
    """Every binding of drill's screens and app, by id."""
    import importlib
    import pkgutil

    from textual.binding import Binding

    import drill.ui

    found = {}
    for module_info in pkgutil.iter_modules(drill.ui.__path__):
        module = importlib.import_module(f"drill.ui.{module_info.name}")
        for thing in vars(module).values():
            if isinstance(thing, type) and thing.__module__ == module.__name__:
                for binding in getattr(thing, "BINDINGS", None) or []:
                    if isinstance(binding, Binding) and binding.id:
                        found[binding.id] = binding.key
    return found


def test_the_binding_ids_the_settings_know_are_the_screens_own():
    from drill.config.keybindings import BINDING_IDS, OUTSIDE_FIELDS, TYPING_SCREENS, _types_a_character

    screens = _screen_bindings()
    assert set(screens) == BINDING_IDS
    typed = {
        bid
        for bid, keys in screens.items()
        if bid.split(".")[0] in TYPING_SCREENS and any(_types_a_character(k) for k in keys.split(","))
    }
    assert typed == OUTSIDE_FIELDS  # only the bindings that act outside the answer fields take a typed key
    for bid, keys in screens.items():  # every default is a binding the settings file could give
        assert cfg.check_binding(bid, keys) == keys


def test_the_key_names_are_textuals():
    from textual.keys import REPLACED_KEYS, Keys, key_to_character

    from drill.config.keybindings import CHARACTER_NAMES, NAMED_KEYS

    textual_named = {k.value.rpartition("+")[2] for k in Keys} - {"ctrl-at"}
    textual_named = {k for k in textual_named if len(k) > 1 and not k.startswith("<")}
    assert textual_named <= NAMED_KEYS | CHARACTER_NAMES
    assert NAMED_KEYS <= textual_named
    for name in CHARACTER_NAMES:  # "slash" stands for Unicode's "solidus"
        assert key_to_character(REPLACED_KEYS.get(name, name)) is not None, name
