"""A data folder named with DRILL_HOME or --data-dir carries its own settings file; the platform's is for the
platform's data folder; DRILL_CONFIG beats both."""

from __future__ import annotations

import datetime as dt
import tomllib

import platformdirs
import pytest

from drill.cli import main
from drill.config.settings import config_path


@pytest.fixture
def platform_config(tmp_path, monkeypatch):
    """No DRILL_CONFIG or DRILL_HOME; the platform's config folder is a temporary one."""
    folder = tmp_path / "platform-config"
    monkeypatch.delenv("DRILL_CONFIG", raising=False)
    monkeypatch.delenv("DRILL_HOME", raising=False)
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda *args, **kwargs: str(folder))
    return folder / "config.toml"


def test_plan_date_for_a_folder_given_with_data_dir_stays_in_that_folder(tmp_path, platform_config, capsys):
    trial = tmp_path / "trial"
    # a week ahead: where the date is saved is the point, and each day of the plan printed is a simulated day of study
    interview = dt.date.today() + dt.timedelta(days=7)
    assert main(["plan", "--date", interview.isoformat(), "--data-dir", str(trial)]) == 0
    written = tomllib.loads((trial / "config.toml").read_text(encoding="utf-8"))
    assert str(written["interview_date"]) == interview.isoformat()
    assert not platform_config.exists()
    capsys.readouterr()
    assert main(["config", "show", "--data-dir", str(trial)]) == 0
    assert interview.isoformat() in capsys.readouterr().out
    assert main(["config", "show"]) == 0
    assert interview.isoformat() not in capsys.readouterr().out


def test_drill_home_carries_its_own_settings_file(tmp_path, platform_config, monkeypatch, capsys):
    home = tmp_path / "home"
    monkeypatch.setenv("DRILL_HOME", str(home))
    assert config_path() == home / "config.toml"
    assert main(["config", "set", "new_per_day", "7"]) == 0
    assert tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))["new_per_day"] == 7
    assert not platform_config.exists()
    capsys.readouterr()
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(home / "config.toml")


def test_without_a_named_folder_the_platform_file_is_read_and_drill_config_beats_all(
    tmp_path, platform_config, monkeypatch
):
    assert config_path() == platform_config
    monkeypatch.setenv("DRILL_CONFIG", str(tmp_path / "other.toml"))
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))
    assert config_path(tmp_path / "given") == tmp_path / "other.toml"
