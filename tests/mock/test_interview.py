"""The mock interview's domain: plans, the timed state machine, the schedule it feeds, the stored report."""

import datetime as dt

import pytest

from drill.cards.model import Card
from drill.mock.grading import QuestionGrade
from drill.mock.plan import MINUTES_BY_KIND, MockPlan, PlanError, PlannedQuestion, follow_up_reserve, make_plan
from drill.mock.record import MockRecorder
from drill.mock.run import ABANDONED, FINISHED, QUIT, TIME_UP, MockRun, schedule_after
from drill.store.store import Store
from drill.study.records import CardState
from drill.study.sm2 import SM2State

TODAY = dt.date(2026, 11, 23)


def card(cid, topic, kind="concept", follow_ups=()):
    return Card(
        id=cid, kind=kind, topic=topic, prompt=f"prompt {cid}", answer=f"answer {cid}", follow_ups=tuple(follow_ups)
    )


def deck():
    cards = []
    for topic in ("serving", "moe", "gemm", "ddp"):
        cards += [card(f"{topic}-c{i}", topic) for i in range(6)]
        cards += [card(f"{topic}-l", topic, "memory_ledger"), card(f"{topic}-d", topic, "diagnosis")]
        cards += [card(f"{topic}-s", topic, "shape_trace"), card(f"{topic}-k", topic, "kernel")]
    return {c.id: c for c in cards}


def graded(score, first_missed=None):
    """A grade all of which drill checked."""
    return QuestionGrade(score, score, first_missed=first_missed)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.mark.parametrize("seed", range(20))
def test_a_plan_fits_its_minutes_and_holds_each_required_kind(seed):
    plan = make_plan(deck(), {}, minutes=45, seed=seed)
    kinds = [q.kind for q in plan.questions]
    kept = follow_up_reserve(45)
    assert kept == 11 and plan.planned_minutes <= 45 - kept  # a quarter kept for follow-ups
    assert {"memory_ledger", "diagnosis", "shape_trace"} <= set(kinds) and "kernel" not in kinds
    assert len({q.card_id for q in plan.questions}) == len(plan.questions)
    assert 45 - kept - plan.planned_minutes < min(MINUTES_BY_KIND.values())  # filled until nothing more fits


def test_a_kernel_card_only_when_the_judge_can_run():
    plan = make_plan(deck(), {}, minutes=45, judge_available=True, seed=1)
    assert sum(q.kind == "kernel" for q in plan.questions) >= 1


def test_weak_topics_are_asked_more():
    weakness = {"serving": 0.9, "moe": 0.05, "gemm": 0.05, "ddp": 0.05}
    asked = [q.topic for s in range(40) for q in make_plan(deck(), weakness, minutes=30, seed=s).questions]
    assert asked.count("serving") > 2 * asked.count("moe")


def test_topics_questions_and_bad_requests():
    plan = make_plan(deck(), {}, minutes=60, topics=["gemm"], questions=3, seed=2)
    assert len(plan.questions) == 3 and {q.topic for q in plan.questions} == {"gemm"}
    with pytest.raises(PlanError, match="no cards in topic cooking"):
        make_plan(deck(), {}, topics=["cooking"])
    with pytest.raises(PlanError, match="fits in 2 minute"):
        make_plan(deck(), {}, minutes=2)
    assert make_plan(deck(), {}, minutes=45, seed=5) == make_plan(deck(), {}, minutes=45, seed=5)


def plan_of(*ids, minutes=20):
    cards = deck()
    return MockPlan(minutes, tuple(PlannedQuestion(i, cards[i].topic, cards[i].kind, 4) for i in ids))


def test_skip_comes_back_after_the_others_and_time_adds_up():
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1", "moe-c0"), deck(), clock)
    assert run.begin().card_id == "serving-c0"
    clock.t += 30
    run.skip()
    assert run.begin().card_id == "serving-c1"
    clock.t += 100
    run.submit(graded(0.5), {"typed": "x"})
    assert run.begin().card_id == "moe-c0"
    clock.t += 10
    run.submit(graded(0.0), None)
    slot = run.begin()
    assert slot.card_id == "serving-c0" and run.question_elapsed() == 30  # back to the skipped one
    clock.t += 20
    run.submit(graded(0.7), {"typed": "y"})  # middling, with no part named as missed: no follow-up
    assert run.begin() is None and run.status == FINISHED
    assert [s.spent_s for s in run.slots] == [50, 100, 10]
    assert abs(run.score() - 0.4) < 1e-9


def test_time_running_out_ends_the_mock_and_counts_the_rest_unanswered():
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1", "moe-c0", minutes=5), deck(), clock)
    run.begin()
    clock.t += 60
    assert run.submit(graded(1.0), None) is None  # no time beside the plan for a follow-up
    run.begin()
    clock.t += 400  # past the 5-minute deadline
    assert run.tick() is False and run.status == TIME_UP
    assert [s.status for s in run.slots] == ["answered", "unanswered", "unanswered"]
    assert run.slots[1].spent_s == 240  # counted only up to the deadline
    assert run.begin() is None


def test_quit_keeps_what_was_answered():
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1"), deck(), clock)
    run.begin()
    run.submit(graded(0.7), {"typed": "kept"})
    run.begin()
    run.quit()
    assert run.status == QUIT and [s.status for s in run.slots] == ["answered", "unanswered"]
    assert run.slots[0].answer == {"typed": "kept"}


@pytest.mark.parametrize("how", ["quit", "time_up"])
def test_a_mock_that_ends_with_no_answer_is_abandoned_not_scored(how):
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1", minutes=10), deck(), clock)
    run.begin()
    run.skip()
    run.begin()
    if how == "quit":
        run.quit()
    else:
        clock.t += 601
        run.tick()
    assert run.status == ABANDONED and run.score() is None
    assert [s.status for s in run.slots] == ["unanswered", "unanswered"]


def test_an_abandoned_mock_is_stored_and_reported_without_a_score(tmp_path, capsys):
    cards = deck()
    store = Store(tmp_path)
    plan = plan_of("serving-c0", "moe-c0")
    run = MockRun(plan, cards, Clock())
    now = dt.datetime(2026, 11, 23, 9, 0)
    weakness = {"moe": 0.3, "serving": 0.2, "gemm": 0.5}
    rec = MockRecorder(store, run, plan, cards, lambda: now, lambda: TODAY, {}, weakness)
    run.begin()
    run.quit()
    report = rec.finish()
    row, _ = store.mock(rec.mock_id)
    assert (row.status, row.score) == ("abandoned", None)
    assert report.score is None and report.topics == [] and report.answered == 0
    # what to study next comes from the weakness figures alone: no topic "scored 0 % in this mock"
    assert [(t["topic"], t["why"]) for t in report.study_next] == [
        ("gemm", "weakness 0.50; not asked"),
        ("moe", "weakness 0.30"),
        ("serving", "weakness 0.20"),
    ]
    store.close()
    from drill.cli import main

    assert main(["--data-dir", str(tmp_path), "mock", "--report", "last"]) == 0
    md = capsys.readouterr().out
    assert "**Not scored** (no question answered)" in md and "· abandoned" in md and "Score 0%" not in md


def test_the_report_shows_each_question_as_it_was_asked():
    from drill.mock.report import sides
    from tests.conftest import bundled_cards

    cards = bundled_cards().values()
    diagnosis = next(c for c in cards if c.kind == "diagnosis")
    shapes = next(c for c in cards if c.kind == "shape_trace")
    prompt, _ = sides(diagnosis, None)
    evidence = diagnosis.fields["evidence"].strip().splitlines()
    assert evidence[0] in prompt and evidence[-1] in prompt and prompt.endswith(diagnosis.prompt)
    prompt, _ = sides(shapes, {"steps": ["(B, S, D)"], "right": 0})
    assert prompt.startswith(shapes.prompt) and f"**Given:** `{shapes.fields['given']}`" in prompt


def test_a_good_answer_brings_its_follow_up_next_in_addition_to_the_plan():
    from drill.mock.follow_ups import FollowUpKind

    cards = deck()
    cards["serving-c0"] = card("serving-c0", "serving", follow_ups=["gemm-c5"])
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1", "moe-c0"), cards, clock)
    run.begin()
    follow = run.submit(graded(0.9), None)
    assert follow is not None and follow.kind is FollowUpKind.DEEPER and follow.card.id == "gemm-c5"
    # 8 planned minutes left and 4 for the follow-up fit in the 20: every planned question is still asked
    assert [s.card_id for s in run.slots] == ["serving-c0", "serving-c1", "moe-c0"]
    assert run.begin().card_id == "serving-c0" and run.asking_follow_up() is follow  # asked next
    clock.t += 30
    run.submit_follow_up(graded(1.0), {"typed": "deeper"})
    assert follow.spent_s == 30 and run.slots[0].spent_s == 0  # its time is its own
    assert abs(run.slots[0].score - (0.9 + 0.5) / 1.5) < 1e-9  # raised by the follow-up
    assert run.begin().card_id == "serving-c1"
    clock = Clock()
    tight = MockRun(plan_of("serving-c0", "serving-c1", "moe-c0", minutes=12), cards, clock)
    tight.begin()
    clock.t += 60  # a minute on the first question: 11 left, 8 planned still to come, 4 for the follow-up
    assert tight.submit(graded(0.9), None) is None  # no time for it beside the plan: the planned topic is asked
    assert tight.begin().card_id == "serving-c1"
    suspended = MockRun(plan_of("serving-c0", "serving-c1"), cards, Clock(), exclude=["gemm-c5"])
    suspended.begin()
    # the card it names is suspended: another card of its topic, one the mock does not ask
    assert suspended.submit(graded(0.9), None).card.id == "serving-c2"


def test_a_weak_answer_brings_a_hint_and_a_narrower_question_on_the_same_card():
    from drill.mock.follow_ups import FollowUpKind

    cards = deck()
    cards["serving-c0"] = Card(
        id="serving-c0", kind="concept", topic="serving", prompt="p", answer="a", rubric=("one", "two", "three")
    )
    run = MockRun(plan_of("serving-c0", "serving-c1"), cards, Clock())
    run.begin()
    follow = run.submit(graded(1 / 3, first_missed=1), {"typed": "x"})
    assert follow is not None and follow.kind is FollowUpKind.NARROWER
    assert follow.card.id == "serving-c0" and follow.card.rubric == ("two",) and follow.hint == "two"
    run.begin()
    run.submit_follow_up(graded(0.0), {"typed": "no idea"})
    assert abs(run.slots[0].score - 1 / 3) < 1e-9  # a failed follow-up costs nothing


def test_a_follow_up_left_unanswered_when_its_minutes_run_out_changes_nothing():
    clock = Clock()
    run = MockRun(plan_of("serving-c0", "serving-c1"), deck(), clock)
    run.begin()
    follow = run.submit(graded(0.9), None)
    run.begin()
    clock.t += follow.budget_s
    assert run.follow_up_over()
    run.end_follow_up()
    assert follow.status == "unanswered" and run.slots[0].score == 0.9
    assert run.begin().card_id == "serving-c1"


def test_schedule_after_a_mock():
    due_later = CardState("c", sm2=SM2State(3, 2.5, 20), due=TODAY + dt.timedelta(days=15), introduced_on=TODAY)
    failed = schedule_after(due_later, 0.3, TODAY)
    assert failed.due == TODAY + dt.timedelta(days=1) and failed.sm2.ef == 2.5 and failed.sm2.interval == 20
    assert schedule_after(due_later, 0.8, TODAY) is due_later  # a pass leaves the schedule alone
    due_today = CardState("c", sm2=SM2State(1, 2.5, 1), due=TODAY, introduced_on=TODAY)
    assert schedule_after(due_today, 0.0, TODAY) is due_today  # already due sooner
    new = schedule_after(CardState("n"), 0.0, TODAY)
    assert new.due == TODAY + dt.timedelta(days=1) and new.introduced_on == TODAY


def test_the_recorder_saves_each_answer_and_the_report(tmp_path, capsys):
    cards = deck()
    store = Store(tmp_path)
    clock = Clock()
    plan = plan_of("serving-c0", "moe-c0", "gemm-c0")
    run = MockRun(plan, cards, clock)
    now = dt.datetime(2026, 11, 23, 9, 0)
    rec = MockRecorder(
        store, run, plan, cards, lambda: now, lambda: TODAY, {"serving": "Inference serving"}, {"moe": 0.4}
    )
    run.begin()
    clock.t += 50
    run.submit(graded(0.2), {"typed": "not sure"})
    rec.answered(run.slots[0])
    row, answers = store.mock(rec.mock_id)
    assert row.status == "running" and [a.status for a in answers] == ["answered", "pending", "pending"]
    assert store.states()["serving-c0"].due == TODAY + dt.timedelta(days=1)  # failed: due tomorrow
    (log,) = store.reviews("serving-c0")
    assert (log.mode, log.grade) == ("mock", 1)
    run.begin()
    run.quit()
    report = rec.finish()
    row, answers = store.mock(rec.mock_id)
    assert row.status == "quit" and [a.status for a in answers] == ["answered", "unanswered", "unanswered"]
    assert report.answered == 1 and report.unanswered == 2 and report.total == 3
    assert abs(report.score - 0.2 / 3) < 1e-9
    assert report.questions[0]["answer"] == "not sure" and report.questions[0]["expected"] == "answer serving-c0"
    assert [t["topic"] for t in report.study_next] == ["moe", "gemm", "serving"]  # ties: weaker first
    store.close()
    from drill.cli import main

    assert main(["--data-dir", str(tmp_path), "mock", "--list"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["id", "started", "length", "status", "score"]
    assert "ended early" in row  # the words the report and the stats screen use
    assert row.index("ended early") == header.index("status") and row.rstrip().endswith("7%")


def test_a_ledger_question_in_the_report_shows_the_numbers_it_was_asked_with():
    import json
    import random

    from drill.cards.templating import draw_params, render
    from drill.mock.report import sides
    from tests.conftest import bundled_cards

    card = next(c for c in bundled_cards().values() if c.kind == "memory_ledger" and "{{" in c.prompt)
    draw = json.loads(json.dumps(draw_params(card, random.Random(11))))  # as the answer record stores it
    shown = render(card, draw)
    prompt, expected = sides(card, {"draw": draw, "given": ["1"], "right": 0})
    assert prompt == shown.prompt and "{{" not in prompt + expected
    assert expected.startswith(f"- {shown.answers[0].label}: ")
    unanswered, _ = sides(card, None)  # never answered: one fixed draw, and the report says so
    assert "{{" not in unanswered and unanswered.endswith("*Not answered: shown with one draw of its numbers.*")
    concept = next(c for c in bundled_cards().values() if c.kind == "concept")
    assert sides(concept, {"typed": "x"}) == (concept.prompt, concept.answer)


def test_mock_plan_on_the_command_line_says_it_is_one_draw(tmp_path, capsys):
    from drill.cli import main

    assert main(["--data-dir", str(tmp_path), "mock", "--plan", "--minutes", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("a 10-minute mock: ") and "each mock draws its own questions" in out
    assert main(["--data-dir", str(tmp_path), "mock", "--plan", "--minutes", "10", "--seed", "5"]) == 0
    first = capsys.readouterr().out
    assert main(["--data-dir", str(tmp_path), "mock", "--plan", "--minutes", "10", "--seed", "5"]) == 0
    assert capsys.readouterr().out == first and "draws its own" not in first  # a fixed seed is one plan


def test_a_mock_cut_off_by_a_closed_terminal_is_closed_once_its_time_is_past(tmp_path, capsys):
    from drill.cli import main

    store = Store(tmp_path)
    started = dt.datetime.now() - dt.timedelta(minutes=40)
    mock = store.start_mock(started, 30, [])
    store.save_mock_answer(mock, "a", position=1, topic="t", kind="concept", budget_s=60, status="answered", score=0.8)
    store.save_mock_answer(mock, "b", position=2, topic="t", kind="concept", budget_s=60, status="pending")
    recent = store.start_mock(dt.datetime.now() - dt.timedelta(minutes=5), 30, [])  # may still be sat elsewhere
    empty = store.start_mock(started, 30, [])  # cut off before any answer
    store.save_mock_answer(empty, "c", position=1, topic="t", kind="concept", budget_s=60, status="pending")
    assert store.close_abandoned_mocks(dt.datetime.now()) == [mock, empty]
    assert (store.mock(empty)[0].status, store.mock(empty)[0].score) == ("abandoned", None)
    row, answers = store.mock(mock)
    assert row.status == "quit" and abs(row.score - 0.4) < 1e-9
    assert [a.status for a in answers] == ["answered", "unanswered"]
    assert store.mock(recent)[0].status == "running"
    assert store.close_abandoned_mocks(dt.datetime.now()) == []  # closed once
    store.close()
    assert main(["--data-dir", str(tmp_path), "mock", "--list"]) == 0
    assert "ended early" in capsys.readouterr().out
    assert main(["--data-dir", str(tmp_path), "mock", "--report", str(mock)]) != 0
    assert "it was cut off (the app closed mid-mock)" in capsys.readouterr().err
    assert main(["--data-dir", str(tmp_path), "mock", "--report", str(empty)]) != 0
    assert "listed as abandoned and counts nowhere" in capsys.readouterr().err


def test_study_next_skips_a_topic_the_mock_passed_and_reads_weakness_after_the_mock(tmp_path):
    cards = deck()
    store = Store(tmp_path)
    plan = plan_of("serving-c0", "moe-c0")
    run = MockRun(plan, cards, Clock())
    now = dt.datetime(2026, 11, 23, 9, 0)
    before = {"serving": 0.1, "moe": 0.2, "gemm": 0.5, "ddp": 0.3}
    after = {"serving": 0.1, "moe": 0.45, "gemm": 0.5, "ddp": 0.3}  # the mock's failed moe answer counted
    rec = MockRecorder(store, run, plan, cards, lambda: now, lambda: TODAY, {}, before, lambda: after)
    run.begin()
    run.submit(graded(0.7), {"typed": "all of it"})  # serving: passed
    rec.answered(run.slots[0])
    run.begin()
    run.submit(graded(0.2), {"typed": "not sure"})  # moe: failed
    rec.answered(run.slots[1])
    report = rec.finish()
    store.close()
    study = [(t["topic"], t["why"]) for t in report.study_next]
    assert study[0] == ("moe", "score 20% in this mock; weakness 0.45")  # the figure after the mock
    assert [t for t, _ in study[1:]] == ["gemm", "ddp"]  # then the weakest not asked; never passed serving


def test_a_topic_somewhat_weaker_than_the_rest_is_asked_well_over_its_share():
    weakness = {"serving": 0.28}  # the others unseen (the prior, about 0.13): a learner's typical first week
    asked = [q.topic for s in range(60) for q in make_plan(deck(), weakness, minutes=30, seed=s).questions]
    assert asked.count("serving") > 3 * asked.count("moe")  # weights go as the square: (0.33 / 0.18)^2


@pytest.mark.parametrize("seed", range(40))
def test_a_45_minute_plan_over_every_topic_asks_the_two_weakest(seed):
    from drill.mock.plan import make_plan
    from tests.conftest import bundled_cards

    cards = bundled_cards()
    topics = sorted({c.topic for c in cards.values()})
    # a history that leaves every topic a little weak and two of them weakest, by a margin weighting alone misses
    weakness = {t: 0.2 for t in topics}
    weakness["flashattention"] = 0.31
    weakness["moe"] = 0.29
    plan = make_plan(cards, weakness, minutes=45, seed=seed)
    asked = {q.topic for q in plan.questions}
    assert {"flashattention", "moe"} <= asked
    assert plan.planned_minutes <= 45
    assert {"memory_ledger", "diagnosis", "shape_trace"} <= {q.kind for q in plan.questions}


def test_the_report_counts_each_question_skipped_even_once_it_came_back_and_was_answered(tmp_path):
    cards = deck()
    store = Store(tmp_path)
    plan = plan_of("serving-c0", "serving-c1", "moe-c0")
    clock = Clock()
    run = MockRun(plan, cards, clock)
    rec = MockRecorder(store, run, plan, cards, lambda: dt.datetime(2026, 11, 23, 9, 0), lambda: TODAY, {}, {})
    for _ in range(3):  # each question skipped once; then each comes back and is answered
        run.begin()
        run.skip()
        rec.save()
    while run.begin() is not None:
        run.submit(graded(0.7), {"typed": "y"})
        rec.save()
    report = rec.finish()
    assert report.skipped == 3 and report.answered == 3
    store.close()


def test_a_twist_asked_next_is_not_labelled_twice():
    from drill.mock.round_report import _without_twist_label

    assert _without_twist_label("**Twist: the team sets `num_workers=8`.** What is the step now?") == (
        "the team sets `num_workers=8`. What is the step now?"
    )
    assert _without_twist_label("What changes at 128k context?") == "What changes at 128k context?"
