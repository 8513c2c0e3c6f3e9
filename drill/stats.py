"""Progress figures: counts, due cards, retention and weak topics, as JSON or a text report."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from typing import Any, Mapping

from drill.cards.model import Card
from drill.session import (
    DEFAULT_NEW_ORDER,
    DEFAULT_NEW_PER_DAY,
    DEFAULT_ROLLOVER_HOUR,
    NEW_ORDERS,
    build_queue,
    study_day,
)

_REPORT = """\
drill: {{ cards }} cards, {{ reviews }} reviews logged
study day {{ today }} (rolls over at {{ "%02d"|format(day_starts_at) }}:00)
due today: {{ due_today }}, plus {{ new_today }} new ({{ new_available }} not yet seen; new cards in {{ new_order }} order)
{% if suspended or buried %}set aside: {{ suspended }} suspended, {{ buried }} buried until tomorrow
{% endif %}
{% if forecast %}next 7 days: {{ forecast_text }}
{% endif %}
{{ "%-22s %6s %8s %9s"|format("topic", "cards", "reviews", "retention") }}
{% for t in topics %}{{ "%-22s %6d %8d %9s"|format(t.topic, t.cards, t.reviews, t.retention_text) }}
{% endfor %}
{% if weak_topics %}weakest: {{ weak_topics|join(", ") }}{% else %}weakest: not enough reviews yet{% endif %}
"""


def collect(
    cards: Mapping[str, Card],
    store: Any,
    now: dt.datetime | None = None,
    rollover_hour: int | None = None,
    *,
    new_per_day: int | None = None,
    new_order: str | None = None,
) -> dict[str, Any]:
    """The progress report. Settings left as None are read from the store, as the review app does."""
    now = now or dt.datetime.now()
    if rollover_hour is None:
        rollover_hour = _saved_int(store, "day_starts_at", DEFAULT_ROLLOVER_HOUR, 0, 23)
    if new_per_day is None:
        new_per_day = _saved_int(store, "new_per_day", DEFAULT_NEW_PER_DAY, 0, None)
    if new_order is None:
        new_order = store.get_setting("new_order") or DEFAULT_NEW_ORDER
        new_order = new_order if new_order in NEW_ORDERS else DEFAULT_NEW_ORDER
    today = study_day(now, rollover_hour)
    states = store.states()
    queue = build_queue(cards.values(), states, today, new_limit=10**9, new_order="deck")
    due_today = sum(1 for cid in queue if cid in states and not states[cid].is_new)
    new_available = sum(1 for cid in queue if cid not in states or states[cid].is_new)
    new_done_today = sum(1 for s in states.values() if s.introduced_on == today)
    per_topic: dict[str, dict[str, Any]] = defaultdict(lambda: {"cards": 0, "reviews": 0, "passed": 0})
    for card in cards.values():
        per_topic[card.topic]["cards"] += 1
    for card_id, grades in store.grades_by_card().items():
        card = cards.get(card_id)
        if card is None:
            continue
        t = per_topic[card.topic]
        t["reviews"] += len(grades)
        t["passed"] += sum(1 for g in grades if g >= 3)
    topics = []
    for name, t in sorted(per_topic.items()):
        retention = t["passed"] / t["reviews"] if t["reviews"] else None
        topics.append({"topic": name, "cards": t["cards"], "reviews": t["reviews"], "retention": retention})
    rated = [t for t in topics if t["reviews"] >= 3 and t["retention"] is not None]
    weak = [t["topic"] for t in sorted(rated, key=lambda t: t["retention"])[:3]]
    forecast = Counter(
        s.sm2.due.isoformat()
        for s in states.values()
        if s.sm2.due and today < s.sm2.due <= today + dt.timedelta(days=7) and not s.suspended and s.card_id in cards
    )
    return {
        "cards": len(cards),
        "reviews": store.review_count(),
        "today": today.isoformat(),
        "day_starts_at": rollover_hour,
        "due_today": due_today,
        "new_today": min(max(0, new_per_day - new_done_today), new_available),
        "new_done_today": new_done_today,
        "new_per_day": new_per_day,
        "new_order": new_order,
        "new_available": new_available,
        "suspended": sum(1 for s in states.values() if s.suspended),
        "buried": sum(1 for s in states.values() if s.buried_until and s.buried_until > today),
        "leeches": sorted(s.card_id for s in states.values() if s.leech),
        "topics": topics,
        "weak_topics": weak,
        "forecast": dict(sorted(forecast.items())),
    }


def _saved_int(store: Any, key: str, default: int, low: int, high: int | None) -> int:
    """A saved whole-number setting, or `default` when it is missing or out of range."""
    try:
        value = int(store.get_setting(key) or default)
    except ValueError:
        return default
    return value if value >= low and (high is None or value <= high) else default


def render_text(report: dict[str, Any]) -> str:
    from jinja2 import Environment

    topics = [
        {**t, "retention_text": "-" if t["retention"] is None else f"{t['retention']:.0%}"} for t in report["topics"]
    ]
    env = Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    forecast_text = " ".join(f"{day[5:]}:{n}" for day, n in report["forecast"].items())
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
