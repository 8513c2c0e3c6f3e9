"""The app says at start when grades cannot be saved, before the learner types an answer; `drill mock --report ""`."""

import argparse
import sqlite3

import pytest

from drill.cli import main
from drill.cli.app import app_options
from drill.store.errors import StoreError
from drill.store.reader import DB_NAME
from drill.store.store import Store
from drill.ui.app import make_app
from tests.ui.test_keys import CONCEPTS, settle


def _read_only_after_open(monkeypatch, path):
    """Every connection SQLAlchemy makes to `path` refuses writes (as a file on a read-only mount would),
    while the Store's own opening check still passes."""
    real_connect = sqlite3.connect

    def connect(database, *args, **kwargs):
        conn = real_connect(database, *args, **kwargs)
        if str(database) == str(path) and kwargs.get("isolation_level", "") is not None:
            conn.execute("PRAGMA query_only = ON")
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(sqlite3.dbapi2, "connect", connect)  # the one SQLAlchemy calls


def test_check_writable_raises_when_a_write_would_fail(tmp_path, monkeypatch):
    Store(tmp_path).close()
    store = Store(tmp_path)
    store.check_writable()  # a writable file: nothing to say
    store.close()
    _read_only_after_open(monkeypatch, tmp_path / DB_NAME)
    store = Store(tmp_path)
    with pytest.raises(StoreError):
        store.check_writable()
    store.close()


async def test_the_app_says_grades_cannot_be_saved_before_any_answer(tmp_path, write_deck, monkeypatch):
    data = tmp_path / "data"
    Store(data).close()
    _read_only_after_open(monkeypatch, data / DB_NAME)
    deck = write_deck("cards:\n" + CONCEPTS)
    app = make_app(app_options(argparse.Namespace(data_dir=str(data), decks=[str(deck)])))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        said = [n.message for n in app._notifications if "grades cannot be saved" in n.message]
        assert said, [n.message for n in app._notifications]


def test_an_empty_report_id_is_one_line_not_the_setup_screen(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("drill.ui.app.run_app", lambda args: pytest.fail("the app was opened"))
    assert main(["mock", "--report", "", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == "drill mock: --report takes `last` or a mock id (got '')\n"
