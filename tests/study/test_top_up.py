"""The top-up of the interview's last days, through drill.api: a learner who forgets faster than the model thinks
ends with more cards ready when the minutes left over bring up cards not due."""

import datetime as dt
import random

from drill import api
from drill.study import plan_runs
from drill.study.memory_law import memory_law
from tests.readiness_world import START, make_world

DAYS = 10
MINUTES = 30
SECONDS_A_CARD = 40.0
FORGETS_FASTER = 0.15  # the learner's stabilities next to FSRS's defaults
READY = 0.9


class FastForgetter:
    """FSRS with the default parameters, every stability times FORGETS_FASTER: the model's law, not its learner."""

    def __init__(self) -> None:
        self.law = memory_law(None, 36500)
        self.cards: dict[str, tuple[float, float, int, dt.date]] = {}  # stability, difficulty, state, last review

    def recall(self, card_id: str, day: dt.date) -> float:
        known = self.cards.get(card_id)
        if known is None:
            return 0.0
        stability, _, _, last = known
        return self.law.recall(stability * FORGETS_FASTER, (day - last).days)

    def answer(self, card_id: str, day: dt.date, rng: random.Random) -> int:
        known = self.cards.get(card_id)
        if known is None:
            grade = 4
            memory = self.law.first(grade)
        else:
            stability, difficulty, state, last = known
            if last == day:  # a same-day repeat: the answer was just shown
                return 4
            grade = 4 if rng.random() < self.recall(card_id, day) else 1
            memory = self.law.review(stability, difficulty, state, (day - last).days, grade)
        self.cards[card_id] = (memory.stability, memory.difficulty, memory.state, day)
        return grade


def cards_ready(data) -> tuple[int, int]:
    """The cards at READY on the date after DAYS days of the plan's queues, and the top-up cards served."""
    learner = api.open(data, read_config=False)
    learner.use_scheduler("fsrs")
    date = START + dt.timedelta(days=DAYS)
    learner.set_interview(date, minutes_per_day=MINUTES)
    memory = FastForgetter()
    rng = random.Random(11)
    topped = 0
    try:
        for offset in range(DAYS):
            learner.set_day(START + dt.timedelta(days=offset))
            day = learner.start_day()
            while (card := day.current) is not None:
                result = day.grade(memory.answer(card.id, learner.day, rng), SECONDS_A_CARD)
                topped += result.mode == "early"
        ready = sum(memory.recall(card.id, date) >= READY for card in learner.cards())
    finally:
        learner.close()
    return ready, topped


def test_a_learner_who_forgets_faster_than_the_model_ends_with_more_cards_ready_with_the_top_up(tmp_path, monkeypatch):
    data = make_world(tmp_path, monkeypatch)
    with_top_up, asked_ahead = cards_ready(data / "with")
    with monkeypatch.context() as without:
        without.setattr(plan_runs, "TOP_UP_REST_DAYS", 10**6)  # no card rested long enough: no top-up
        without_top_up, asked_ahead_without = cards_ready(data / "without")
    assert asked_ahead > asked_ahead_without  # the top-up was served: more cards asked before they were due
    assert with_top_up > without_top_up  # 22 of the 36 cards against 17 when measured
