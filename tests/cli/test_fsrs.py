"""drill fsrs fit, show and reset: parameters fitted to the learner's record, judged on reviews held out."""

import datetime as dt
import json
import shutil
import sys

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.cli import main
from drill.store.store import Store
from drill.study.records import CardState
from drill.workspace import Workspace
from tests.study.test_fitting import HISTORY, simulated_history

# Both fits below are of one log: on one test process the optimizer runs once for it (conftest's fsrs_fit_once).
# The log is tests/study/test_fitting.py's (its size, HISTORY, and its review times): what these tests check is the
# command around the fit, and that module shows a fit of that size lowers the held-out loss; 2,000 reviews cost
# the optimizer two thirds more.
pytestmark = [pytest.mark.xdist_group("fsrs-fit-cli"), pytest.mark.usefixtures("fsrs_fit_once")]


def simulate(data, reviews):
    """A learner who remembers worse than FSRS's defaults say (tests/study/test_fitting.py's), their log written to the database."""
    store = Store(data)
    for row in simulated_history(reviews):
        at = dt.datetime.fromisoformat(row.reviewed_at)
        state = CardState(row.card_id, introduced_on=row.day, last_review_day=row.day, due=row.day)
        store.record_review(
            CardState(row.card_id), state, grade=row.grade, at=at, day=row.day, duration_ms=1, mode=row.mode
        )
    store.close()


@pytest.fixture(scope="module")
def simulated_home(tmp_path_factory):
    """The data folder of HISTORY simulated reviews, written once for the module (each review its own transaction,
    seconds of CPU); a test copies it before changing it."""
    data = tmp_path_factory.mktemp("simulated") / "home"
    simulate(data, HISTORY)
    return data


def test_fit_lowers_held_out_log_loss_saves_the_parameters_and_predictions_use_them(tmp_path, capsys, simulated_home):
    data = shutil.copytree(simulated_home, tmp_path / "home")
    assert main(["fsrs", "fit", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert "Fitted on the first 991 of 1239 reviews" in out  # the history goes to the end of its last day
    before, after = (
        float(x)
        for x in out.split("Log loss on the held-out reviews: ")[1].split(" fitted")[0].split(" with the defaults, ")
    )
    assert after < before
    assert "predict your reviews better" in out and "saved" in out
    workspace = Workspace(data)
    parameters = workspace.fsrs_parameters()
    assert parameters is not None and len(parameters) == 21 and parameters != tuple(DEFAULT_PARAMETERS)
    assert workspace.memory_model().parameters == parameters  # every prediction uses them
    calibrated = workspace.calibration().as_json()["log_loss"]
    workspace.close()
    assert main(["fsrs", "show", "--data-dir", str(data)]) == 0
    assert "fitted to your reviews" in capsys.readouterr().out
    assert main(["fsrs", "reset", "--data-dir", str(data)]) == 0
    assert "back to its default parameters" in capsys.readouterr().out
    workspace = Workspace(data)
    assert workspace.fsrs_parameters() is None
    assert workspace.calibration().as_json()["log_loss"] > calibrated  # the defaults predict this learner worse
    workspace.close()


def test_with_fsrs_scheduling_a_fit_reschedules_every_card_with_the_fitted_parameters(tmp_path, capsys, simulated_home):
    data = shutil.copytree(simulated_home, tmp_path / "home")
    assert main(["config", "set", "scheduler", "fsrs", "--data-dir", str(data)]) == 0
    capsys.readouterr()
    before = Workspace(data).states()
    assert main(["fsrs", "fit", "--data-dir", str(data), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["saved"] and result["rescheduled"] == len(before)
    after = Workspace(data).states()
    moved = [cid for cid in before if before[cid].fsrs.stability != after[cid].fsrs.stability]
    assert len(moved) == len(before)  # every card's memory replayed with the fitted parameters


def test_fit_needs_400_reviews(tmp_path, capsys):
    data = tmp_path / "home"
    simulate(data, 120)
    assert main(["fsrs", "fit", "--data-dir", str(data)]) == 1
    assert capsys.readouterr().err == "drill fsrs fit: 132 reviews so far; fitting FSRS needs at least 400\n"


def test_fit_without_the_optimizer_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails, as where it is not installed
    assert main(["fsrs", "fit", "--data-dir", str(tmp_path / "home")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "torch" in err and "pip install -e '.[fit]'" in err
