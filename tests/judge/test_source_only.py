"""A deck's Python runs in the judge from the source the learner trusted, never from bytecode beside it."""

import hashlib
import importlib.util
import marshal
import sys
from pathlib import Path

import pytest

from drill.kernel import bytecode, trust
from drill.kernel.job import kernel_job
from drill.kernel.trust import locked_reason
from drill.kernel_shared.trusted_source import NotTrusted, Pins
from tests.conftest import only_card, stretched
from tests.kernel.test_trust import canary_deck, harness_of

missing = [name for name in ("torch", "triton", "numpy") if importlib.util.find_spec(name) is None]
needs_triton = pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install 'drill[kernels]')")


def plant_pyc(source: Path, code_text: str) -> list[Path]:
    """Timestamped bytecode of `code_text` wherever Python would look for `source`'s, its header matching
    `source`'s size and mtime (as a tar or zip keeps them), so the import system takes it for the source's own."""
    st = source.stat()
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")  # flags 0: checked by timestamp
    header += (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    data = header + marshal.dumps(compile(code_text, str(source), "exec"))
    places = [Path(importlib.util.cache_from_source(str(source)))]
    prefix = bytecode.python_env().get("PYTHONPYCACHEPREFIX")  # where the judge child reads bytecode, if set
    if prefix:
        saved = sys.pycache_prefix
        sys.pycache_prefix = prefix
        try:
            places.append(Path(importlib.util.cache_from_source(str(source))))
        finally:
            sys.pycache_prefix = saved
    for place in places:
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(data)
    return places


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DRILL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def triton_deck(tmp_path):
    """A deck of one Triton card whose own harness, when its source runs, creates SOURCE_RAN."""
    return canary_deck(tmp_path / "decks", tmp_path / "SOURCE_RAN", language="triton")


@needs_triton
@pytest.mark.xdist_group("triton-judge")
def test_bytecode_beside_a_trusted_harness_never_runs(cpu_judge, triton_deck, home, tmp_path):
    trust.trust(triton_deck.parent, home)
    harness = harness_of(triton_deck)
    canary = tmp_path / "CANARY"
    planted = plant_pyc(harness, f"open({str(canary)!r}, 'w').close()\n" + harness.read_text())
    card = only_card(triton_deck)
    assert locked_reason(card, home) is None  # the timestamped file passes the folder's check: loading must hold
    answer = (triton_deck.parent / "answers" / "mine.py").read_text()

    verdict = cpu_judge.run(kernel_job(card, home), answer, timeout=stretched(300))

    assert not canary.exists()
    assert (tmp_path / "SOURCE_RAN").exists()  # the source the learner read is what ran
    assert verdict.errors == [] and verdict.correct is True, verdict.errors
    assert all(p.is_file() for p in planted)


@needs_triton
@pytest.mark.xdist_group("triton-judge")
def test_a_harness_edited_after_the_check_is_refused_by_the_judge(cpu_judge, triton_deck, home, tmp_path):
    """The judge compares the bytes it reads with the hash the learner trusted, not with the file a moment ago."""
    trust.trust(triton_deck.parent, home)
    card = only_card(triton_deck)
    assert locked_reason(card, home) is None
    job = kernel_job(card, home)
    harness = harness_of(triton_deck)
    harness.write_text(f"open({str(tmp_path / 'CANARY')!r}, 'w').close()\n" + harness.read_text())

    verdict = cpu_judge.run(job, (triton_deck.parent / "answers" / "mine.py").read_text(), timeout=stretched(300))

    assert not (tmp_path / "CANARY").exists()
    assert len(verdict.errors) == 1 and verdict.errors[0].startswith("the card's harness was not run: ")
    assert "changed since you trusted it" in verdict.errors[0]


def test_a_job_names_the_trusted_hashes_and_none_for_an_untrusted_folder(triton_deck, home):
    card = only_card(triton_deck)
    folder = triton_deck.parent.resolve()
    assert kernel_job(card, home)["trusted"] == {}  # not trusted: the judge refuses every file
    trust.trust(folder, home)
    job = kernel_job(card, home)
    digest = hashlib.sha256(harness_of(triton_deck).read_bytes()).hexdigest()
    assert job["deck_folder"] == str(folder)
    assert job["trusted"][str(harness_of(triton_deck).resolve())] == digest


def test_a_bundled_card_names_no_deck_folder():
    from drill import paths
    from drill.cards.loader import load_decks

    card = load_decks([paths.cards_dir() / "kernels.yaml"]).cards["softmax"]
    assert "deck_folder" not in kernel_job(card)


# -- in this process: the loader and the imports of a run ----------------------------------------------
@pytest.fixture
def helper_deck(tmp_path, monkeypatch):
    """A deck folder with kernels/harness/helper.py (VALUE = 'source'), trusted, with bytecode planted beside it."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a user's Python: writing bytecode allowed
    folder = (tmp_path / "deck").resolve()
    (folder / "kernels" / "harness").mkdir(parents=True)
    helper = folder / "kernels" / "harness" / "deck_helper_mod.py"
    helper.write_text("VALUE = 'source'\n")
    plant_pyc(helper, "VALUE = 'bytecode'\n")
    digest = hashlib.sha256(helper.read_bytes()).hexdigest()
    pins = Pins(folder, {str(helper): digest})
    monkeypatch.syspath_prepend(str(helper.parent))
    monkeypatch.delitem(sys.modules, helper.stem, raising=False)
    return helper, pins


def test_a_module_imported_from_the_deck_folder_runs_from_its_source(helper_deck):
    from drill.judge.source_only import deck_imports

    helper, pins = helper_deck
    cache = Path(importlib.util.cache_from_source(str(helper)))
    cache.unlink()  # so that a write would show
    with deck_imports(pins):
        module = importlib.import_module(helper.stem)
        assert module.VALUE == "source"
    assert helper.stem not in sys.modules  # forgotten after the run: the next one checks it again
    assert not cache.exists()  # and no bytecode was written for it


def test_a_module_changed_since_it_was_trusted_is_refused(helper_deck):
    from drill.judge.source_only import deck_imports

    helper, pins = helper_deck
    helper.write_text("VALUE = 'changed'\n")
    with deck_imports(pins), pytest.raises(NotTrusted, match="changed since you trusted it"):
        importlib.import_module(helper.stem)


def test_loose_bytecode_in_the_deck_folder_is_refused(helper_deck):
    from drill.judge.source_only import deck_imports

    helper, pins = helper_deck
    loose = helper.with_name("deck_loose_mod.pyc")
    loose.write_bytes(Path(importlib.util.cache_from_source(str(helper))).read_bytes())
    with deck_imports(pins), pytest.raises(NotTrusted, match="not Python source"):
        importlib.import_module(loose.stem)


def test_the_harness_loader_reads_the_source_and_checks_it(helper_deck):
    from drill.judge.judging import load_harness

    helper, pins = helper_deck
    assert load_harness(str(helper), pins).VALUE == "source"
    with pytest.raises(NotTrusted, match="not among the files you trusted"):
        load_harness(str(helper), Pins(pins.folder, {}))
