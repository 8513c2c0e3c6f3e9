"""A hostile option value is one line of error, never a traceback (proof/fuzz_options.py tries them all)."""

import pytest

from drill.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["--new-per-day=--", "stats"],
        ["--day-starts-at=--", "stats"],
        ["stats", "--decks=--"],
        ["mock", "--seed=--", "--plan"],
        ["calc", "params", "--model=--"],
        ["kernel", "run", "x", "--timeout=--"],
    ],
)
def test_a_double_dash_given_as_an_options_value_is_one_line(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DRILL_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    option = next(a for a in argv if a.endswith("=--"))[:-3]
    assert capsys.readouterr().err.splitlines()[-1] == f"drill: error: argument {option}: expected a value, not --"


@pytest.mark.parametrize(
    "argv", [["config", "set", "--", "--", "x"], ["check", "--", "--"], ["import", "reviews", "--", "--"]]
)
def test_a_double_dash_given_as_an_argument_is_one_line(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DRILL_HOME", str(tmp_path))
    monkeypatch.setenv("DRILL_CONFIG", str(tmp_path / "config.toml"))
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("drill: error: -- given twice")
