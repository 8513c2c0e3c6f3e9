"""drill.api reads the settings file of the data folder it opens, as `drill --data-dir` does."""

import datetime as dt

from drill import api, paths
from tests.readiness_world import START, make_world


def test_open_reads_the_data_folders_own_settings_file(tmp_path, monkeypatch):
    monkeypatch.delenv("DRILL_CONFIG", raising=False)
    monkeypatch.delenv("DRILL_HOME", raising=False)
    data = make_world(tmp_path, monkeypatch)
    data.mkdir()
    date = START + dt.timedelta(days=20)
    (data / "config.toml").write_text(
        f'interview_date = "{date.isoformat()}"\ninterview_track = "kernels"\nminutes_per_day = 25\n', encoding="utf-8"
    )
    me = api.open(data, [paths.cards_dir()])
    try:
        assert me.settings.path == data / "config.toml"
        me.set_day(START)
        plan = me.plan()
        assert plan is not None and plan.date == date and plan.minutes_per_day == 25
    finally:
        me.close()


def test_read_config_false_leaves_the_folders_file_out(tmp_path, monkeypatch):
    monkeypatch.delenv("DRILL_CONFIG", raising=False)
    data = make_world(tmp_path, monkeypatch)
    data.mkdir()
    (data / "config.toml").write_text('interview_date = "2026-03-30"\n', encoding="utf-8")
    me = api.open(data, [paths.cards_dir()], read_config=False)
    try:
        me.set_day(START)
        assert me.settings.interview_date is None and me.plan() is None
    finally:
        me.close()
