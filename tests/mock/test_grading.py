"""Mock grading the learner cannot inflate: checked ticks, step credit, costed hints, follow-ups that only add."""

import datetime as dt
import json
import random

import pytest

from drill.cards.model import Card
from drill.mock.answers import check_tick, grade_answer
from drill.mock.grading import (
    CHOICES_COST,
    FOLLOW_UP_WEIGHT,
    HINT_COST,
    MIN_WORDS,
    READING_SHARE,
    STEP_SHARE,
    STRONG_AT,
    QuestionGrade,
    Tick,
    TickBasis,
    check_point,
    key_terms,
    read_choice,
    with_follow_up,
)
from drill.mock.plan import MockPlan, PlannedQuestion, make_plan, reviewed_within
from drill.mock.record import MockRecorder
from drill.mock.run import MockRun
from drill.store.store import Store
from drill.study.records import CardState
from tests.conftest import bundled_cards

TODAY = dt.date(2026, 11, 23)
COST_CARD = Card(
    id="cost",
    kind="concept",
    topic="capacity-cost",
    prompt="What sets the cost of serving a model, and how would you lower it?",
    answer="Realised tokens per GPU-hour ...",
    rubric=(
        "Realised tokens per GPU-hour, not benchmark peak, sets cost",
        "Utilisation / autoscaling as the dominant lever",
        "Batch at SLO, bytes per token (quantisation), prefix caching",
        "TP degree and its all-reduce cost",
    ),
)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def all_ticked(card, basis=TickBasis.CHECKED):
    return [Tick(i, basis) for i in range(len(card.rubric))]


# -- the check on a tick ------------------------------------------------------------------------------------------
def test_key_terms_are_a_points_distinctive_words_rarest_first():
    # general English ("dominant", "lever") names nothing; the point is its technical words
    assert key_terms("Utilisation / autoscaling as the dominant lever") == ("autoscaling", "Utilisation")
    # "cost" is common in the decks and the question says it: an answer that repeats the question names nothing
    assert "cost" not in key_terms(COST_CARD.rubric[0], COST_CARD.prompt)
    # a hyphenated term is one term; an acronym stays however the question uses it
    assert {"TP", "all-reduce"} <= set(key_terms("TP degree and its all-reduce cost", "What does TP cost?"))
    # a point with no distinctive word is named by its content words
    assert key_terms("the cost", "the cost") == ()
    assert check_point("the cost is what we pay for the fleet each hour", "the cost", "the cost").named == ("cost",)


def _stage_of(card_id, point):
    """The bundled scenario stage whose rubric holds `point`, as a mock asks it (its prompt rendered)."""
    from drill.cards.draw_prose import combinations
    from drill.cards.scenario import stage_card, stages_of

    card = {c.id: c for c in bundled_cards().values()}[card_id]
    stage = next(s for s in stages_of(card) if point in s.rubric)
    return stage_card(card, stage, next(iter(combinations(card, max_draws=None))))


DISAGG_POINT = "KV cache sent layer by layer over RDMA (NIXL, Mooncake-style transfer) while prefill continues"
FLASH_POINT = "the flash-attention kernel disappeared; bmm, softmax and mask kernels took its place"


def _scenario_with(point):
    return next(c.id for c in bundled_cards().values() if point in str(c.fields.get("stages")))


@pytest.mark.parametrize(
    ("point", "answer", "passed"),
    [
        (DISAGG_POINT, "the KV is pushed layer by layer over RDMA to the decode pool", True),
        (DISAGG_POINT, "move it across to the other side while the first part is still running", False),
        (FLASH_POINT, "the flash-attention kernel is gone from the second profile, something slower instead", True),
        (FLASH_POINT, "flash attention no longer runs, three smaller kernels took over its work", True),
        (FLASH_POINT, "one of the things that ran before took another place in the new one", False),
    ],
)
def test_a_scenario_point_is_named_by_its_technical_words_even_when_the_question_says_them(point, answer, passed):
    shown = _stage_of(_scenario_with(point), point)
    terms = key_terms(point, shown.prompt)
    assert not {"sent", "style", "continues", "took", "place", "disappeared"} & {t.lower() for t in terms}
    assert check_point(answer, point, shown.prompt).passed is passed, terms


def test_a_formula_point_is_named_by_its_symbol():
    card = bundled_cards()["quantization-affine-mapping"]
    point = "Formula for q and for dequantisation"
    assert "Formula" not in key_terms(point, card.prompt)
    assert check_point("q = round(x / s) + z with the scale s and zero point z", point, card.prompt).passed
    assert not check_point("the formula is the usual one that everybody writes down first", point, card.prompt).passed


def test_every_bundled_rubric_point_has_a_distinctive_term_but_a_few():
    from drill.mock.term_rarity import common_words

    points = [p for c in bundled_cards().values() for p in c.rubric]
    empty = [p for p in points if not key_terms(p)]
    assert len(empty) <= len(points) // 100, empty
    for point in points:
        assert not {t.lower() for t in key_terms(point)} & common_words(), point


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ("cost", False),  # one word
        ("utilization is what matters here, so autoscale", False),  # 7 words: under the minimum
        ("keep the fleet busy: utilization and autoscaling decide most of it", True),  # US spelling, -ing form
        ("keep the fleet busy all day long and turn idle ones off", False),  # enough words, none of the terms
    ],
)
def test_a_point_needs_enough_words_and_one_of_its_key_terms(answer, passed):
    check = check_point(answer, COST_CARD.rubric[1], COST_CARD.prompt)
    assert check.passed is passed
    assert bool(check.refusal()) is not passed
    if check.word_count < MIN_WORDS:
        assert f"of the {MIN_WORDS} words a point needs" in check.refusal()


def test_the_one_word_answer_cost_with_every_point_ticked_scores_no_point():
    record = {"typed": "cost"}
    assert not any(check_tick(COST_CARD, i, record).passed for i in range(4))
    # were every point ticked anyway, as checked or by override, the grade takes none of them
    for basis in TickBasis:
        forced = grade_answer(COST_CARD, record, all_ticked(COST_CARD, basis))
        assert forced.score == forced.evidence == 0.0 and not forced.overrides


def test_an_override_counts_in_the_score_not_the_evidence_and_a_checked_tick_is_checked_again():
    record = {"typed": "keep the fleet busy all day long and turn idle ones off"}  # 12 words, no key term
    overridden = grade_answer(COST_CARD, record, [Tick(0, TickBasis.OVERRIDDEN, "busy means realised tokens")])
    assert overridden.score == 0.25 and overridden.evidence == 0.0
    assert overridden.overrides == (
        {"point": COST_CARD.rubric[0], "basis": "overridden", "reason": "busy means realised tokens"},
    )
    claimed = grade_answer(COST_CARD, record, [Tick(0, TickBasis.CHECKED)])  # a tick said checked, but not named
    assert claimed.score == claimed.evidence == 0.0


def test_an_answer_earns_the_points_it_names_and_no_other():
    record = {"typed": "realised tokens per GPU hour set it; raise utilisation with autoscaling, batch at the SLO"}
    ticked = [i for i in range(4) if check_tick(COST_CARD, i, record).passed]
    assert ticked == [0, 1, 2]  # "TP degree and its all-reduce" is not named
    grade = grade_answer(COST_CARD, record, [Tick(i, TickBasis.CHECKED) for i in ticked])
    assert grade.score == grade.evidence == 0.75 and grade.missed == (COST_CARD.rubric[3],)
    assert grade.first_missed == 3


def test_a_card_without_a_rubric_is_checked_against_its_expected_answer():
    card = Card(id="n", kind="concept", topic="t", prompt="Why?", answer="Occupancy hides memory latency.")
    assert check_tick(card, 0, {"typed": "more warps in flight hide the memory latency of each load"}).passed
    assert not check_tick(card, 0, {"typed": "it is just faster that way for most of the kernels"}).passed


# -- diagnosis --------------------------------------------------------------------------------------------------
CHOICES = [
    "memory-bound (batch-1 GEMMs reading weights)",
    "launch-bound (CPU kernel-launch rate)",
    "host synchronisation every step",
    "compute-bound (elementwise kernels)",
]


@pytest.mark.parametrize(
    ("reading", "index"),
    [
        ("launch bound: the CPU cannot issue kernels fast enough", 1),
        ("it is memory bound, reading the weights each step", 0),
        ("a .item() forces host synchronisation", 2),
        ("the GPU is slow", None),  # names none
        ("memory or launch, hard to say", None),  # names two as strongly
    ],
)
def test_a_reading_in_the_learners_words_names_one_listed_reading(reading, index):
    assert read_choice(reading, CHOICES).index == index


def test_the_listed_readings_are_a_hint_that_costs():
    card = Card(
        id="d",
        kind="diagnosis",
        topic="profiling",
        prompt="What bounds it?",
        answer="...",
        rubric=("Capture a CUDA graph", "Measure launches per step"),
        fields={"evidence": "...", "choices": CHOICES, "correct": CHOICES[1]},
    )
    free = grade_answer(card, {"correct": True, "choices_shown": False, "reading": "launch-bound"})
    listed = grade_answer(card, {"correct": True, "choices_shown": True, "choice": CHOICES[1]})
    wrong = grade_answer(card, {"correct": False, "choices_shown": False, "reading": "memory"})
    assert free.score == READING_SHARE and listed.score == pytest.approx(READING_SHARE - CHOICES_COST)
    assert listed.hints == ("the listed readings were shown",) and not free.hints
    assert wrong.score == 0.0 and wrong.missed[0] == f"the evidence points to {CHOICES[1]}"


# -- numeric step credit ----------------------------------------------------------------------------------------
def ledger_card():
    card = bundled_cards()["memory-accounting-param-count"]
    assert len(card.fields["ledger"]) == 4
    return card


def test_a_numeric_answer_earns_credit_for_the_steps_its_working_shows():
    from drill.cards.templating import draw_params, render
    from drill.quantities import format_quantity

    card = ledger_card()
    draw = json.loads(json.dumps(draw_params(card, random.Random(3))))
    shown = render(card, draw)
    steps = [format_quantity(t.value, t.unit) for t in shown.ledger]
    right = format_quantity(shown.answers[0].value, shown.answers[0].unit)
    wrong_total = {"draw": draw, "given": ["1"], "working": ""}
    assert grade_answer(card, wrong_total).score == 0.0
    two_steps = grade_answer(card, {**wrong_total, "working": f"attention {steps[0]}, FFN {steps[1]}, then I slipped"})
    assert two_steps.score == pytest.approx(STEP_SHARE * 2 / 4) and two_steps.evidence == two_steps.score
    assert two_steps.first_missed == 2 and "step: " + shown.ledger[2].term in two_steps.missed
    every_step = grade_answer(card, {**wrong_total, "working": "; ".join(steps)})
    assert every_step.score == pytest.approx(STEP_SHARE)
    assert grade_answer(card, {"draw": draw, "given": [right], "working": ""}).score == 1.0  # vouches for its steps


# -- follow-ups only add --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hinted", [False, True])
def test_a_follow_up_never_lowers_the_score_before_it(hinted):
    grid = [i / 20 for i in range(21)]
    for before in grid:
        for follow in grid:
            assert with_follow_up(before, follow, hinted) >= before
    assert with_follow_up(0.85, 1.0) == pytest.approx((0.85 + FOLLOW_UP_WEIGHT) / (1 + FOLLOW_UP_WEIGHT))
    assert with_follow_up(0.2, 1.0, hinted=True) == pytest.approx(
        (0.2 + FOLLOW_UP_WEIGHT * (1 - HINT_COST)) / (1 + FOLLOW_UP_WEIGHT)
    )


def first_missed_of(card):
    if card.kind in ("concept", "diagnosis"):
        return 0 if card.rubric else None
    if card.kind == "memory_ledger":
        return 0 if card.fields.get("ledger") else None
    return 0 if card.kind == "shape_trace" else None


def sit(seed, scores, *, take_follow_ups):
    """A 45-minute mock over the bundled decks, each question answered at its budget's pace with its score in
    `scores`; each follow-up offered answered at its own pace (or declined). The mock's score and its follow-ups."""
    cards = bundled_cards()
    plan = make_plan(cards, {}, minutes=45, seed=seed)
    clock = Clock()
    run = MockRun(plan, cards, clock)
    rng = random.Random(seed)
    follow_ups = 0
    while (slot := run.begin()) is not None:
        follow = run.asking_follow_up()
        if follow is not None:
            follow_ups += 1
            if take_follow_ups:
                clock.t += follow.budget_s - 1
                score = rng.random()
                run.submit_follow_up(QuestionGrade(score, score), None)
            else:
                run.skip()
            continue
        clock.t += slot.budget_s
        score = scores(slot.card_id)
        missed = first_missed_of(cards[slot.card_id]) if score < STRONG_AT else None
        run.submit(QuestionGrade(score, score, first_missed=missed), None)
    return run.score(), follow_ups, len(plan.questions)


def test_over_200_plans_earning_follow_ups_never_lowers_a_mocks_score():
    lower = 0
    follow_ups = []
    for seed in range(200):
        drawn = random.Random(1000 + seed)
        table: dict[str, float] = {}

        def scores(card_id, table=table, drawn=drawn):
            return table.setdefault(card_id, drawn.random())

        with_them, asked, _ = sit(seed, scores, take_follow_ups=True)
        without, _, _ = sit(seed, scores, take_follow_ups=False)
        lower += with_them < without - 1e-12
        follow_ups.append(asked)
    assert lower == 0
    assert min(follow_ups) >= 1  # each of the 200 plans, answered at its budgets' pace, got follow-ups


def test_every_plan_answered_perfectly_at_full_budget_pace_gets_a_deeper_follow_up():
    counts = [sit(seed, lambda _: 1.0, take_follow_ups=True)[1] for seed in range(200)]
    assert min(counts) >= 1 and sum(counts) / len(counts) >= 2


def test_a_plan_answered_at_85_percent_scores_no_less_for_its_follow_ups():
    score, asked, _ = sit(7, lambda _: 0.85, take_follow_ups=True)
    assert asked >= 1 and score >= 0.85 - 1e-9


# -- the record: weakness and the review log read graded evidence only ----------------------------------------------
def test_ticks_by_override_reach_the_report_but_not_the_weakness_figures(tmp_path):
    from drill.store.reader import read_progress

    cards = {COST_CARD.id: COST_CARD}
    plan = MockPlan(20, (PlannedQuestion(COST_CARD.id, COST_CARD.topic, "concept", 4),))
    store = Store(tmp_path)
    run = MockRun(plan, cards, Clock())
    now = dt.datetime(2026, 11, 23, 9, 0)
    rec = MockRecorder(store, run, plan, cards, lambda: now, lambda: TODAY, {}, {})
    run.begin()
    ticks = [Tick(i, TickBasis.OVERRIDDEN, "I meant it") for i in range(4)]
    typed = {"typed": "it is about what the fleet spends on each day overall"}  # 11 words, none of a point's terms
    run.submit(grade_answer(COST_CARD, typed, ticks), typed)
    rec.answered(run.slots[0])
    run.quit()
    report = rec.finish()
    (log,) = store.reviews(COST_CARD.id)
    _, (answer,) = store.mock(rec.mock_id)
    store.close()
    assert report.score == 1.0 and report.evidence == 0.0  # the report says both
    assert report.questions[0]["overrides"][0]["reason"] == "I meant it"
    assert answer.score == 0.0 and json.loads(answer.answer)["score"] == 1.0  # the column: the graded evidence
    assert log.grade == 0  # the review log's grade is the evidence's: the schedule sees a failed answer
    topic_score = read_progress(tmp_path, TODAY).last_mock_by_topic[COST_CARD.topic][1]
    assert topic_score == 0.0  # the weakness figures read the graded evidence, never the ticks alone


# -- which cards a mock asks ----------------------------------------------------------------------------------------
def test_a_card_reviewed_in_the_last_7_days_is_asked_only_when_its_topic_has_no_other():
    cards = {
        f"c{i}": Card(id=f"c{i}", kind="concept", topic="gemm", prompt="p", answer="a", rubric=("r",)) for i in range(6)
    }
    days_ago = [0, 1, 3, 6, 6, 7]  # c5 was last reviewed 7 days ago: outside the last 7 days, today included
    states = [CardState(f"c{i}", last_review_day=TODAY - dt.timedelta(days=d)) for i, d in enumerate(days_ago)]
    recent = reviewed_within(states, TODAY)
    assert recent == {"c0", "c1", "c2", "c3", "c4"}
    picked = {
        make_plan(cards, {}, minutes=20, questions=1, recent=recent, seed=s).questions[0].card_id for s in range(30)
    }
    assert picked == {"c5"}  # the only card not reviewed in the last 7 days
    everything = {
        make_plan(cards, {}, minutes=20, questions=1, recent=set(cards), seed=s).questions[0].card_id for s in range(30)
    }
    assert len(everything) > 1  # all reviewed lately: any of them


def test_a_mock_cut_off_is_closed_with_the_score_it_reports_and_its_evidence_left_as_graded(tmp_path):
    store = Store(tmp_path)
    started = dt.datetime.now() - dt.timedelta(minutes=40)
    mock = store.start_mock(started, 30, [])
    kept = json.dumps({"given": {"typed": "cost"}, "score": 1.0, "grade": None, "follow_up": None})
    store.save_mock_answer(
        mock, "a", position=1, topic="t", kind="concept", budget_s=60, status="answered", score=0.0, answer=kept
    )
    store.save_mock_answer(mock, "b", position=2, topic="t", kind="concept", budget_s=60, status="pending")
    assert store.close_abandoned_mocks(dt.datetime.now()) == [mock]
    row, answers = store.mock(mock)
    store.close()
    assert row.status == "quit" and row.score == pytest.approx(0.5)  # the mock's own score: (1.0 + 0) / 2
    assert [a.score for a in answers] == [0.0, None]  # the graded evidence the weakness figures read, untouched
