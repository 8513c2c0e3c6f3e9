"""The stats screen: readiness for the interview date when one is set, weak topics as a sortable table, then
the heatmap, forecast, retention, mocks, kernels and how well the forecast matched the learner's record."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer

from drill.study.calibration import Calibration
from drill.study.progress import ProgressReport
from drill.study.readiness import ReadinessFigures
from drill.study.standing import TopicFigures
from drill.ui.readiness_view import CalibrationChart, ReadinessChart
from drill.ui.screen_table import SafeDataTable
from drill.ui.screen_text import SafeStatic
from drill.ui.stats_widgets import (
    ForecastChart,
    HeatmapChart,
    KernelProgress,
    MockHistory,
    RetentionChart,
    percent,
    retention_style,
)
from drill.words import counted

if TYPE_CHECKING:
    from rich.console import JustifyMethod

TITLE_WIDTH = 20
NARROW = 90  # columns
CELL_PADDING = 1  # DataTable's blank cells either side of a column
# The screen's columns outside the table: the body's left padding and its scrollbar, and the table's own
# scrollbar once it holds more topics than it shows.
TABLE_MARGIN = 3


# What a column sorts by: a number, the topic's id, or None for a figure the topic does not have yet.
SortValue = float | str | None


@dataclass(frozen=True)
class Column:
    """A column of the weak-topics table: where its value comes from, how it reads and which way it sorts first."""

    key: str
    label: str
    value: Callable[[TopicFigures], SortValue]
    show: Callable[[TopicFigures], str]
    high_first: bool  # the first sort puts high values on top (weakness, lapses) or low ones (retention, ease)


def _title(text: str) -> str:
    return text if len(text) <= TITLE_WIDTH else text[: TITLE_WIDTH - 1] + "…"


def measured_weakness(topic: TopicFigures) -> float | None:
    """A topic's weakness, none until the topic is practised (until then its score is the prior)."""
    return topic.weakness if topic.practised else None


def two_places(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def whole_percent(value: float | None) -> str:
    """A figure already in percent as `63%`; `-` when missing."""
    return "-" if value is None else f"{value:.0f}%"


COLUMNS = (
    # the id that --topic, --weak and the browser take
    Column("topic", "topic", lambda t: t.topic, lambda t: _title(t.topic), False),
    Column("weakness", "weakness", measured_weakness, lambda t: two_places(measured_weakness(t)), True),
    Column("cards", "cards", lambda t: t.cards, lambda t: str(t.cards), True),
    Column("reviews", "reviews", lambda t: t.reviews, lambda t: str(t.reviews), True),
    Column("retention", "ret 30d", lambda t: t.retention, lambda t: percent(t.retention), False),
    Column("lapses", "lapses", lambda t: t.lapses, lambda t: str(t.lapses), True),
    Column("due_7d", "due 7d", lambda t: t.due_7d, lambda t: str(t.due_7d), True),
    Column("mean_ease", "ease", lambda t: t.mean_ease, lambda t: two_places(t.mean_ease), False),
    Column("last_mock", "mock", lambda t: t.last_mock, lambda t: percent(t.last_mock), False),
    Column(
        "kernel_best_pct_of_target",
        "kernel",
        lambda t: t.kernel_best_pct_of_target,
        lambda t: whole_percent(t.kernel_best_pct_of_target),
        False,
    ),
)
BY_KEY = {c.key: c for c in COLUMNS}
FIRST_SORT = "weakness"
# When the table is wider than the screen, columns are left out in this order, first to last. Counts go
# first (the header line totals them); the topic, its weakness and the three figures weakness is made of
# (retention, mock score, ease) always stay, as does the column the table is sorted by.
LEAVE_OUT_FIRST = ("reviews", "cards", "lapses", "due_7d", "kernel_best_pct_of_target")


def column_width(label: str, cells: Sequence[str]) -> int:
    """The cells a DataTable gives a column: its widest text, label or value, and the padding either side."""
    return max([cell_len(label), *(cell_len(c) for c in cells)]) + 2 * CELL_PADDING


def columns_that_fit(widths: Mapping[str, int], room: int, keep: str) -> tuple[list[str], list[str]]:
    """(shown, left out): the column keys, in table order, that fit in `room` cells once columns are left
    out in LEAVE_OUT_FIRST's order, never `keep`; and those left out, in the order they went."""
    shown = [key for key in widths]
    left_out: list[str] = []
    for key in LEAVE_OUT_FIRST:
        if sum(widths[k] for k in shown) <= room:
            break
        if key != keep and key in shown:
            shown.remove(key)
            left_out.append(key)
    return shown, left_out


def sort_topics(topics: Sequence[TopicFigures], key: str, reverse: bool = False) -> list[TopicFigures]:
    """Topics ordered by one column (its usual direction, or the other with `reverse`); missing values go last.

    Ties keep the weakest topic first, then topic id order. A topic not practised yet has no weakness: sorted
    by weakness, the table is the weakest-topics ranking of `drill stats` and `--weak`.
    """
    column = BY_KEY[key]
    base = sorted(topics, key=lambda t: (-t.weakness, t.topic))
    present = [t for t in base if column.value(t) is not None]
    missing = [t for t in base if column.value(t) is None]

    def value(t: TopicFigures) -> float | str:
        v = column.value(t)
        assert v is not None  # the topics without a value were set apart above
        return v.casefold() if isinstance(v, str) else v

    # sorted() is stable (reverse=True too), so equal values keep the weakest-first order either way
    return sorted(present, key=value, reverse=column.high_first != reverse) + missing


def direction_words(key: str, reverse: bool) -> str:
    column = BY_KEY[key]
    descending = column.high_first != reverse
    if key == "weakness":
        return "weakest first" if descending else "strongest first"
    if key == "topic":
        return "Z to A" if descending else "A to Z"
    return "highest first" if descending else "lowest first"


class StatsScreen(Screen[None]):
    """Where the learner stands: the report of drill.study.progress.build_report() as a table and charts."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="stats.close"),
        Binding("s", "next_sort", "Sort by next column", id="stats.sort"),
        Binding("r", "reverse_sort", "Reverse sort", id="stats.reverse"),
    ]
    AUTO_FOCUS = "#stbody"
    DEFAULT_CSS = """
    StatsScreen #sttop { height: 1; padding: 0 1; background: $boost; }
    StatsScreen #stbody { height: 1fr; padding: 0 0 0 1; overflow-x: auto; scrollbar-size-vertical: 1; }
    StatsScreen #stsort { height: auto; color: $text-muted; }
    StatsScreen #sttopics { height: auto; max-height: 12; margin-bottom: 1; scrollbar-size-vertical: 1; }
    StatsScreen HorizontalGroup { height: auto; margin-bottom: 1; }
    StatsScreen HeatmapChart { width: auto; margin-right: 4; }
    StatsScreen RetentionChart { width: auto; }
    StatsScreen ForecastChart { width: auto; margin-bottom: 1; }
    StatsScreen MockHistory { width: auto; margin-right: 4; }
    StatsScreen KernelProgress { width: 1fr; }
    StatsScreen ReadinessChart { width: 1fr; margin-bottom: 1; }
    StatsScreen CalibrationChart { width: 1fr; margin-top: 1; }
    StatsScreen.-narrow HorizontalGroup { layout: vertical; }
    StatsScreen.-narrow HeatmapChart, StatsScreen.-narrow MockHistory { margin: 0 0 1 0; }
    """

    def __init__(
        self,
        report: ProgressReport,
        titles: Mapping[str, str],
        readiness: ReadinessFigures | None = None,
        calibration: Calibration | None = None,
    ) -> None:
        """`readiness` None: no interview date is set."""
        super().__init__()
        self.report = report
        self.titles = titles
        self.readiness = readiness
        self.calibration = calibration
        self.topics = list(report.topics)
        self.sort_key = FIRST_SORT
        self.sort_reverse = False
        self.shown: list[Column] = list(COLUMNS)  # the columns that fit the screen's width
        self.left_out: list[str] = []  # the keys of the others, in the order they were left out
        self.filled_for_width = 0  # the screen width the table's columns were chosen for

    def compose(self) -> ComposeResult:
        report = self.report
        today = report.today
        yield SafeStatic(self.header_line(), id="sttop")
        with VerticalScroll(id="stbody"):
            if self.readiness is not None:  # the question that brought the learner here, when a date is set
                yield ReadinessChart(self.readiness, self.titles, today, id="stready")
            yield SafeStatic(id="stsort")
            yield SafeDataTable(id="sttopics", cursor_type="row", zebra_stripes=True)
            with HorizontalGroup():
                yield HeatmapChart(report.heatmap, today, id="stheat")
                yield RetentionChart(report.retention_trend, id="stretention")
            yield ForecastChart(report.forecast, id="stforecast")
            with HorizontalGroup():
                yield MockHistory(report.mock_history, report.mocks, id="stmocks")
                yield KernelProgress(report.kernels, report.kernels_untimed, id="stkernels")
            if self.calibration is not None:
                yield CalibrationChart(self.calibration, id="stcalibration")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.fill_table()

    def on_resize(self, event: events.Resize) -> None:
        # below this width the charts that sit side by side no longer fit: stack them
        self.set_class(event.size.width < NARROW, "-narrow")
        if event.size.width != self.filled_for_width:  # the columns that fit are chosen anew
            self.query_one("#sttop", SafeStatic).update(self.header_line())
            self.fill_table()

    def header_line(self) -> Text:
        r = self.report
        parts = [
            counted(r.cards, "card"),
            counted(r.reviews, "review"),
            f"{r.due_today} due today",
            f"{r.streak}-day streak",
            counted(r.mocks, "mock"),
        ]
        if r.leeches:
            parts.append(counted(len(r.leeches), "leech", "leeches"))
        if r.suspended:
            parts.append(f"{r.suspended} suspended")
        text = Text.assemble(("Stats", "bold"), " │ ", " · ".join(parts))
        day = f"   study day {r.today.isoformat()}"
        if text.cell_len + len(day) <= self.app.size.width - 2:  # else left out, not cut mid-word
            text.append(day, style="dim")
        return text

    # -- the table ---------------------------------------------------------------------------
    def fill_table(self) -> None:
        """Put the topics in the table in the chosen order, from the top, with the columns that fit the screen.

        While the table has focus the highlighted topic stays highlighted, wherever it moves.
        """
        table = self.query_one("#sttopics", SafeDataTable)
        keep = None
        if table.row_count and table.has_focus:
            keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        table.clear(columns=True)
        arrow = " ▼" if BY_KEY[self.sort_key].high_first != self.sort_reverse else " ▲"
        topics = sort_topics(self.topics, self.sort_key, self.sort_reverse)
        labels = {c.key: c.label + (arrow if c.key == self.sort_key else "") for c in COLUMNS}
        widths = {c.key: column_width(labels[c.key], [self.cell(c, t).plain for t in topics]) for c in COLUMNS}
        self.filled_for_width = self.app.size.width
        shown, self.left_out = columns_that_fit(widths, self.filled_for_width - TABLE_MARGIN, self.sort_key)
        self.shown = [BY_KEY[key] for key in shown]
        for column in self.shown:
            style = "bold" if column.key == self.sort_key else ""
            justify: JustifyMethod = "left" if column.key == "topic" else "right"
            label = Text(labels[column.key], style=style, justify=justify)
            table.add_column(label, key=column.key, width=widths[column.key] - 2 * CELL_PADDING)
        for topic in topics:
            table.add_row(*(self.cell(column, topic) for column in self.shown), key=topic.topic)
        if keep is not None:
            table.move_cursor(row=table.get_row_index(keep), animate=False)
        else:
            table.scroll_home(animate=False)
        self.query_one("#stsort", SafeStatic).update(self.sort_line())

    def sort_line(self) -> str:
        where = f"{BY_KEY[self.sort_key].label}, {direction_words(self.sort_key, self.sort_reverse)}"
        line = f"[b]Weak topics[/b] · sorted by {where} · [b]s[/b] next column · [b]r[/b] reverse"
        if not self.left_out:
            return line + " · or click a header"
        names = ", ".join(BY_KEY[key].label for key in self.left_out)
        return line + f"\n[dim]left out to fit this width: {names}[/dim]"

    @staticmethod
    def cell(column: Column, topic: TopicFigures) -> Text:
        if column.key == "topic":
            return Text(column.show(topic))
        style = ""
        if column.key == "retention" and topic.retention is not None:
            style = retention_style(topic.retention)
        elif column.key == "weakness":
            style = "bold"
        return Text(column.show(topic), style=style, justify="right")

    def sort_by(self, key: str, reverse: bool = False) -> None:
        self.sort_key = key
        self.sort_reverse = reverse
        self.fill_table()

    def action_next_sort(self) -> None:
        keys = [c.key for c in self.shown]  # a column left out to fit is not sorted by unseen
        self.sort_by(keys[(keys.index(self.sort_key) + 1) % len(keys)])

    def action_reverse_sort(self) -> None:
        self.sort_by(self.sort_key, not self.sort_reverse)

    def on_data_table_header_selected(self, message: DataTable.HeaderSelected) -> None:
        message.stop()
        key = str(message.column_key.value)
        self.sort_by(key, not self.sort_reverse if key == self.sort_key else False)

    def action_close(self) -> None:
        self.dismiss(None)
