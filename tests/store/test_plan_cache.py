"""The kept plan in plan.json: `drill plan` or `drill stats` makes the day's plan once and the start, the stats
after it and a grade given today read it back; another setting, an import or spoiled file makes it again."""

import datetime as dt
import json
import random

import pytest

from drill import paths
from drill.cli import main
from drill.config.settings import load_settings
from drill.store.plan_cache import PLAN_FILE, PlanFile
from drill.study import kept_plan
from drill.study.records import CardState
from drill.study.sm2 import SM2State
from drill.workspace import Workspace
from tests.readiness_world import START, make_world, study

TODAY = START + dt.timedelta(days=4)
DATE = TODAY + dt.timedelta(days=10)


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A learner who studied four days before TODAY, with an interview on DATE at 2 minutes a day (too few for
    the target, 97 %), and no plan kept yet."""
    data = make_world(tmp_path, monkeypatch)
    rng = random.Random(7)
    for offset in range(4):
        study(data, START + dt.timedelta(days=offset), rng)
    args = ["--today", TODAY.isoformat(), "--date", DATE.isoformat(), "--minutes", "2", "--target", "0.97"]
    drill("plan", "--data-dir", str(data), *args)
    (data / PLAN_FILE).unlink()
    return data


def drill(*args: str) -> None:
    assert main(list(args)) == 0


def stats_json(capsys, data) -> dict:
    capsys.readouterr()
    drill("stats", "--data-dir", str(data), "--today", TODAY.isoformat(), "--json")
    return json.loads(capsys.readouterr().out)["readiness"]


def plan_json(capsys, data) -> dict:
    capsys.readouterr()
    drill("plan", "--data-dir", str(data), "--today", TODAY.isoformat(), "--json")
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def made(monkeypatch):
    """The plans made afresh (and what would fit worked out on a kept one), counted."""
    count = {"plans": 0, "suggestions": 0}
    plan_of = kept_plan.plan_of
    with_suggestions = kept_plan.with_suggestions

    def counted_plan(*args, **kwargs):
        count["plans"] += 1
        return plan_of(*args, **kwargs)

    def counted_suggestions(*args, **kwargs):
        count["suggestions"] += 1
        return with_suggestions(*args, **kwargs)

    monkeypatch.setattr(kept_plan, "plan_of", counted_plan)
    monkeypatch.setattr(kept_plan, "with_suggestions", counted_suggestions)
    return count


def workspace(data) -> Workspace:
    return Workspace(data, [paths.cards_dir()], settings=load_settings(), today=TODAY)


def test_the_days_plan_is_made_once_and_read_by_stats_and_the_start(world, capsys, made):
    shown = plan_json(capsys, world)
    assert shown["plan"]["needs_minutes"] is not None and not shown["plan"]["fits"]
    assert made == {"plans": 1, "suggestions": 0} and (world / PLAN_FILE).exists()
    assert stats_json(capsys, world) == shown
    assert stats_json(capsys, world) == shown
    space = workspace(world)
    try:
        session = space.review_session(TODAY)  # the day's queue follows the kept plan
        kept = space.readiness(TODAY)
    finally:
        space.close()
    assert made == {"plans": 1, "suggestions": 0}
    assert kept is not None and kept.plan is not None
    assert session.queue[: len(kept.plan.today_cards.cards)] == list(kept.plan.today_cards.cards)


def test_the_start_makes_the_plan_without_what_would_fit_and_stats_adds_it_once(world, capsys, made):
    space = workspace(world)
    try:
        space.review_session(TODAY)
    finally:
        space.close()
    assert made == {"plans": 1, "suggestions": 0}
    shown = stats_json(capsys, world)
    assert made == {"plans": 1, "suggestions": 1}
    assert stats_json(capsys, world) == shown
    assert made == {"plans": 1, "suggestions": 1}
    (world / PLAN_FILE).unlink()
    assert stats_json(capsys, world) == shown  # what would fit, added later, is what a plan made with it says


def test_a_grade_given_today_keeps_the_plan(world, capsys, made):
    shown = plan_json(capsys, world)
    space = workspace(world)
    try:
        plan = space.readiness(TODAY)
        assert plan is not None and plan.plan is not None
        due = plan.plan.today_cards.due[0]
        before = space.states()[due]
        after = CardState(due, sm2=SM2State(2, 2.5, 6), due=TODAY + dt.timedelta(days=6))
        after.introduced_on = before.introduced_on
        after.last_review_day = TODAY
        at = dt.datetime.combine(TODAY, dt.time(9))
        space.writes().record_review(before, after, grade=5, at=at, day=TODAY, duration_ms=20_000, mode="review")
    finally:
        space.close()
    again = stats_json(capsys, world)
    assert made == {"plans": 1, "suggestions": 0}
    assert again["plan"] == shown["plan"]
    assert again["topics"] != shown["topics"]  # readiness if you stop now counts today's grade


def test_another_minutes_setting_makes_another_plan(world, capsys, made):
    shown = plan_json(capsys, world)
    drill("plan", "--data-dir", str(world), "--today", TODAY.isoformat(), "--minutes", "30")
    assert made["plans"] == 2
    longer = stats_json(capsys, world)
    assert longer["minutes_per_day"] == 30 and longer["plan"] != shown["plan"]
    assert made["plans"] == 2


def test_an_import_of_older_reviews_makes_the_days_plan_as_it_ends(world, capsys, made):
    plan_json(capsys, world)
    space = workspace(world)
    try:
        card_id, state = sorted(space.states().items())[0]
        kept = json.dumps(state.as_json())
        day = TODAY - dt.timedelta(days=9)
        row = {
            "card_id": card_id,
            "reviewed_at": f"{day.isoformat()}T08:00:00",
            "day": day.isoformat(),
            "grade": 5,
            "duration_ms": 10_000,
            "mode": "review",
            "state_before": kept,
            "state_after": kept,
        }
        assert space.import_reviews([row]).added == 1
    finally:
        space.close()
    assert made == {"plans": 2, "suggestions": 0}  # made by the import, with what would fit
    stats_json(capsys, world)
    assert made == {"plans": 2, "suggestions": 0}


# -- the file ------------------------------------------------------------------------------------------


def test_a_file_for_another_key_or_spoiled_is_not_used(world, capsys):
    plan_json(capsys, world)
    path = world / PLAN_FILE
    key, body = path.read_text(encoding="utf-8").split("\n", 1)
    plan_key = key.split(" ")[0]
    kept = PlanFile(world).kept(plan_key)
    assert kept is not None and kept.suggested
    assert PlanFile(world).kept("0" * 64) is None
    path.write_text(key + "\n" + body[: len(body) // 2], encoding="utf-8")  # cut short
    assert PlanFile(world).kept(plan_key) is None
    path.write_text(key + "\n" + json.dumps({"today": "2026-13-01"}) + "\n", encoding="utf-8")
    assert PlanFile(world).kept(plan_key) is None
    PlanFile(world).keep(plan_key, kept)
    assert PlanFile(world).kept(plan_key) == kept


def test_a_folder_it_cannot_write_to_keeps_nothing_and_says_nothing(world, capsys, tmp_path):
    plan_json(capsys, world)
    key = (world / PLAN_FILE).read_text(encoding="utf-8").split(" ")[0]
    kept = PlanFile(world).kept(key)
    assert kept is not None
    nowhere = PlanFile(tmp_path / "missing")
    nowhere.keep(key, kept)
    assert nowhere.kept(key) is None
