"""Setting up a mock interview: its length, its mix of topics, its questions (drill.ui.mock_report_screen shows
its report afterwards)."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from drill.mock.plan import DEFAULT_MINUTES
from drill.study.standing import ranked_topics
from drill.ui.answer_fields import InOrderInput
from drill.ui.screen_text import SafeLabel, SafeOptionList, SafeStatic
from drill.ui.screen_text import markup_text as escape  # Textual markup: every bracket escaped

if TYPE_CHECKING:
    from drill.cards.model import Card
    from drill.mock.plan import MockPlan
    from drill.mock.rounds import RoundKind, RoundPlan
    from drill.study.tracks import Track


@dataclass(frozen=True)
class MockRequest:
    """What the learner chose on the setup screen; `practice`: each answer's verdict shown after it; `hard`: the
    GPU and model figures of numeric questions supplied from memory (drill.mock.hard)."""

    minutes: int
    topics: tuple[str, ...]
    questions: int | None
    plan: "MockPlan"
    practice: bool = False
    round: "RoundPlan | None" = None  # a round: one scenario in stages (its plan is `plan`)
    hard: bool = False


HELD_WORDS = "answers and verdicts are held until it ends; the clock runs"
PRACTICE_WORDS = "each answer's verdict and expected answer follow it"
HARD_KEY = "ctrl+r"
HARD_ON_WORDS = "GPU and model figures from memory, numbers within ±{tolerance:.0%}"


def mode_words(practice: bool, hard: bool) -> str:
    """The setup screen's top line: the modes on first (a narrow terminal cuts the end), then what they mean."""
    from drill.mock.hard import HARD_TOLERANCE

    title = "mock interview" + (", practice mode" if practice else "") + (", hard mode" if hard else "")
    meanings = [HARD_ON_WORDS.format(tolerance=HARD_TOLERANCE)] if hard else []
    meanings.append(PRACTICE_WORDS if practice else HELD_WORDS)
    return f"[b]{title}[/b] │ " + " │ ".join(meanings)


class MockSetupScreen(Screen[MockRequest | None]):
    """Choose the length and the mix; the plan below updates as you type. Dismisses with the request."""

    BINDINGS = [
        Binding("escape", "cancel", "Back", id="mock_setup.back"),
        Binding("tab", "app.focus_next", "Next field", show=False),
        Binding("ctrl+t", "practice", "Practice mode on/off", id="mock_setup.practice"),
        Binding(HARD_KEY, "hard", "Hard mode on/off", id="mock_setup.hard"),
    ]
    DEFAULT_CSS = """
    MockSetupScreen { layout: vertical; }
    MockSetupScreen #stop { height: 1; padding: 0 1; background: $boost; }
    MockSetupScreen #sbody { height: 1fr; padding: 0 1; }
    MockSetupScreen #mix { max-height: 12; }
    MockSetupScreen #splan { height: auto; margin-top: 1; }
    MockSetupScreen #sbar { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(
        self,
        cards: Mapping[str, "Card"],
        weakness: Mapping[str, float],
        titles: Mapping[str, str],
        tracks: Mapping[str, Track],
        *,
        minutes: int = DEFAULT_MINUTES,
        topics: Sequence[str] = (),
        questions: int | None = None,
        judge_available: bool = False,
        exclude: Sequence[str] = (),
        seed: int | None = None,
        recent: Collection[str] = (),
        practice: bool = False,
        hard: bool = False,
        round_asked: str | None = None,
        quick: bool = False,
    ) -> None:
        super().__init__()
        self.round_asked = round_asked  # --round: offered first
        self.quick = quick  # --quick: the quiz format only, no rounds offered
        self.rounds: dict[int, RoundKind] = {}  # the mixes that are rounds, by their place in the list
        self.round_plan: RoundPlan | None = None
        self.cards = cards
        self.weakness = weakness
        self.titles = titles
        self.tracks = tracks
        self.minutes = minutes
        self.questions = questions
        self.given_topics = tuple(topics)
        self.judge_available = judge_available
        self.exclude = tuple(exclude)
        self.recent = frozenset(recent)  # cards reviewed lately: the plan prefers others
        self.practice = practice
        self.hard = hard  # the GPU and model figures from memory
        # one seed per setup, so the plan shown changes only when the learner changes the setup
        self.seed = seed if seed is not None else random.randrange(2**31)
        self.plan: MockPlan | None = None
        self.mixes: list[tuple[str, tuple[str, ...]]] = []

    def compose(self) -> ComposeResult:
        yield SafeStatic(mode_words(self.practice, self.hard), id="stop")
        with VerticalScroll(id="sbody"):
            yield SafeLabel("Minutes (1-600):", classes="step-label")
            yield InOrderInput(str(self.minutes), id="minutes", compact=True, restrict=r"[0-9]*", max_length=3)
            yield SafeLabel("Questions at most (blank: as many as fit):", classes="step-label")
            yield InOrderInput(
                "" if self.questions is None else str(self.questions),
                id="questions",
                compact=True,
                restrict=r"[0-9]*",
                max_length=3,
            )
            if self.round_mixes():
                label = "A round, or a quick mock's topics (↑↓, [b]enter[/b] starts the highlighted one):"
            else:
                label = "Topics (↑↓, [b]enter[/b] starts the mock with the highlighted mix):"
            yield SafeLabel(label, classes="step-label")
            yield SafeOptionList(id="mix")
            yield SafeStatic(id="splan")
        yield SafeStatic(
            "[b]tab[/b] next · [b]enter[/b] on a mix starts · [b]ctrl+t[/b] practice · "
            f"[b]{HARD_KEY}[/b] hard · [b]esc[/b] back",
            id="sbar",
        )
        yield Footer(compact=True)

    def round_mixes(self) -> list[tuple[str, "RoundKind"]]:
        """The rounds to offer (none with --quick, or when the decks hold no scenario): the one asked for first."""
        from drill.mock.rounds import ROUND_WORDS, RoundKind, scenarios_for

        if self.quick or not scenarios_for(self.cards, RoundKind.MIXED):
            return []
        kinds = [k for k in RoundKind if k is RoundKind.KERNEL or scenarios_for(self.cards, k)]
        if not any(c.kind == "kernel" for c in self.cards.values()):
            kinds.remove(RoundKind.KERNEL)
        kinds.sort(key=lambda k: k.value != self.round_asked)
        return [(f"round · {k.value}: {ROUND_WORDS[k]}", k) for k in kinds]

    def on_mount(self) -> None:
        mixes: list[tuple[str, tuple[str, ...]]] = []
        for label, kind in self.round_mixes():
            self.rounds[len(mixes)] = kind
            mixes.append((label, ()))
        if self.given_topics:
            names = ", ".join(self.given_topics)
            mixes.append((f"the topics you named: {names}", self.given_topics))
        mixes.append(("all topics, weighted toward your weakest", ()))
        known = {c.topic for c in self.cards.values()}
        for track_id, track in self.tracks.items():
            topics = tuple(t for t in track["topics"] if t in known)
            if topics:
                mixes.append((f"track {track_id}: {track['title']}", topics))
        for topic in ranked_topics(known, self.weakness):  # the stats' weakest-topics ranking
            measured = f"weakness {self.weakness[topic]:.2f}" if topic in self.weakness else "not practised yet"
            label = f"{self.titles.get(topic, topic)} ({topic}) · {measured}"
            mixes.append((label, (topic,)))
        self.mixes = mixes
        options = self.query_one("#mix", OptionList)
        options.add_options([Option(label) for label, _ in mixes])  # shown as text: a label adds no markup
        options.highlighted = 0
        self.query_one("#minutes", Input).focus()
        self.replan()

    def chosen(self) -> tuple[int, int | None, tuple[str, ...]]:
        minutes_text = self.query_one("#minutes", Input).value
        questions_text = self.query_one("#questions", Input).value
        minutes = int(minutes_text) if minutes_text.isdigit() else 0
        questions = int(questions_text) if questions_text.isdigit() and int(questions_text) > 0 else None
        index = self.query_one("#mix", OptionList).highlighted or 0
        topics = self.mixes[index][1] if self.mixes else ()
        return minutes, questions, topics

    def replan(self) -> None:
        from drill.mock.plan import PlanError, follow_up_reserve, make_plan

        minutes, questions, topics = self.chosen()
        box = self.query_one("#splan", Static)
        index = self.query_one("#mix", OptionList).highlighted or 0
        self.round_plan = None
        if index in self.rounds:
            self.replan_round(self.rounds[index], minutes, box)
            return
        try:
            if not 1 <= minutes <= 600:
                raise PlanError("minutes must be 1 to 600")
            self.plan = make_plan(
                self.cards,
                self.weakness,
                minutes=minutes,
                topics=topics,
                questions=questions,
                judge_available=self.judge_available,
                exclude=self.exclude,
                seed=self.seed,
                recent=self.recent,
            )
        except PlanError as exc:
            self.plan = None
            box.update(f"[red]{escape(str(exc))}[/red]")
            return
        n = len(self.plan.questions)
        kept = follow_up_reserve(minutes)
        room = f", {kept} kept for follow-ups" if kept else ""
        lines = [f"[b]{n} question{'' if n == 1 else 's'}, {self.plan.planned_minutes} of {minutes} minutes{room}:[/b]"]
        for i, q in enumerate(self.plan.questions, 1):
            title = self.titles.get(q.topic, q.topic)
            lines.append(f"{i:2d}. {q.minutes:2d} min  {q.kind.replace('_', ' '):<13} {escape(title)}")
        box.update("\n".join(lines))

    def replan_round(self, kind: "RoundKind", minutes: int, box: Static) -> None:
        """The round's plan under the list: its problem, its stages and their minutes, the minutes kept for twists."""
        from drill.mock.plan import PlanError, follow_up_reserve, gpu_count, judge_can_run
        from drill.mock.rounds import make_round

        try:
            self.round_plan = make_round(
                self.cards,
                kind,
                minutes=minutes,
                seed=self.seed,
                recent=self.recent,
                exclude=self.exclude,
                judge_available=judge_can_run(),
                gpus=gpu_count(),
            )
        except PlanError as exc:
            self.plan = None
            box.update(f"[red]{escape(str(exc))}[/red]")
            return
        self.plan = self.round_plan.plan
        kept = follow_up_reserve(minutes)
        lines = [
            f"[b]a {minutes}-minute round: {escape(self.round_plan.title)}, "
            f"{len(self.plan.questions)} stages, {kept} minutes kept for follow-ups:[/b]"
        ]
        for stage in self.round_plan.stages:
            when = "if earned" if stage.twist else f"{stage.minutes:2d} min"  # a twist is a follow-up
            lines.append(f"{stage.number:2d}. {when:<9} {stage.label:<9} {stage.dimension.value}")
        if not self.round_plan.timed:
            from drill.mock.rounds import NOT_TIMED

            lines.append(f"[yellow]the kernel will be {escape(NOT_TIMED)}[/yellow]")
        box.update("\n".join(lines))

    def on_input_changed(self, message: Input.Changed) -> None:
        self.replan()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.focus_next()

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        self.replan()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        if self.plan is None:
            self.notify("fix the setup first: the plan above says why", severity="warning")
            return
        minutes, questions, topics = self.chosen()
        self.dismiss(MockRequest(minutes, topics, questions, self.plan, self.practice, self.round_plan, self.hard))

    def action_practice(self) -> None:
        """Practice mode on or off: in practice, each answer's verdict and expected answer follow it."""
        self.practice = not self.practice
        self.query_one("#stop", SafeStatic).update(mode_words(self.practice, self.hard))

    def action_hard(self) -> None:
        """Hard mode on or off: numeric questions without their GPU and model figures, checked more loosely."""
        self.hard = not self.hard
        self.query_one("#stop", SafeStatic).update(mode_words(self.practice, self.hard))

    def action_cancel(self) -> None:
        self.dismiss(None)
