"""Progress figures: counts, due cards, retention and weak topics, as JSON or a text report."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from drill.cards.model import Card

if TYPE_CHECKING:
    from drill.store.progress import ProgressRows
from drill.scheduling import saved_scheduler
from drill.session import (
    DEFAULT_NEW_ORDER,
    DEFAULT_NEW_PER_DAY,
    DEFAULT_ROLLOVER_HOUR,
    NEW_ORDERS,
    study_day,
)

_REPORT = """\
drill: {{ cards }} cards, {{ reviews }} reviews logged{% if streak %}, a {{ streak }}-day streak{% endif %}{% if mocks %}, {{ mocks }} mock{{ "s" if mocks != 1 }}{% endif %}

study day {{ today }} (rolls over at {{ "%02d"|format(day_starts_at) }}:00)
due today: {{ due_today }}, plus {{ new_today }} new ({{ new_available }} not yet seen; new cards in {{ new_order }} order)
{% if suspended or buried %}set aside: {{ suspended }} suspended, {{ buried }} buried until tomorrow
{% endif %}
{% if forecast_text %}next 7 days: {{ forecast_text }}
{% endif %}
{{ "%-22s %5s %7s %9s %6s %6s %8s"|format("topic", "cards", "reviews", "ret. 30d", "lapses", "due 7d", "weakness") }}
{% for t in topics %}{{ "%-22s %5d %7d %9s %6d %6d %8.2f"|format(t.topic, t.cards, t.reviews, t.retention_text, t.lapses, t.due_7d, t.weakness) }}
{% endfor %}
{% if weak_topics %}weakest: {{ weak_topics|join(", ") }}{% else %}weakest: not enough reviews yet{% endif %}

"""


def collect(
    cards: Mapping[str, Card],
    data_dir: Path,
    now: dt.datetime | None = None,
    rollover_hour: int | None = None,
    *,
    new_per_day: int | None = None,
    new_order: str | None = None,
    read: "tuple[dict[str, str], dt.date, ProgressRows] | None" = None,
) -> dict[str, Any]:
    """The progress report, read without SQLModel. Settings left as None are read as the review app saved them.

    The data directory's database must be at the current schema (open a Store on it
    first when `has_progress_schema` says otherwise).
    """
    from drill.cards.loader import known_topics
    from drill.progress import forecast, heatmap, queue_counts, retention_trend, streak, topic_figures

    now = now or dt.datetime.now()
    settings, today, rows = read if read is not None else read_for_report(data_dir, rollover_hour, now)
    if rollover_hour is None:
        rollover_hour = _saved_int(settings, "day_starts_at", DEFAULT_ROLLOVER_HOUR, 0, 23)
    if new_per_day is None:
        new_per_day = _saved_int(settings, "new_per_day", DEFAULT_NEW_PER_DAY, 0, None)
    if new_order is None:
        new_order = settings.get("new_order") or DEFAULT_NEW_ORDER
        new_order = new_order if new_order in NEW_ORDERS else DEFAULT_NEW_ORDER
    counts = queue_counts(cards, rows, today)
    titles = {k: str(v.get("title", k)) for k, v in known_topics().items()}
    figures = topic_figures(cards, rows, today, titles)
    topics = sorted((t.as_json() for t in figures), key=lambda t: t["topic"])
    evidenced = [t for t in figures if t.reviews_30d or t.last_mock is not None]
    days30 = forecast(rows, today, 30, card_ids=cards)
    week = {d["date"]: d["due"] for d in days30[1:8] if d["due"]}
    return {
        "cards": len(cards),
        "reviews": rows.total_reviews,
        "today": today.isoformat(),
        "day_starts_at": rollover_hour,
        "due_today": counts["due_today"],
        "new_today": min(max(0, new_per_day - counts["new_done_today"]), counts["new_available"]),
        "new_done_today": counts["new_done_today"],
        "new_per_day": new_per_day,
        "new_order": new_order,
        "scheduler": saved_scheduler(settings),
        "new_available": counts["new_available"],
        "suspended": counts["suspended"],
        "buried": counts["buried"],
        "leeches": counts["leeches"],
        "topics": topics,
        "weak_topics": [t.topic for t in evidenced[:3]],
        "forecast": days30,
        "forecast_7d": week,
        "heatmap": heatmap(rows),
        "retention_trend": retention_trend(rows, today),
        "streak": streak(rows, today),
        "mocks": len(rows.mocks),
        "mock_history": [
            {"id": i, "started_at": at, "status": status, "score": score, "minutes": minutes}
            for i, at, status, score, minutes in rows.mocks[:20]
        ],
        "kernels": {cid: pcts for cid, pcts in sorted(rows.kernel_pcts.items()) if cid in cards},
        "kernels_untimed": {cid: n for cid, n in sorted(rows.kernel_untimed.items()) if cid in cards},
    }


def read_for_report(
    data_dir: Path, rollover_hour: int | None = None, now: dt.datetime | None = None
) -> "tuple[dict[str, str], dt.date, ProgressRows]":
    """What the report reads from the database: saved settings, the study day, and the progress rows."""
    from drill.store.fast import read_settings
    from drill.store.progress import read_progress

    settings = read_settings(data_dir)
    if rollover_hour is None:
        rollover_hour = _saved_int(settings, "day_starts_at", DEFAULT_ROLLOVER_HOUR, 0, 23)
    today = study_day(now or dt.datetime.now(), rollover_hour)
    return settings, today, read_progress(data_dir, today)


def _saved_int(settings: Mapping[str, str], key: str, default: int, low: int, high: int | None) -> int:
    """A saved whole-number setting, or `default` when it is missing or out of range."""
    try:
        value = int(settings.get(key) or default)
    except ValueError:
        return default
    return value if value >= low and (high is None or value <= high) else default


def render_text(report: dict[str, Any]) -> str:
    from jinja2 import Environment

    topics = [
        {**t, "retention_text": "-" if t["retention"] is None else f"{t['retention']:.0%}"}
        for t in sorted(report["topics"], key=lambda t: (-t["weakness"], t["topic"]))
    ]
    env = Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    forecast_text = " ".join(f"{day[5:]}:{n}" for day, n in report["forecast_7d"].items())
    return env.from_string(_REPORT).render({**report, "topics": topics, "forecast_text": forecast_text}).rstrip()


KIND_COLUMNS = ("concept", "shape_trace", "memory_ledger", "diagnosis", "kernel")


def deck_table(cards: Mapping[str, Card], topics: Mapping[str, Mapping[str, Any]]) -> str:
    """The README's table of topics with card counts per kind."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for card in cards.values():
        counts[card.topic][card.kind] += 1
    head = "| lab | topic | " + " | ".join(KIND_COLUMNS) + " | total |"
    rows = [head, "|" + " --- |" * (len(KIND_COLUMNS) + 3)]
    totals: Counter[str] = Counter()
    for topic_id, topic in topics.items():
        c = counts.get(topic_id, Counter())
        totals.update(c)
        lab = f"{topic['lab']:02d}" if topic.get("lab") else ""
        cells = " | ".join(str(c[k]) for k in KIND_COLUMNS)
        rows.append(f"| {lab} | {topic['title']} (`{topic_id}`) | {cells} | {sum(c.values())} |")
    cells = " | ".join(str(totals[k]) for k in KIND_COLUMNS)
    rows.append(f"| | **all** | {cells} | {sum(totals.values())} |")
    return "\n".join(rows)


def _update_readme(readme_path: str = "README.md") -> None:
    """Rewrite the README's deck table from the bundled decks (python -m drill.stats)."""
    import re
    from pathlib import Path

    from drill.cards.loader import known_topics, load_decks

    path = Path(readme_path)
    table = deck_table(load_decks().cards, known_topics())
    text = re.sub(
        r"<!-- deck-table -->.*<!-- /deck-table -->",
        lambda _: f"<!-- deck-table -->\n{table}\n<!-- /deck-table -->",
        path.read_text(encoding="utf-8"),
        flags=re.S,
    )
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    _update_readme()
