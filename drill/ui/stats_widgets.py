"""The stats screen's charts: review heatmap, due forecast, retention trend, mock history and kernel progress."""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Mapping, Sequence

from rich.text import Text

from drill.mock.run import STATUS_WORDS
from drill.study.progress import MockLine
from drill.study.standing import PRIOR_RETENTION, DueDay, RetentionWeek
from drill.ui.screen_text import DrawnStatic

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
SHADES = "·░▒▓█"
EIGHTHS = " ▁▂▃▄▅▆▇█"
HEAT_WEEKS = 26
FAIR_RETENTION = 0.7  # a retention from here up to the weakness score's prior shows yellow, below it red
ENDING_WIDTH = max(len(word) for word in STATUS_WORDS.values())  # the mock table's "ending" column


# -- pure helpers ---------------------------------------------------------------------------
def retention_style(retention: float) -> str:
    """The colour a retention shows in: green from the retention the weakness score takes as its prior."""
    if retention >= PRIOR_RETENTION:
        return "green"
    if retention >= FAIR_RETENTION:
        return "yellow"
    return "red"


def heatmap_start(today: dt.date, weeks: int = HEAT_WEEKS) -> dt.date:
    """The Monday that opens the first column of a `weeks`-column heatmap ending with today's week."""
    return today - dt.timedelta(days=today.weekday(), weeks=weeks - 1)


def heat_thresholds(counts: Sequence[int]) -> list[float]:
    """The quartiles of the days with reviews: a day above the k-th one is at least level k + 2."""
    values = sorted(c for c in counts if c > 0)
    if not values:
        return []
    if len(values) == 1:
        return [float(values[0])] * 3
    return statistics.quantiles(values, n=4, method="inclusive")


def heat_level(count: int, thresholds: Sequence[float]) -> int:
    """0 for a day without reviews, else 1 to 4 by the quartile the day's count falls in."""
    if count <= 0:
        return 0
    return 1 + sum(count > q for q in thresholds)


def heatmap_cells(heatmap: Mapping[str, int], today: dt.date, weeks: int = HEAT_WEEKS) -> list[list[int]]:
    """Levels 0-4 on a grid of 7 rows (Monday to Sunday) by `weeks` columns, the last holding today.

    Levels are quartiles of the reviews a day over the days in the grid that have any;
    days after today are 0.
    """
    start = heatmap_start(today, weeks)
    counts = [[0] * weeks for _ in range(7)]
    for day, n in heatmap.items():
        try:
            date = dt.date.fromisoformat(day)
        except ValueError:
            continue
        offset = (date - start).days
        if 0 <= offset < weeks * 7 and date <= today:
            counts[offset % 7][offset // 7] += n
    thresholds = heat_thresholds([n for row in counts for n in row])
    return [[heat_level(n, thresholds) for n in row] for row in counts]


def level_ranges(thresholds: Sequence[float], top: int) -> list[tuple[int, int, int]]:
    """(level, lowest, highest) reviews a day for each level that some whole number reaches."""
    uppers = [int(q) for q in thresholds] + [top]
    out: list[tuple[int, int, int]] = []
    low = 1
    for level, high in enumerate(uppers, 1):
        if high >= low:
            out.append((level, low, high))
            low = high + 1
    return out


def bar_rows(values: Sequence[float | None], height: int, top: float, *, show_zero: bool = False) -> list[str]:
    """Vertical bars in eighth blocks, one character per value, `height` rows from the top row down.

    A value of `top` fills the column; a value above zero gets at least one eighth (zero too
    with `show_zero`); None leaves the column empty.
    """
    eighths = []
    for v in values:
        if v is None or top <= 0:
            eighths.append(0)
            continue
        e = round(min(v, top) / top * height * 8)
        eighths.append(max(e, 1) if v > 0 or show_zero else e)
    rows = []
    for r in range(height):
        floor = (height - 1 - r) * 8
        rows.append("".join(EIGHTHS[min(8, max(0, e - floor))] for e in eighths))
    return rows


def spark(values: Sequence[float], top: float) -> str:
    """A one-line sparkline: each value as a block from ▁ (nothing) to █ (`top` or more)."""
    if top <= 0:
        return ""
    return "".join(EIGHTHS[1 + min(7, max(0, round(v / top * 7)))] for v in values)


def percent(value: float | None) -> str:
    """A fraction as `72%`; `-` when missing."""
    return "-" if value is None else f"{value * 100:.0f}%"


def month_labels(start: dt.date, weeks: int = HEAT_WEEKS) -> str:
    """Month names over the heatmap column holding each month's first day (the first column's month too, if it fits)."""
    firsts = []
    for col in range(weeks):
        week = [start + dt.timedelta(days=col * 7 + i) for i in range(7)]
        first = next((day for day in week if day.day == 1), None)
        if first is not None:
            firsts.append((col, f"{first:%b}"))
    if not firsts or firsts[0][0] >= 4:
        firsts.insert(0, (0, f"{start:%b}"))
    line = [" "] * (weeks + 2)  # the last month's name may run past the grid
    free = 0
    for col, name in firsts:
        if col >= free:
            line[col : col + len(name)] = name
            free = col + len(name) + 1
    return "".join(line)


# -- widgets --------------------------------------------------------------------------------
class HeatmapChart(DrawnStatic):
    """Reviews a day over the last 26 weeks, a column per week and a row per weekday."""

    def __init__(self, heatmap: Mapping[str, int], today: dt.date, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.heatmap = dict(heatmap)
        self.today = today

    def draw(self) -> Text:
        start = heatmap_start(self.today)
        cells = heatmap_cells(self.heatmap, self.today)
        window = [n for d, n in self.heatmap.items() if start.isoformat() <= d <= self.today.isoformat()]
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"Reviews a day, last {HEAT_WEEKS} weeks", style="bold")
        text.append(f" · {sum(window)} on {len([n for n in window if n])} days\n")
        text.append("    " + month_labels(start) + "\n")
        for row, name in enumerate(WEEKDAYS):
            text.append(f"{name} ", style="dim")
            for col, level in enumerate(cells[row]):
                day = start + dt.timedelta(days=col * 7 + row)
                if day > self.today:
                    text.append(" ")
                else:
                    style = "dim" if level == 0 else "green"
                    text.append(SHADES[level], style=f"{style} underline" if day == self.today else style)
            text.append("\n")
        text.append("    " + SHADES[0] + " none", style="dim")
        thresholds = heat_thresholds(window)
        for level, low, high in level_ranges(thresholds, max(window, default=0)):
            text.append("  ")
            text.append(SHADES[level], style="green")
            text.append(f" {low}" if low == high else f" {low}-{high}", style="dim")
        return text


class ForecastChart(DrawnStatic):
    """Cards due on each of the next 30 days as bars, with the date under every seventh."""

    HEIGHT = 6

    def __init__(self, forecast: Sequence[DueDay], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.forecast = list(forecast)

    def draw(self) -> Text:
        dues = [int(d["due"]) for d in self.forecast]
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"Due in the next {len(dues)} days", style="bold")
        if not any(dues):
            text.append(" · nothing scheduled yet")
            return text
        top = max(dues)
        peak = self.forecast[dues.index(top)]["date"]
        text.append(f" · {sum(dues)} in all, at most {top} on {dt.date.fromisoformat(peak):%a %d %b}\n")
        width = len(str(top))
        for r, row in enumerate(bar_rows(dues, self.HEIGHT, top)):
            label = str(top) if r == 0 else ""
            text.append(f"{label:>{width}} {'┤' if r == 0 else '│'}", style="dim")
            text.append(" ".join(row), style="cyan")
            text.append("\n")
        text.append(f"{0:>{width}} └" + "─" * (2 * len(dues) - 1) + "\n", style="dim")
        days = [" "] * (2 * len(dues))
        for i in range(0, len(dues), 7):
            day = dt.date.fromisoformat(self.forecast[i]["date"])
            label = "today" if i == 0 else f"{day.day} {day:%b}"  # a date: a bare 7 or 14 read as days from now
            days[2 * i : 2 * i + len(label)] = label
        text.append(" " * (width + 2) + "".join(days).rstrip(), style="dim")
        return text


class RetentionChart(DrawnStatic):
    """Share of reviews passed (grade 3 or more) in each of the last 12 weeks; weeks without reviews are gaps."""

    HEIGHT = 6

    def __init__(self, trend: Sequence[RetentionWeek], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trend = list(trend)

    def draw(self) -> Text:
        values: list[float | None] = [w["retention"] for w in self.trend]
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"Retention, {len(values)} weeks", style="bold")
        seen = [v for v in values if v is not None]
        if not seen:
            text.append(" · no reviews yet")
            return text
        text.append(f" · latest {percent(seen[-1])}\n")
        # retention mostly moves between 70 and 100 %: start the axis at 50 % unless a week fell lower
        low = min(0.5, math.floor(min(seen) * 10) / 10)
        shifted = [None if v is None else v - low for v in values]
        rows = bar_rows(shifted, self.HEIGHT, 1.0 - low, show_zero=True)
        for r, row in enumerate(rows):
            label = "100%" if r == 0 else ""
            text.append(f"{label:>4} {'┤' if r == 0 else '│'}", style="dim")
            for i, (v, ch) in enumerate(zip(values, row)):
                gap = v is None and r == len(rows) - 1
                style = "dim" if v is None else retention_style(v)
                text.append(" " if i else "")
                text.append(("·" if gap else ch) * 2, style=style)
            text.append("\n")
        text.append(f"{percent(low):>4} └" + "─" * (3 * len(values) - 1) + "\n", style="dim")
        first = dt.date.fromisoformat(self.trend[0]["week_start"])
        text.append(f"      {first:%d %b}".ljust(6 + 3 * len(values) - 10) + "this week", style="dim")
        return text


class MockHistory(DrawnStatic):
    """The newest mock interviews: when, how long, how they ended and their score."""

    SHOWN = 8

    def __init__(self, history: Sequence[MockLine] | None, count: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = list(history or ())
        self.count = count

    def draw(self) -> Text:
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"Mock interviews ({self.count})", style="bold")
        if not self.history:
            if self.count:
                text.append(f"\n{self.count} taken; the list is not in this report.")
            else:
                text.append("\nNone yet: ctrl+o on the review screen starts one.", style="dim")
            return text
        text.append("\n" + f"{'#':>4}  {'date':<16} {'min':>3}  {'ending':<{ENDING_WIDTH}} {'score':>5}", style="dim")
        for mock in self.history[: self.SHOWN]:
            when = mock.started_at[:16].replace("T", " ")
            ending = STATUS_WORDS.get(mock.status, mock.status.replace("_", " "))
            text.append(f"\n{mock.id:>4}  {when:<16} {mock.minutes or '-':>3}  {ending:<{ENDING_WIDTH}} ")
            text.append(f"{percent(mock.score):>5}", style="bold")
        if len(self.history) > self.SHOWN:
            text.append(f"\n      and {len(self.history) - self.SHOWN} older", style="dim")
        return text


class KernelProgress(DrawnStatic):
    """Each kernel card's attempts as a percentage of its ceiling (copy bandwidth, or the matmul rate for compute-bound cards): count, best, last and a sparkline."""

    SHOWN_ATTEMPTS = 12

    def __init__(
        self,
        kernels: Mapping[str, Sequence[float]],
        untimed: Mapping[str, int] | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.kernels = {cid: list(pcts) for cid, pcts in kernels.items() if pcts}
        self.untimed = {cid: n for cid, n in (untimed or {}).items() if n}  # runs with no figure

    def draw(self) -> Text:
        text = Text(no_wrap=True, overflow="crop")
        text.append("Kernels, % of the ceiling (copy or matmul)", style="bold")
        if not self.kernels and not self.untimed:
            text.append("\nNo kernel run yet.", style="dim")
            return text
        text.append("\n" + f"{'card':<14} {'runs':>4} {'best':>5} {'last':>5}  attempts", style="dim")
        for cid in sorted({*self.kernels, *self.untimed}):
            name = cid if len(cid) <= 14 else cid[:13] + "…"
            pcts = self.kernels.get(cid, [])
            text.append(f"\n{name:<14} {len(pcts) + self.untimed.get(cid, 0):>4} ")
            if not pcts:
                text.append("    -     -  none timed (no GPU, or not correct yet)", style="dim")
                continue
            text.append(f"{max(pcts):>4.0f}%", style="bold")
            text.append(f" {pcts[-1]:>4.0f}%  ")
            text.append(spark(pcts[-self.SHOWN_ATTEMPTS :], max(100.0, *pcts)), style="magenta")
        return text
