"""Chart geometry for the mock report's inline SVG: bars, ticks and labels computed in Python."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Chart layout, in SVG user units (the SVG scales to the page width).
CHART_WIDTH = 720.0
LABEL_RIGHT = 204.0  # labels are right-aligned here
PLOT_LEFT = 214.0
PLOT_WIDTH = 400.0
ROW_HEIGHT = 26.0
BAR_HEIGHT = 16.0
TOP = 10.0
AXIS_HEIGHT = 26.0
LABEL_CHARS = 26
TIME_STEPS = (15, 30, 60, 120, 300, 600, 900, 1800, 3600)


@dataclass(frozen=True)
class Bar:
    """One row of a horizontal bar chart; every coordinate is worked out here, not in the template."""

    label: str  # shortened to fit the label column
    title: str  # the full text, shown as a tooltip
    x: float
    y: float
    width: float
    height: float
    label_y: float  # baseline of the row's text
    value_x: float
    value_text: str
    css_class: str
    value_class: str = "value"
    outline: str = ""  # SVG path of the budget outline; empty when there is none


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: float
    height: float
    label_x: float
    plot_top: float
    plot_bottom: float
    tick_label_y: float
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]


def clock(seconds: float) -> str:
    """Seconds as m:ss (minutes keep counting past an hour)."""
    whole = max(0, round(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def percent(score: float) -> str:
    return f"{score:.0%}"


def _shorten(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def as_number(value: object) -> float:
    """A stored figure as a finite number; 0 for anything else."""
    if not isinstance(value, (int, float, str)):
        return 0.0
    try:
        result = float(value)
    except (TypeError, ValueError):
        return 0.0
    return result if math.isfinite(result) else 0.0


def _r(value: float) -> float:
    return round(value, 1)


def _row_y(index: int) -> tuple[float, float]:
    """Top of the bar and baseline of the text for row `index`."""
    top = TOP + index * ROW_HEIGHT + (ROW_HEIGHT - BAR_HEIGHT) / 2
    return _r(top), _r(top + BAR_HEIGHT / 2 + 4)


def _frame(rows: int) -> tuple[float, float, float]:
    plot_bottom = TOP + rows * ROW_HEIGHT
    return _r(plot_bottom), _r(plot_bottom + AXIS_HEIGHT), _r(plot_bottom + 16)


def topic_chart(topics: Sequence[Mapping[str, object]]) -> Chart:
    """Score per topic as horizontal bars on a 0-100 % scale."""
    bars = []
    for i, topic in enumerate(topics):
        score = min(1.0, max(0.0, as_number(topic.get("score"))))
        title = str(topic.get("title") or topic.get("topic") or "")
        width = _r(PLOT_WIDTH * score)
        y, label_y = _row_y(i)
        bars.append(
            Bar(
                label=_shorten(title),
                title=f"{title}: {percent(score)} over {topic.get('questions', 0)} question"
                + ("" if topic.get("questions", 0) == 1 else "s"),
                x=PLOT_LEFT,
                y=y,
                width=width,
                height=BAR_HEIGHT,
                label_y=label_y,
                value_x=_r(PLOT_LEFT + width + 6),
                value_text=percent(score),
                css_class="bar",
            )
        )
    ticks = tuple(Tick(_r(PLOT_LEFT + PLOT_WIDTH * p / 100), f"{p}%") for p in (0, 25, 50, 75, 100))
    plot_bottom, height, tick_label_y = _frame(len(bars))
    return Chart(CHART_WIDTH, height, LABEL_RIGHT, TOP, plot_bottom, tick_label_y, tuple(bars), ticks)


def _time_scale(longest: float) -> tuple[float, int]:
    """The axis maximum and the tick step, in seconds, for a longest bar of `longest` seconds."""
    step = next((s for s in TIME_STEPS if longest / s <= 6), TIME_STEPS[-1])
    return max(step, math.ceil(longest / step) * step), step


def time_chart(questions: Sequence[Mapping[str, object]]) -> Chart:
    """Time spent on each question as a bar inside a dashed outline of its budget."""
    longest = max((max(as_number(q.get("budget_s")), as_number(q.get("spent_s"))) for q in questions), default=0.0)
    scale, step = _time_scale(max(longest, 60.0))
    bars = []
    for i, q in enumerate(questions):
        budget = max(0.0, as_number(q.get("budget_s")))
        spent = max(0.0, as_number(q.get("spent_s")))
        over = round(spent) > round(budget)
        width = _r(PLOT_WIDTH * spent / scale)
        budget_x = _r(PLOT_LEFT + PLOT_WIDTH * budget / scale)
        y, label_y = _row_y(i)
        bottom = _r(y + BAR_HEIGHT)
        title = str(q.get("title") or q.get("topic") or "")
        position = q.get("position", i + 1)
        status = str(q.get("status") or "")
        bars.append(
            Bar(
                label=_shorten(f"Q{position} · {title}"),
                title=f"Question {position}, {title}: {clock(spent)} spent of {clock(budget)} ({status})",
                x=PLOT_LEFT,
                y=y,
                width=width,
                height=BAR_HEIGHT,
                label_y=label_y,
                value_x=_r(max(PLOT_LEFT + width, budget_x) + 6),
                value_text=f"{clock(spent)} / {clock(budget)}",
                css_class="bar over" if over else "bar",
                value_class="value over" if over else "value",
                outline=f"M{PLOT_LEFT} {y}H{budget_x}V{bottom}H{PLOT_LEFT}Z",
            )
        )
    ticks = tuple(Tick(_r(PLOT_LEFT + PLOT_WIDTH * s / scale), clock(s)) for s in range(0, int(scale) + 1, step))
    plot_bottom, height, tick_label_y = _frame(len(bars))
    return Chart(CHART_WIDTH, height, LABEL_RIGHT, TOP, plot_bottom, tick_label_y, tuple(bars), ticks)


# ---------------------------------------------------------------------------
# Text filters
# ---------------------------------------------------------------------------
