"""Where the judge's Python reads torch's bytecode: beside torch when it was installed with it, else drill's cache."""

import sys

import pytest

from drill.kernel import bytecode


@pytest.fixture
def fake_torch(tmp_path, monkeypatch):
    """A package named `torch` on sys.path, first, with no bytecode yet."""
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.setenv("DRILL_PYCACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    return pkg


def test_torch_installed_without_bytecode_gets_drills_cache_with_writing_on(fake_torch, tmp_path):
    env = bytecode.python_env()
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "cache")
    assert "PYTHONDONTWRITEBYTECODE" not in env


def test_torch_installed_with_bytecode_is_read_from_where_it_is(fake_torch):
    cache = fake_torch / "__pycache__"
    cache.mkdir()
    (cache / f"__init__.{sys.implementation.cache_tag}.pyc").write_bytes(b"")
    env = bytecode.python_env()
    assert "PYTHONPYCACHEPREFIX" not in env  # a cache folder would hide the installed bytecode
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"  # nothing to write: left as the user set it


def test_bytecode_for_another_python_does_not_count(fake_torch):
    cache = fake_torch / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-30.pyc").write_bytes(b"")
    assert "PYTHONPYCACHEPREFIX" in bytecode.python_env()


def test_a_cache_folder_the_user_chose_is_kept_and_written(fake_torch, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "mine"))
    env = bytecode.python_env()
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "mine")
    assert "PYTHONDONTWRITEBYTECODE" not in env
