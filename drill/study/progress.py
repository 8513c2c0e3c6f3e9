"""The progress report: counts, due cards, retention and weak topics, as a record (the stats screen), JSON
(`drill stats --json`) or a text report.

Pure: drill.workspace reads the saved settings and the progress rows and hands them here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from drill.study.records import CardFacts, ProgressRows
from drill.study.scheduling import saved_scheduler
from drill.study.session import DEFAULT_NEW_ORDER, DEFAULT_NEW_PER_DAY, DEFAULT_ROLLOVER_HOUR, NEW_ORDERS
from drill.study.standing import (
    RANKING_RULE,
    DueDay,
    RetentionWeek,
    TopicFigures,
    forecast,
    heatmap,
    queue_counts,
    retention_trend,
    streak,
    topic_figures,
    weakest,
)

# readiness and calibration are typed here only: a report without an interview date imports no planner
if TYPE_CHECKING:
    from drill.study.calibration import CalibrationFigures
    from drill.study.readiness import ReadinessFigures


@dataclass(frozen=True)
class MockLine:
    """A finished or stopped mock as the stats list it, newest first."""

    id: int
    started_at: str
    status: str
    score: float | None
    minutes: int


@dataclass(frozen=True)
class ProgressReport:
    """Where the learner stands on one study day: what `drill stats` prints and the stats screen shows."""

    cards: int
    reviews: int
    today: dt.date
    day_starts_at: int  # the hour the study day rolls over at
    due_today: int
    new_today: int  # the new cards today's queue takes
    new_done_today: int
    new_per_day: int
    new_order: str
    scheduler: str
    new_available: int  # cards never introduced
    suspended: int
    buried: int
    leeches: list[str]
    topics: list[TopicFigures]  # by topic id
    weak_topics: list[str]  # the first few of the weakest-topics ranking, as `--weak` practises them
    weakest_first: list[str]  # every topic in the weakest-topics ranking
    ranking_rule: str
    forecast: list[DueDay]  # the next 30 days
    forecast_7d: dict[str, int]  # the days of the next seven with cards due, by ISO date
    heatmap: dict[str, int]  # reviews a day, by ISO date
    retention_trend: list[RetentionWeek]
    streak: int
    mocks: int
    mock_history: list[MockLine]  # the newest 20
    kernels: dict[str, list[float]]  # each kernel card's timed runs, % of its ceiling, oldest first
    kernels_untimed: dict[str, int]  # each kernel card's runs with no figure

    def as_json(self) -> dict[str, object]:
        """The report as `drill stats --json` prints it."""
        data = asdict(self)
        data["today"] = self.today.isoformat()
        return data


@dataclass(frozen=True)
class StatsFigures:
    """What `drill stats` prints and the stats screen shows, read in one pass: the progress report, readiness for
    the interview date (None without a date, or once it has passed) and the calibration."""

    report: ProgressReport
    readiness: ReadinessFigures | None
    calibration: CalibrationFigures

    def as_json(self) -> dict[str, object]:
        """What `drill stats --json` prints: the report, with "readiness" and "calibration" beside its figures."""
        data = self.report.as_json()
        data["readiness"] = self.readiness.as_json() if self.readiness is not None else None
        data["calibration"] = self.calibration.as_json()
        return data


# how many of the weakest topics `drill stats` names (as `drill --weak` practises by default)
WEAK_TOPICS_SHOWN = 3

_REPORT = """\
drill: {{ cards }} card{{ "s" if cards != 1 }}, {{ reviews }} review{{ "s" if reviews != 1 }} logged{% if streak %}, a {{ streak }}-day streak{% endif %}{% if mocks %}, {{ mocks }} mock{{ "s" if mocks != 1 }}{% endif %}

study day {{ today }} (rolls over at {{ "%02d"|format(day_starts_at) }}:00)
due today: {{ due_today }}, plus {{ new_today }} new ({{ new_available }} not yet seen; new cards in {{ new_order }} order)
{% if suspended or buried %}set aside: {{ suspended }} suspended, {{ buried }} buried until tomorrow
{% endif %}
{% if forecast_text %}next 7 days: {{ forecast_text }}
{% endif %}
{{ "%-22s %5s %7s %9s %6s %6s %8s"|format("topic", "cards", "reviews", "ret. 30d", "lapses", "due 7d", "weakness") }}
{% for t in topics %}{{ "%-22s %5d %7d %9s %6d %6d %8s"|format(t.topic, t.cards, t.reviews, t.retention_text, t.lapses, t.due_7d, t.weakness_text) }}
{% endfor %}
{% if weak_practised %}weakest: {{ weak_practised|join(", ") }}{% if weak_new %}; then, not practised yet: {{ weak_new|join(", ") }}{% endif %}{% else %}weakest: no topic practised yet{% if weak_new %} (--weak starts with {{ weak_new|join(", ") }}){% endif %}{% endif %}

ranking: {{ ranking_rule }} (weakness -)

"""


def build_report(
    cards: Mapping[str, CardFacts],
    saved: Mapping[str, str],
    today: dt.date,
    rows: ProgressRows,
    titles: Mapping[str, str],
    *,
    rollover_hour: int | None = None,
    new_per_day: int | None = None,
    new_order: str | None = None,
) -> ProgressReport:
    """The progress report of study day `today`. Settings left as None are those the review app `saved`."""
    if rollover_hour is None:
        rollover_hour = saved_rollover_hour(saved)
    if new_per_day is None:
        new_per_day = saved_whole_number(saved, "new_per_day", DEFAULT_NEW_PER_DAY, 0, None)
    if new_order is None:
        new_order = saved_new_order(saved)
    counts = queue_counts(cards, rows, today)
    figures = topic_figures(cards, rows, today, titles)
    topics = sorted(figures, key=lambda t: t.topic)
    days30 = forecast(rows, today, 30, card_ids=cards)
    week = {d["date"]: d["due"] for d in days30[1:8] if d["due"]}
    return ProgressReport(
        cards=len(cards),
        reviews=rows.total_reviews,
        today=today,
        day_starts_at=rollover_hour,
        due_today=counts["due_today"],
        new_today=min(max(0, new_per_day - counts["new_done_today"]), counts["new_available"]),
        new_done_today=counts["new_done_today"],
        new_per_day=new_per_day,
        new_order=new_order,
        scheduler=saved_scheduler(saved),
        new_available=counts["new_available"],
        suspended=counts["suspended"],
        buried=counts["buried"],
        leeches=counts["leeches"],
        topics=topics,
        weak_topics=weakest(figures, WEAK_TOPICS_SHOWN),
        weakest_first=[t.topic for t in figures],
        ranking_rule=RANKING_RULE,
        forecast=days30,
        forecast_7d=week,
        heatmap=heatmap(rows),
        retention_trend=retention_trend(rows, today),
        streak=streak(rows, today),
        mocks=len(rows.mocks),
        mock_history=[
            MockLine(id=i, started_at=at, status=status, score=score, minutes=minutes)
            for i, at, status, score, minutes in rows.mocks[:20]
        ],
        kernels={cid: pcts for cid, pcts in sorted(rows.kernel_pcts.items()) if cid in cards},
        kernels_untimed={cid: n for cid, n in sorted(rows.kernel_untimed.items()) if cid in cards},
    )


def saved_rollover_hour(saved: Mapping[str, str]) -> int:
    """The hour the study day rolls over at, as the review app saved it (the default when unset or out of range)."""
    return saved_whole_number(saved, "day_starts_at", DEFAULT_ROLLOVER_HOUR, 0, 23)


def saved_new_order(saved: Mapping[str, str]) -> str:
    """The new-card order the review app saved, or the default when none (or an unknown one) is saved."""
    order = saved.get("new_order") or DEFAULT_NEW_ORDER
    if order in NEW_ORDERS:
        return order
    return DEFAULT_NEW_ORDER


def saved_whole_number(saved: Mapping[str, str], key: str, default: int, low: int, high: int | None) -> int:
    """A saved whole-number setting, or `default` when it is missing or out of range."""
    try:
        value = int(saved.get(key) or default)
    except ValueError:
        return default
    if value < low:
        return default
    if high is not None and value > high:
        return default
    return value


def render_text(report: ProgressReport) -> str:
    """The report as `drill stats` prints it: the counts, the topics in the weakest-topics ranking and the weakest."""
    from jinja2 import Environment

    place = {topic: i for i, topic in enumerate(report.weakest_first)}
    ranked = sorted(report.topics, key=lambda t: place[t.topic])
    topics = [
        {
            **asdict(t),
            "retention_text": "-" if t.retention is None else f"{t.retention:.0%}",
            "weakness_text": f"{t.weakness:.2f}" if t.practised else "-",
        }
        for t in ranked
    ]
    practised = {t.topic for t in ranked if t.practised}
    env = Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    forecast_text = " ".join(f"{day[5:]}:{n}" for day, n in report.forecast_7d.items())
    shown = {
        **report.as_json(),
        "topics": topics,
        "forecast_text": forecast_text,
        "weak_practised": [t for t in report.weak_topics if t in practised],
        "weak_new": [t for t in report.weak_topics if t not in practised],
    }
    return env.from_string(_REPORT).render(shown).rstrip()
