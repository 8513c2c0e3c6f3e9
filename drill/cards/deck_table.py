"""The README's table of the bundled decks: cards per topic and kind (python -m drill.cards.deck_table rewrites it)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Mapping

from drill.cards.model import Card

KIND_COLUMNS = ("concept", "shape_trace", "memory_ledger", "diagnosis", "kernel", "scenario")


def deck_table(cards: Mapping[str, Card], topics: Mapping[str, Mapping[str, object]]) -> str:
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
    """Rewrite the README's deck table from the bundled decks (python -m drill.cards.deck_table)."""
    import re

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
