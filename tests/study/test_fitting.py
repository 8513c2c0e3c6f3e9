"""Fitting FSRS to the learner's record: a simulated 1,200-review history, held-out log loss, what is missing."""

import datetime as dt
import importlib.util
import random
import subprocess
import sys
import time

import fsrs
import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.study import fitting
from drill.study.fitting import (
    FIT_EXTRA,
    FitUnavailable,
    NotEnoughReviews,
    fit_parameters,
    fit_rows,
    review_times,
    scheduled_reviews,
)
from drill.study.forecast import MemoryModel
from drill.study.records import LoggedReview

START = dt.date(2025, 1, 1)
HISTORY = 1200  # reviews: the optimizer gets a mini-batch of repeat reviews, the held-out part 200 predictions

# the fits of one log share a test process, where the optimizer runs once for it (conftest's fsrs_fit_once)
pytestmark = pytest.mark.xdist_group("fsrs-fit")

# The simulated learner remembers worse than FSRS's defaults say: a first Good lasts a day
# (not 2.3), stability grows more slowly, and the forgetting curve is steeper.
LEARNER = list(DEFAULT_PARAMETERS)
LEARNER[2] = 1.0
LEARNER[8] = 1.2
LEARNER[20] = 0.5


def simulated_history(reviews: int, seed: int = 11) -> list[LoggedReview]:
    """A learner whose memory follows FSRS with LEARNER's parameters, asked when drill's FSRS says (defaults).

    Each day's reviews are logged from 09:00, a minute apart; a card graded below 4 comes back ten minutes later."""
    rng = random.Random(seed)
    truth = fsrs.Scheduler(parameters=LEARNER, learning_steps=(), relearning_steps=(), enable_fuzzing=False)
    model = MemoryModel()
    log: list[LoggedReview] = []
    true_cards: dict[str, fsrs.Card] = {}
    memory: dict[str, tuple] = {}
    day, n, scheduled = START, 0, 0
    while scheduled < reviews:
        at = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)
        asked = [cid for cid, (_, due) in memory.items() if due <= day]
        asked += [f"card-{n + i}" for i in range(8)]  # eight new cards a day
        n += 8
        for i, cid in enumerate(asked):
            logged_at = dt.datetime.combine(day, dt.time(9)) + dt.timedelta(minutes=i)
            card = true_cards.get(cid)
            if card is None:
                grade = rng.choice([1, 3, 4, 4, 5])
            else:
                recalled = rng.random() < truth.get_card_retrievability(card, at)
                grade = rng.choice([3, 4, 4, 4, 5]) if recalled else 1
            rating = fsrs.Rating.Again if grade < 3 else fsrs.Rating(grade - 1)
            true_cards[cid], _ = truth.review_card(card or fsrs.Card(card_id=0, due=at), rating, review_datetime=at)
            memory[cid] = model.review(memory[cid][0] if cid in memory else None, grade, day)
            log.append(LoggedReview(len(log) + 1, cid, day, grade, "review", logged_at.isoformat()))
            scheduled += 1
            if grade < 4:  # the same-day repeat: the fit sees it, the day's schedule does not
                repeated_at = logged_at + dt.timedelta(minutes=10)
                log.append(LoggedReview(len(log) + 1, cid, day, 4, "repeat", repeated_at.isoformat()))
        day += dt.timedelta(days=1)
    return log


@pytest.mark.usefixtures("fsrs_fit_once")
def test_fitting_a_simulated_history_lowers_held_out_log_loss():
    log = simulated_history(HISTORY)
    started = time.perf_counter()
    fitted = fit_parameters(log)
    took = time.perf_counter() - started
    print(
        f"fit of {fitted.reviews} reviews: {took:.1f} s; log loss {fitted.log_loss_before:.4f} -> {fitted.log_loss_after:.4f}"
    )
    assert fitted.reviews == len(scheduled_reviews(log)) >= HISTORY
    assert fitted.fitted_on == pytest.approx(0.8 * fitted.reviews, abs=1)
    assert fitted.held_out > 100
    assert not fitted.kept_defaults and fitted.parameters != tuple(DEFAULT_PARAMETERS)
    assert fitted.improved and fitted.log_loss_after < fitted.log_loss_before
    assert fitted.as_json()["log_loss_after"] == fitted.log_loss_after


def test_repeats_crams_and_mocks_are_not_fitted():
    log = [
        LoggedReview(1, "a", START, 4, "review"),
        LoggedReview(2, "a", START, 3, "repeat"),
        LoggedReview(3, "a", START + dt.timedelta(days=2), 4, "cram"),
        LoggedReview(4, "a", START + dt.timedelta(days=3), 1, "mock"),
        LoggedReview(5, "a", START + dt.timedelta(days=4), 4, "review"),
    ]
    assert [r.id for r in scheduled_reviews(log)] == [1, 5]


def test_too_few_reviews_say_how_many_there_are():
    with pytest.raises(NotEnoughReviews, match="^120 reviews so far; fitting FSRS needs at least 400$"):
        fit_parameters([r for r in simulated_history(200) if r.mode == "review"][:120])


def test_without_the_optimizers_dependencies_it_names_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pandas" else real(name, *a))
    with pytest.raises(FitUnavailable) as raised:
        fit_parameters(simulated_history(500))
    message = str(raised.value)
    assert "pandas" in message and FIT_EXTRA in message and "torch" not in message
    assert "\n" not in message


def test_importing_the_fitting_module_imports_no_torch():
    code = "import sys, drill.study.fitting; print('torch' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
    assert fitting.missing_modules() == []  # the test environment has the fit extra


# FSRS-6's same-day weights: how a review on the day of the card's previous one changes its stability
SAME_DAY = slice(17, 20)


@pytest.mark.usefixtures("fsrs_fit_once")
def test_the_same_day_weights_learn_from_same_day_repeats_at_their_logged_times():
    log = simulated_history(HISTORY)
    fitted = fit_parameters(log)
    assert not fitted.kept_defaults
    assert fitted.same_day > 50  # the repeats of the fitted part reached the optimizer
    assert fitted.parameters[SAME_DAY] != tuple(DEFAULT_PARAMETERS[SAME_DAY])
    # without same-day reviews there is nothing for them to learn from: they stay at the defaults
    scheduled_only = fit_parameters([row for row in log if row.mode != "repeat"])
    assert not scheduled_only.kept_defaults and scheduled_only.same_day == 0
    assert scheduled_only.parameters[SAME_DAY] == tuple(DEFAULT_PARAMETERS[SAME_DAY])
    assert scheduled_only.parameters != tuple(DEFAULT_PARAMETERS)  # the other weights did move


def test_the_fit_takes_the_repeats_before_the_held_out_part_only():
    log = [
        LoggedReview(1, "a", START, 2, "review"),
        LoggedReview(2, "a", START, 4, "repeat"),
        LoggedReview(3, "b", START, 4, "repeat"),  # a repeat of no review that reached FSRS
        LoggedReview(4, "a", START + dt.timedelta(days=1), 4, "cram"),
        LoggedReview(5, "a", START + dt.timedelta(days=2), 1, "review"),
        LoggedReview(6, "a", START + dt.timedelta(days=2), 4, "repeat"),
    ]
    assert [r.id for r in fit_rows(log, (START + dt.timedelta(days=2), 5))] == [1, 2]
    assert [r.id for r in fit_rows(log, (START + dt.timedelta(days=9), 0))] == [1, 2, 5, 6]


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)


def test_review_times_keep_the_logged_times_and_drills_study_days():
    day = START
    rows = [
        LoggedReview(1, "a", day, 2, "review", "2025-01-01T21:00:00"),
        LoggedReview(2, "a", day, 4, "repeat", "2025-01-01T21:10:00"),  # ten minutes later: a same-day review
        LoggedReview(3, "b", day, 4, "review", ""),  # no time logged: midnight of its study day
        # 02:00 of the 2nd is still study day 1 under a 04:00 rollover: the same day as midnight of the 1st,
        # so taken as just under a day after it
        LoggedReview(4, "b", day, 4, "repeat", "2025-01-02T02:00:00"),
        # study day 2 at 08:00: eleven hours after the card's last review, which the optimizer would read as
        # the same day; moved to one day after it, and the day's repeat with it, its spacing kept
        LoggedReview(5, "a", day + dt.timedelta(days=1), 1, "review", "2025-01-02T08:00:00"),
        LoggedReview(6, "a", day + dt.timedelta(days=1), 4, "repeat", "2025-01-02T08:05:00"),
        LoggedReview(7, "b", day + dt.timedelta(days=4), 4, "review", "2025-01-06T12:00:00+01:00"),
        LoggedReview(8, "b", day + dt.timedelta(days=4), 4, "repeat", "2025-01-06T10:00:00+00:00"),  # ran backward
        # a time outside its study day: midnight of the day, then moved to the study days after the last review
        LoggedReview(9, "b", day + dt.timedelta(days=9), 4, "review", "2030-06-01T10:00:00"),
    ]
    assert review_times(rows) == [
        _at("2025-01-01T21:00:00"),
        _at("2025-01-01T21:10:00"),
        _at("2025-01-01T00:00:00"),
        _at("2025-01-01T23:59:59"),
        _at("2025-01-02T21:10:00"),
        _at("2025-01-02T21:15:00"),
        _at("2025-01-06T11:00:00"),
        _at("2025-01-06T11:00:00"),
        _at("2025-01-11T11:00:00"),
    ]
    times = review_times(rows)
    assert (times[4] - times[1]).days == 1 and (times[1] - times[0]).days == 0
