"""Where a learner stands, per topic and over time: pure functions over what the store read.

The weakness of a topic (0 = strong, 1 = weak) blends three kinds of evidence,
each pulled toward a prior so that a topic seen only a few times cannot top the
list on luck:

    retention_s = (passed_30d + A * P) / (reviews_30d + A)          A = 10, P = 0.85
    mock_s      = (q * last_mock_score + M * P) / (q + M)           M = 2, q = questions asked
    ease_s      = (c * clamp((mean_ef - 1.3) / 1.2, 0, 1) + E) / (c + E)   E = 3, c = cards reviewed
    weakness    = 1 - (0.6 * retention_s + 0.25 * mock_s + 0.15 * ease_s)

P = 0.85 is the retention a learner aims at: a topic with no evidence scores
0.13. Two failed reviews move retention_s only from 0.85 to 0.71 (weakness
0.21); forty reviews at 60 % move it to 0.65 (weakness 0.25), so the topic with
more evidence ranks weaker. Reviews in cram mode are left out of retention.

The weakest-topics ranking (RANKING_RULE, `ranked_topics`) is the one order that `drill stats`, `--weak`,
the mock's setup and the mock's report all use. A topic is practised once its score measures something: a
scheduled review in the last 30 days, a card of it ever reviewed, or a mock answer. Practised topics come
first, weakest first; the topics not practised yet follow, by id. Their 0.13 is only the prior: a topic
nobody has asked about is new rather than weak, and ranking it above a practised topic at 0.12 named
topics the learner had never seen as their weakest.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from drill.study.records import CardFacts, ProgressRows
from drill.study.sm2 import MIN_EF, START_EF

PRIOR_RETENTION = 0.85
RETENTION_WEIGHT_REVIEWS = 10.0
MOCK_WEIGHT_QUESTIONS = 2.0
EASE_WEIGHT_CARDS = 3.0
WEIGHTS = (0.6, 0.25, 0.15)  # retention, mock, ease


def smoothed(successes: float, trials: float, prior: float, weight: float) -> float:
    """A rate pulled toward `prior` as if `weight` trials had gone at the prior's rate."""
    return (successes + weight * prior) / (trials + weight)


def weakness(
    reviews_30d: int,
    passed_30d: int,
    mean_ef: float | None,
    cards_reviewed: int,
    last_mock: float | None = None,
    mock_questions: int = 0,
) -> float:
    """The weakness score of one topic (see the module docstring); 0 = strong, 1 = weak."""
    retention_s = smoothed(passed_30d, reviews_30d, PRIOR_RETENTION, RETENTION_WEIGHT_REVIEWS)
    if last_mock is None:
        mock_s = PRIOR_RETENTION
    else:
        mock_s = smoothed(last_mock * mock_questions, mock_questions, PRIOR_RETENTION, MOCK_WEIGHT_QUESTIONS)
    ease = 1.0 if mean_ef is None else min(1.0, max(0.0, (mean_ef - MIN_EF) / (START_EF - MIN_EF)))
    ease_s = smoothed(ease * cards_reviewed, cards_reviewed, 1.0, EASE_WEIGHT_CARDS)
    w_r, w_m, w_e = WEIGHTS
    return round(1.0 - (w_r * retention_s + w_m * mock_s + w_e * ease_s), 4)


# The weakness of a topic with no evidence at all (no review, no mock, no card reviewed).
UNSEEN_WEAKNESS = weakness(0, 0, None, 0)

# The weakest-topics ranking in words, as `drill stats` and the README state it.
RANKING_RULE = "the topics practised, weakest first; then those not practised yet, by id"


@dataclass
class TopicFigures:
    topic: str
    title: str
    cards: int = 0
    reviews: int = 0
    reviews_30d: int = 0
    retention: float | None = None  # raw, last 30 days
    lapses: int = 0
    mean_ease: float | None = None
    due_7d: int = 0
    last_mock: float | None = None
    kernel_best_pct_of_target: float | None = None
    weakness: float = 0.0
    practised: bool = False  # the weakness measures something (see the module docstring); else it is the prior

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def topic_figures(
    cards: Mapping[str, CardFacts],
    rows: ProgressRows,
    today: dt.date,
    titles: Mapping[str, str] | None = None,
) -> list[TopicFigures]:
    """Per-topic figures, in the weakest-topics ranking (`ranked_topics`)."""
    titles = titles or {}
    horizon = (today + dt.timedelta(days=7)).isoformat()
    topics: dict[str, TopicFigures] = {}
    passed: dict[str, int] = {}
    efs: dict[str, list[float]] = {}
    best: dict[str, float] = {}
    # one pass over the cards, 10,000 of them a `drill stats`: the rows' lookups held in names
    card_rows = rows.cards
    recent = rows.recent
    kernel_pcts = rows.kernel_pcts
    for card in cards.values():
        card_id = card.id
        topic = card.topic
        t = topics.get(topic)
        if t is None:
            t = TopicFigures(topic, titles.get(topic, topic))
            topics[topic] = t
        t.cards += 1
        figures = card_rows.get(card_id)
        if figures is not None:
            t.reviews += figures.reviews
            t.lapses += figures.lapses
            if figures.repetitions or figures.reviews:
                efs.setdefault(topic, []).append(figures.ef)
            if figures.due and figures.due <= horizon and not figures.suspended:
                t.due_7d += 1
        counted = recent.get(card_id)
        if counted is not None:
            t.reviews_30d += counted[0]
            passed[topic] = passed.get(topic, 0) + counted[1]
        pcts = kernel_pcts.get(card_id)
        if pcts and card.kind == "kernel":
            target = card.fields.get("target_pct")
            if isinstance(target, (int, float)) and target > 0:
                best[topic] = max(best.get(topic, 0.0), max(pcts) / target * 100)
    for name, (n, ok) in rows.recent_by_topic.items():
        if name in topics:
            topics[name].reviews_30d += n
            passed[name] = passed.get(name, 0) + ok
    out = []
    for name, t in topics.items():
        t.retention = passed.get(name, 0) / t.reviews_30d if t.reviews_30d else None
        ef_list = efs.get(name, [])
        t.mean_ease = round(sum(ef_list) / len(ef_list), 3) if ef_list else None
        mock = rows.last_mock_by_topic.get(name)
        t.last_mock = round(mock[1], 4) if mock else None
        t.kernel_best_pct_of_target = round(best[name], 1) if name in best else None
        t.weakness = weakness(
            t.reviews_30d,
            passed.get(name, 0),
            t.mean_ease,
            len(ef_list),
            t.last_mock,
            mock[2] if mock else 0,
        )
        t.practised = bool(t.reviews_30d or ef_list or mock)
        out.append(t)
    order = {name: i for i, name in enumerate(ranked_topics(topics, measured_weakness(out)))}
    out.sort(key=lambda t: order[t.topic])
    return out


def ranked_topics(topics: Iterable[str], measured: Mapping[str, float]) -> list[str]:
    """The weakest-topics ranking (RANKING_RULE): the topics with a measured weakness, highest first (ties by
    id), then the others, by id. `measured` holds the practised topics' scores (`measured_weakness`)."""
    names = sorted(set(topics))
    practised = sorted((t for t in names if t in measured), key=lambda t: (-measured[t], t))
    return practised + [t for t in names if t not in measured]


def measured_weakness(figures: Iterable[TopicFigures]) -> dict[str, float]:
    """The weakness of each practised topic; a topic not practised yet is left out (its score is the prior)."""
    return {t.topic: t.weakness for t in figures if t.practised}


def weakest(figures: Iterable[TopicFigures], n: int) -> list[str]:
    """The `n` first topics with cards in the weakest-topics ranking (`--weak N`, `drill stats`)."""
    listed = list(figures)
    return ranked_topics([t.topic for t in listed if t.cards], measured_weakness(listed))[:n]


class DueDay(TypedDict):
    """Cards due on one day (`date`, ISO), as the stats and `drill stats --json` show the forecast."""

    date: str
    due: int


class RetentionWeek(TypedDict):
    """One week of the retention trend: its first day (ISO), the reviews scheduled and the share passed."""

    week_start: str
    reviews: int
    retention: float | None


class QueueCounts(TypedDict):
    """Today's queue in counts, and the cards set aside or flagged."""

    due_today: int
    new_available: int
    new_done_today: int
    suspended: int
    buried: int
    leeches: list[str]


def forecast(rows: ProgressRows, today: dt.date, days: int = 30, card_ids: Iterable[str] | None = None) -> list[DueDay]:
    """Cards due on each of the next `days` days; today's count includes overdue cards."""
    keep = set(card_ids) if card_ids is not None else None
    counts = [0] * days
    offsets: dict[str, int] = {}  # by due day: 10,000 cards fall on a few hundred days
    for cid, f in rows.cards.items():
        if f.due is None or f.suspended or (keep is not None and cid not in keep):
            continue
        offset = offsets.get(f.due)
        if offset is None:
            offset = (dt.date.fromisoformat(f.due) - today).days
            offsets[f.due] = offset
        if offset < days:
            counts[max(0, offset)] += 1
    return [DueDay(date=(today + dt.timedelta(days=i)).isoformat(), due=n) for i, n in enumerate(counts)]


def heatmap(rows: ProgressRows) -> dict[str, int]:
    """Reviews per day over the window read (days without reviews left out)."""
    return {day: n for day, (n, _, _) in sorted(rows.days.items())}


def streak(rows: ProgressRows, today: dt.date) -> int:
    """Days in a row with at least one review, ending today (or yesterday, before today's first review)."""
    days = set(rows.days) | set(rows.earlier_days)
    cursor = today if today.isoformat() in days else today - dt.timedelta(days=1)
    count = 0
    while cursor.isoformat() in days:
        count += 1
        cursor -= dt.timedelta(days=1)
    return count


def retention_trend(rows: ProgressRows, today: dt.date, weeks: int = 12) -> list[RetentionWeek]:
    """Retention (grade >= 3, cram left out) for each of the last `weeks` weeks, oldest first."""
    out = []
    for w in range(weeks - 1, -1, -1):
        end = today - dt.timedelta(days=7 * w)
        start = end - dt.timedelta(days=6)
        n = 0
        ok = 0
        for i in range(7):
            _, sched, passed = rows.days.get((start + dt.timedelta(days=i)).isoformat(), (0, 0, 0))
            n += sched
            ok += passed
        out.append(RetentionWeek(week_start=start.isoformat(), reviews=n, retention=ok / n if n else None))
    return out


def queue_counts(cards: Iterable[str], rows: ProgressRows, today: dt.date) -> QueueCounts:
    """Today's queue in counts, by the rules of drill.study.session.build_queue, from the figures alone.

    due: same-day repeats and cards due by today; new: cards never introduced;
    suspended and buried ones are in neither. Also the set-aside counts and leeches.
    """
    day = today.isoformat()
    due = 0
    new = 0
    new_done = 0
    suspended = 0
    buried = 0
    leeches = []
    for cid in cards:
        f = rows.cards.get(cid)
        if f is None:
            new += 1
            continue
        if f.introduced_on == day:
            new_done += 1
        if f.leech:
            leeches.append(cid)
        if f.suspended:
            suspended += 1
            continue
        if f.buried_until and f.buried_until > day:
            buried += 1
            continue
        if f.introduced_on is None:
            new += 1
        elif (f.repeat_pending and f.last_review_day == day) or (f.due is not None and f.due <= day):
            due += 1
    return QueueCounts(
        due_today=due,
        new_available=new,
        new_done_today=new_done,
        suspended=suspended,
        buried=buried,
        leeches=sorted(leeches),
    )
