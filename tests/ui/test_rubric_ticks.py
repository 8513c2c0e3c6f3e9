"""A mock answer's rubric ticks on their own: a tick only for a point the answer names, one given anyway only
with a reason, none once the ticks are final, and nothing carried into the next question."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Input

from drill.cards.model import Card
from drill.mock.grading import Tick, TickBasis
from drill.ui.rubric_ticks import Checklist, RubricTicks
from tests.conftest import refresh

CARD = Card(
    id="fleet",
    kind="concept",
    topic="serving",
    prompt="How do you keep a fleet of inference GPUs cost-effective?",
    answer="Keep them busy.",
    rubric=["utilisation of every GPU kept high", "autoscaling on the traffic"],
)
# names the second point (autoscaling, traffic), not the first; long enough for a reason to stand in for it
ANSWER = {"typed": "I would add autoscaling driven by the traffic so that no replica sits idle for long"}


class Ticking(App[None]):
    def compose(self) -> ComposeResult:
        yield RubricTicks(id="ticks")


async def test_a_point_is_ticked_when_named_or_anyway_with_a_reason_and_never_once_final():
    app = Ticking()
    async with app.run_test(size=(100, 20)) as pilot:
        ticks = app.query_one(RubricTicks)
        rubric = ticks.ask(CARD, dict(ANSWER))
        await refresh(pilot)
        assert rubric.has_focus and rubric.option_count == 2
        assert not ticks.may_tick(0) and ticks.may_tick(1)  # the answer names the second point only
        rubric.select(1)

        rubric.highlighted = 0
        ticks.override()  # the first point anyway: the reason is asked first
        await refresh(pilot)
        assert ticks.overriding == 0 and app.query_one("#mreason", Input).has_focus
        await pilot.press("enter")  # no reason: no tick
        await refresh(pilot)
        assert ticks.overriding == 0 and 0 not in rubric.selected
        await pilot.press(*"idle replicas are the cost", "enter")
        await refresh(pilot)
        assert ticks.overriding is None and rubric.has_focus
        assert ticks.ticks() == [
            Tick(0, TickBasis.OVERRIDDEN, "idle replicas are the cost"),
            Tick(1, TickBasis.CHECKED),
        ]

        ticks.make_final()
        assert not ticks.may_tick(0) and app.query_one(Checklist).disabled

        ticks.clear()  # the next question
        assert ticks.ticks() == [] and ticks.overrides == {} and not ticks.final
        assert not ticks.may_tick(0)  # nothing submitted yet: nothing to tick


async def test_escape_from_the_reason_ticks_nothing():
    app = Ticking()
    async with app.run_test(size=(100, 20)) as pilot:
        ticks = app.query_one(RubricTicks)
        rubric = ticks.ask(CARD, dict(ANSWER))
        rubric.highlighted = 0
        ticks.override()
        await refresh(pilot)
        ticks.cancel_override()
        await refresh(pilot)
        assert ticks.overriding is None and rubric.has_focus and ticks.ticks() == []
        assert not app.query_one("#mreason", Input).has_class("shown")
