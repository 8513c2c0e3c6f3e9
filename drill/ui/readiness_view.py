"""Readiness for the interview date and the forecast's calibration, as the stats screen draws them.

Both widgets take the domain's records (drill.study.readiness.ReadinessFigures,
drill.study.calibration.Calibration): the workspace builds them, the screen only draws. Bars are text, like
the other stats charts.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Mapping, Sequence

from rich.text import Text
from textual import events

from drill.study.calibration import Calibration
from drill.study.plan import PlanDay, StudyPlan
from drill.study.readiness import Interview, ReadinessFigures, TopicLine, days_left_words
from drill.ui.screen_text import DrawnStatic
from drill.ui.stats_widgets import percent, spark
from drill.words import counted

NAME_WIDTH = 18  # a topic's title before its figures
FIGURES_WIDTH = len("100% → 100%")
MIN_BAR = 12
MAX_BAR = 50
NOW_BLOCK = "█"  # recall on the date if the learner stops now
PLAN_BLOCK = "▒"  # what the plan adds to it
EMPTY_BLOCK = "·"
TARGET_MARK = "│"
BLOCK_STYLES = {NOW_BLOCK: "cyan", PLAN_BLOCK: "blue", EMPTY_BLOCK: "dim", TARGET_MARK: "bold"}
CALIBRATION_HEADER = f"{'predicted':>9} {'passed':>6} {'reviews':>7}  "
# Predictions checked against fewer reviews than this say too little to judge the model by: ten bins
# want about ten reviews each before a bin's pass rate means something.
ENOUGH_REVIEWS = 100


# -- pure helpers ---------------------------------------------------------------------------
def short_date(day: dt.date) -> str:
    """`Tue 15 Dec`: a date as a learner reads a calendar."""
    return f"{day:%a} {day.day} {day:%b}"


def readiness_bar(now: float, planned: float, target: float, width: int) -> str:
    """A bar `width` cells wide: recall if you stop now, then what the plan adds, then empty; the target marked.

    The plan never takes a cell from `now`: a plan whose figure is lower shows as `now` alone.
    """
    now_cells = _cells(now, width)
    plan_cells = max(now_cells, _cells(planned, width))
    cells = [NOW_BLOCK] * now_cells + [PLAN_BLOCK] * (plan_cells - now_cells) + [EMPTY_BLOCK] * (width - plan_cells)
    mark = min(width - 1, _cells(target, width))
    cells[mark] = TARGET_MARK
    return "".join(cells)


def calibration_bar(predicted: float, actual: float, width: int) -> str:
    """A bar `width` cells wide filled to the pass rate, the prediction marked: a calibrated bin ends at its mark."""
    filled = _cells(actual, width)
    cells = [NOW_BLOCK] * filled + [EMPTY_BLOCK] * (width - filled)
    cells[min(width - 1, _cells(predicted, width))] = TARGET_MARK
    return "".join(cells)


def by_gap(topics: Sequence[TopicLine], target: float) -> list[TopicLine]:
    """Topics furthest from the target today first (ties in the order given)."""
    return sorted(topics, key=lambda topic: -topic.gap(target))


def next_mock(mocks: Sequence[dt.date], today: dt.date) -> dt.date | None:
    """The first suggested mock day from today on, or None."""
    return next((day for day in sorted(mocks) if day >= today), None)


def today_line(day: PlanDay, minutes_per_day: int) -> str:
    """Today's share of the plan in words: new cards, reviews (early ones said) and minutes."""
    new = len(day.new_cards)
    reviews = round(day.reviews)
    parts = [counted(new, "new card"), counted(reviews, "review")]
    early = round(day.early_reviews)
    if early:
        parts[-1] += f" ({early} early)"
    minutes = round(day.minutes)
    if not minutes and not new and not reviews:
        return "Today: nothing new and nothing due"
    work = " and ".join(parts)
    if minutes > minutes_per_day:
        return f"Today: {work}, about {minutes} minutes, more than your {minutes_per_day}"
    spent = f"about {minutes}" if minutes else "under a minute"  # the figures come in whole minutes
    return f"Today: {work}, {spent} of your {minutes_per_day} minutes"


def reach_line(plan: StudyPlan | None, interview: Interview) -> str:
    """What the minutes given reach on the date and what the target needs, with the forecast's interval; '' without."""
    if plan is None:
        return ""
    forecast = plan.forecast
    what = f"the {interview.track} track" if interview.track else "the cards"
    line = (
        f"{interview.minutes_per_day} min/day: {percent(forecast.ready_share)} of {what} ready by "
        f"{short_date(interview.date)}"
    )
    if plan.minutes_needed and plan.needed_reaches is not None:
        line += f"; {percent(plan.needed_reaches)} needs about {plan.minutes_needed} min/day"
    return (
        f"{line}. Mean recall on the day {percent(forecast.mean)}, likely "
        f"{percent(forecast.low)}–{percent(forecast.high)}"
    )


def mock_line(plan: StudyPlan, today: dt.date) -> str:
    """When the plan suggests the next mock interview, or '' when none is left."""
    mock = next_mock(plan.mocks, today)
    if (plan.days and plan.days[0].mock) or mock == today:
        return "A mock interview today (ctrl+o on the review screen)"
    if mock is None:
        return ""
    return f"Next mock interview: {short_date(mock)}"


def what_would_fit(plan: StudyPlan, title: Callable[[str], str]) -> str:
    """When the plan cannot fit: what would (more minutes a day, or topics left out), as a sentence; else ''."""
    options = []
    if plan.minutes_needed:
        options.append(f"{plan.minutes_needed} minutes a day")
    leave_out = [title(cut.topic) for cut in plan.leave_out]
    if leave_out:
        options.append(f"leaving out {', '.join(leave_out)}")
    if not options:
        return ""
    return f"It would fit with {' or '.join(options)}."


def calibration_rows(calibration: Calibration) -> list[tuple[float, float, int]]:
    """(predicted, actual, reviews) of each bin that holds reviews, lowest prediction first."""
    rows = []
    for row in calibration.bins:
        if row.predicted is None or row.actual is None or not row.reviews:
            continue
        rows.append((row.predicted, row.actual, row.reviews))
    return sorted(rows)


def append_bar(text: Text, bar: str) -> None:
    """`bar` onto `text`, each run of one block in that block's colour."""
    for block, run in itertools.groupby(bar):
        text.append("".join(run), style=BLOCK_STYLES[block])


def _cells(fraction: float, width: int) -> int:
    return max(0, min(width, round(fraction * width)))


def _name(title: str) -> str:
    return title if len(title) <= NAME_WIDTH else title[: NAME_WIDTH - 1] + "…"


def _bar_width(room: int) -> int:
    """The bar's cells in a line `room` cells wide, beside a name and the figures."""
    return max(MIN_BAR, min(MAX_BAR, room - NAME_WIDTH - FIGURES_WIDTH - 4))


# -- widgets --------------------------------------------------------------------------------
class ResizingChart(DrawnStatic):
    """A chart whose bars take the width it is given: drawn again when that changes."""

    def on_resize(self, _event: events.Resize) -> None:
        self.refresh()


class ReadinessChart(ResizingChart):
    """Recall on the interview date: overall and per topic (furthest from the target first), if you stop now and
    if you follow the plan, with today's share of the plan and what would fit when it does not."""

    def __init__(
        self, readiness: ReadinessFigures, titles: Mapping[str, str], today: dt.date, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.readiness = readiness
        self.titles = titles
        self.today = today

    def draw(self) -> Text:
        r = self.readiness
        interview = r.interview
        target = interview.target
        width = _bar_width(self.size.width)
        text = Text()  # the bars are drawn to fit; a sentence longer than the screen wraps
        text.append(f"Interview {short_date(interview.date)}", style="bold")
        track = f" · {interview.track} track" if interview.track else " · every topic"
        text.append(f" · {days_left_words(r.days_left)}{track} · recall on the day\n")
        legend = f"{NOW_BLOCK} stop now  {PLAN_BLOCK} with the plan  {TARGET_MARK} {percent(target)} target"
        text.append(f"{'':<{NAME_WIDTH}}  {'now':>4} → {'plan':>4}  {legend}\n", style="dim")
        self._row(text, "overall", r.now.overall, r.with_plan, target, width, "bold")
        for topic in by_gap(r.topics(), target):
            self._row(text, self.title(topic.topic), topic.stop_now, topic.with_plan, target, width, "")
        if r.plan is not None:
            reach = reach_line(r.plan, interview)
            if reach:
                text.append(reach + "\n")
            text.append(self.plan_lines(r.plan, interview.minutes_per_day))
        week = r.week
        text.append("\n" + week.line(), style="yellow" if week.outside else "dim")
        return text

    def title(self, topic: str) -> str:
        """A topic's title: the topic list's, else the one the figures carry, else its id."""
        return self.titles.get(topic) or self.readiness.titles.get(topic) or topic

    @staticmethod
    def _row(text: Text, title: str, now: float, planned: float, target: float, width: int, style: str) -> None:
        text.append(f"{_name(title):<{NAME_WIDTH}}  ", style=style)
        text.append(f"{percent(now):>4} → ")
        text.append(f"{percent(planned):>4}", style="bold")
        text.append("  ")
        append_bar(text, readiness_bar(now, planned, target, width))
        text.append("\n")

    def plan_lines(self, plan: StudyPlan, minutes_per_day: int) -> Text:
        lines = []
        if plan.days:
            lines.append(Text(today_line(plan.days[0], minutes_per_day)))
        mock = mock_line(plan, self.today)
        if mock:
            lines.append(Text(mock))
        minutes = [float(round(day.minutes)) for day in plan.days] or [0.0]  # in the planner's whole minutes
        if max(minutes) > 0:
            # a plan that cannot fit names its busiest day below, in the planner's own rounding
            peak = f", at most {round(max(minutes))}" if plan.fits else ""
            line = Text(f"Minutes a day to the interview{peak}: ", style="dim")
            room = max(MIN_BAR, self.size.width - line.cell_len)
            shown = spark(minutes[:room], max(minutes))
            line.append(shown if len(minutes) <= room else shown[:-1] + "…", style="cyan")
            lines.append(line)
        if not plan.fits:
            why = "; ".join(plan.reasons) or "it does not reach the target in the minutes given"
            lines.append(Text(f"The plan cannot fit: {why}.", style="yellow"))
            fix = what_would_fit(plan, self.title)
            if fix:
                lines.append(Text(fix, style="yellow"))
        return Text("\n").join(lines)


class CalibrationChart(ResizingChart):
    """Predicted recall against what happened over the learner's record: per bin, with log loss and RMSE(bins)."""

    def __init__(self, calibration: Calibration, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.calibration = calibration

    def draw(self) -> Text:
        c = self.calibration
        reviews = c.reviews
        text = Text()  # the bars are drawn to fit; a sentence longer than the screen wraps
        text.append("How the forecast matched your record", style="bold")
        if reviews < ENOUGH_REVIEWS:
            text.append(f" · needs more reviews: {reviews} of the {ENOUGH_REVIEWS} that make a fair check")
            return text
        text.append(f" · {counted(reviews, 'review')}")
        figures = []
        if c.log_loss is not None:
            figures.append(f"log loss {c.log_loss:.2f}")
        if c.rmse_bins is not None:
            figures.append(f"RMSE(bins) {c.rmse_bins:.3f}")
        if figures:
            text.append("\n" + " · ".join(figures))
            text.append(" (lower is better)", style="dim")
        width = max(MIN_BAR, min(MAX_BAR, self.size.width - len(CALIBRATION_HEADER)))
        text.append("\n" + CALIBRATION_HEADER + f"{NOW_BLOCK} passed  {TARGET_MARK} predicted", style="dim")
        for predicted, actual, count in calibration_rows(c):
            text.append(f"\n{percent(predicted):>9} {percent(actual):>6} {count:>7}  ")
            append_bar(text, calibration_bar(predicted, actual, width))
        return text
