"""Predicted recall from FSRS memory replayed from the review log, and readiness per topic."""

import datetime as dt
import random
import subprocess
import sys

import fsrs
import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS

from drill.study.forecast import UNSEEN_RECALL, MemoryModel, TrackCard, readiness, replay, stop_now, track_cards
from drill.study.records import FSRSState, LoggedReview
from drill.study.scheduling import FSRSScheduler, fsrs_review

DAY = dt.date(2026, 4, 1)


def review(i, card, day, grade, mode="review"):
    return LoggedReview(id=i, card_id=card, day=day, grade=grade, mode=mode)


@pytest.mark.parametrize("stability", [1.0, 2.3065, 10.0, 100.0])
def test_recall_after_stability_days_is_90_percent(stability):
    # FSRS defines stability as the days after which retrievability falls to 0.9
    memory = FSRSState(stability, 5.0, 2, DAY)
    days = round(stability)
    exact = FSRSState(float(days), 5.0, 2, DAY)
    assert MemoryModel().recall(exact, DAY + dt.timedelta(days=days)) == pytest.approx(0.9)
    assert MemoryModel().recall(memory, DAY) == 1.0  # the day of the review


def test_recall_is_the_fsrs_package_retrievability_and_falls_with_time():
    memory = FSRSState(7.0, 5.0, 2, DAY)
    card = fsrs.Card(card_id=1, state=fsrs.State.Review, stability=7.0, difficulty=5.0)
    card.last_review = dt.datetime(2026, 4, 1, tzinfo=dt.timezone.utc)
    at = dt.datetime(2026, 4, 21, tzinfo=dt.timezone.utc)
    assert MemoryModel().recall(memory, DAY + dt.timedelta(days=20)) == fsrs.Scheduler().get_card_retrievability(
        card, at
    )
    recalls = [MemoryModel().recall(memory, DAY + dt.timedelta(days=d)) for d in (1, 10, 30, 365)]
    assert recalls == sorted(recalls, reverse=True) and recalls[0] > 0.9 > recalls[1] > recalls[-1]


def test_an_unseen_card_counts_as_the_stated_prior_which_is_what_fsrs_gives_a_card_never_reviewed():
    assert MemoryModel().recall(None, DAY) == UNSEEN_RECALL == 0.0
    assert fsrs.Scheduler().get_card_retrievability(fsrs.Card(card_id=1)) == UNSEEN_RECALL


def test_fitted_parameters_equal_to_the_defaults_give_what_the_fsrs_scheduler_gives():
    rng = random.Random(3)
    default, explicit = MemoryModel(), MemoryModel(tuple(DEFAULT_PARAMETERS))
    a = b = None
    day = DAY
    for _ in range(40):
        grade = rng.choice([0, 1, 3, 4, 4, 4, 5])
        (a, due_a), (b, due_b) = default.review(a, grade, day), explicit.review(b, grade, day)
        assert (a.stability, a.difficulty, a.state, due_a) == pytest.approx((b.stability, b.difficulty, b.state, due_b))
        day += dt.timedelta(days=rng.randint(1, 20))


def test_other_parameters_change_the_memory():
    faster = list(DEFAULT_PARAMETERS)
    faster[2] = 0.5  # a first Good gives half a day of stability instead of 2.3
    memory, due = MemoryModel(tuple(faster)).review(None, 4, DAY)
    assert memory.stability == pytest.approx(0.5) and due == DAY + dt.timedelta(days=1)


def test_replay_gives_the_memory_the_fsrs_scheduler_keeps_even_when_sm2_schedules():
    rng = random.Random(7)
    log, i = [], 0
    for card in ("a", "b", "c"):
        day = DAY
        for _ in range(12):
            i += 1
            log.append(review(i, card, day, rng.choice([1, 3, 4, 4, 5])))
            if rng.random() < 0.3:  # a same-day repeat, a cram and a mock pass never reach FSRS
                i += 1
                log.append(review(i, card, day, 4, rng.choice(["repeat", "cram", "mock"])))
            day += dt.timedelta(days=rng.randint(1, 15))
    expected = FSRSScheduler().replay(log, {})
    replayed = replay(log)
    for card in ("a", "b", "c"):
        assert replayed.cards[card].memory == expected[card].fsrs
        assert replayed.cards[card].reviews == 12


def test_replay_predicts_each_review_from_the_memory_before_it():
    log = [
        review(1, "a", DAY, 4),
        review(2, "a", DAY, 2, "repeat"),
        review(3, "a", DAY + dt.timedelta(days=3), 1),
        review(4, "a", DAY + dt.timedelta(days=4), 4),
    ]
    replayed = replay(log)
    first, _ = fsrs_review(None, 4, DAY)
    second, _ = fsrs_review(first, 1, DAY + dt.timedelta(days=3))
    assert [(o.recalled, o.elapsed_days, o.review_number, o.lapses) for o in replayed.outcomes] == [
        (False, 3, 2, 0),
        (True, 1, 3, 1),
    ]
    assert replayed.outcomes[0].predicted == MemoryModel().recall(first, DAY + dt.timedelta(days=3))
    assert replayed.outcomes[1].predicted == MemoryModel().recall(second, DAY + dt.timedelta(days=4))
    assert [r.id for r in replayed.predicted] == [3, 4]
    assert [r.id for r in replayed.scheduled] == [1, 3, 4]
    assert replayed.cards["a"].lapses == 1


def test_a_bad_grade_names_its_review():
    with pytest.raises(ValueError, match=r"review 9 \(x\): grade must be an integer 0-5"):
        replay([review(9, "x", DAY, 7)])


def test_readiness_is_mean_recall_per_topic_weakest_first():
    ready = readiness({"a": 0.9, "b": 0.7, "c": 0.2}, {"a": "serving", "b": "serving", "c": "moe"}, DAY)
    assert ready.overall == pytest.approx(0.6)
    assert [(t.topic, t.cards, round(t.readiness, 3)) for t in ready.topics] == [("moe", 1, 0.2), ("serving", 2, 0.8)]
    assert ready.as_json()["topics"][0] == {"topic": "moe", "cards": 1, "readiness": 0.2}


def test_if_you_stop_now_recall_decays_to_the_date_and_unseen_cards_count_as_the_prior():
    memories = replay([review(1, "a", DAY, 4), review(2, "a", DAY + dt.timedelta(days=2), 4)]).cards
    cards = track_cards([("a", "serving", "concept"), ("b", "serving", "concept")], memories, {"a": DAY})
    assert cards[1] == TrackCard("b", "serving", "concept", None, None)
    soon, later = stop_now(cards, DAY + dt.timedelta(days=5)), stop_now(cards, DAY + dt.timedelta(days=60))
    recall_a = MemoryModel().recall(memories["a"].memory, DAY + dt.timedelta(days=5))
    assert soon.overall == pytest.approx((recall_a + UNSEEN_RECALL) / 2)
    assert later.overall < soon.overall


def test_the_domain_imports_no_textual_or_torch():
    code = (
        "import sys; import drill.study.forecast, drill.study.plan, drill.study.calibration, drill.study.fitting; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert loaded.isdisjoint({"textual", "torch", "pandas", "tqdm", "sqlmodel"})
