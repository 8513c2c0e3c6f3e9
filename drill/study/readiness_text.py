"""Readiness and the plan as text: `drill plan` prints the whole plan, `drill stats` a short block."""

from __future__ import annotations

import datetime as dt

from drill.study.plan import PlanDay
from drill.study.plan_runs import INTRO_LEAD_DAYS
from drill.study.readiness import ReadinessFigures, days_left_words
from drill.text_table import Column, text_table
from drill.words import counted

NEXT_DAYS = 7  # the days after today `drill plan` lists (--json has every one)
STATS_TOPICS = 3  # topics the stats block names, the furthest from the target first


def render_plan(figures: ReadinessFigures, cards: int) -> str:
    """What `drill plan` prints: the date, readiness per topic, today, the next days, the mocks, or what would fit."""
    lines = [_heading(figures, cards), ""]
    lines += _topic_table(figures, None)
    plan = figures.plan
    if plan is None:
        lines += ["", "The interview is today: nothing is left to plan. Good luck."]
        return "\n".join(lines)
    lines += ["", *reach_lines(figures)]
    lines += ["", f"Today {_weekday_and_date(plan.days[0].day)}: {_day_figures(plan.days[0])}"]
    lines += [f"  {line}" for line in _top_up_lines(plan.days[0])]
    rest = plan.days[1:]
    if rest:
        lines.append("Next days:")
        lines += [f"  {_weekday_and_date(day.day)}  {_day_figures(day)}" for day in rest[:NEXT_DAYS]]
        if len(rest) > NEXT_DAYS:
            lines.append(f"  ... {len(rest) - NEXT_DAYS} more days to the interview (drill plan --json lists them all)")
    if plan.mocks:
        lines.append(f"Mock interviews (drill mock): {', '.join(_weekday_and_date(day) for day in plan.mocks)}")
    lines += ["", *_verdict(figures), figures.week.line()]
    return "\n".join(lines)


def reach_lines(figures: ReadinessFigures) -> list[str]:
    """What the minutes reach and what the target needs, and the forecast with its interval."""
    plan = figures.plan
    if plan is None:
        return []
    interview = figures.interview
    what = f"the {interview.track} track" if interview.track else "the cards"
    forecast = plan.forecast
    line = (
        f"{plan.minutes_per_day:g} min/day: {forecast.ready_share:.0%} of {what} ready by "
        f"{interview.date.isoformat()} (recall at least {plan.target:.0%})"
    )
    if plan.needed_reaches is not None and plan.minutes_needed is not None:
        line += f"; {plan.needed_reaches:.0%} needs about {plan.minutes_needed} min/day"
    skip = plan.uncertainty.skip_rate
    return [
        line,
        f"Forecast mean recall on the day: {forecast.mean:.0%}, likely between {forecast.low:.0%} and "
        f"{forecast.high:.0%} (how fast you forget is known from {counted(plan.uncertainty.reviews, 'review')}; "
        f"{skip:.0%} of days counted as skipped)",
    ]


def render_block(figures: ReadinessFigures) -> str:
    """The short readiness block `drill stats` prints when an interview date is set."""
    lines = [f"Interview {figures.interview.date.isoformat()}: {days_left_words(figures.days_left)}"]
    lines.append(
        f"  readiness on the day: {figures.now.overall:.0%} if you stop now, {figures.with_plan:.0%} with the plan"
        f" (target {figures.interview.target:.0%})"
    )
    furthest = [line for line in figures.topics()[:STATS_TOPICS] if line.gap(figures.interview.target) > 0]
    if furthest:
        lines.append("  furthest from the target: " + ", ".join(f"{t.title} {t.stop_now:.0%}" for t in furthest))
    if figures.plan is not None:
        today = figures.plan.days[0]
        fits = "" if figures.plan.fits else " (the plan does not fit: drill plan says what would)"
        lines += [f"  {line}" for line in reach_lines(figures)]
        lines.append(f"  today: {_day_figures(today)}{fits}")
        lines += [f"    {line}" for line in _top_up_lines(today)]
    lines.append(f"  {figures.week.line()}")
    return "\n".join(lines)


def _heading(figures: ReadinessFigures, cards: int) -> str:
    interview = figures.interview
    track = f"track {interview.track}" if interview.track else "every card"
    return (
        f"Interview {interview.date.isoformat()}: {days_left_words(figures.days_left)} · {track} ({cards} cards) · "
        f"target {interview.target:.0%} · {interview.minutes_per_day} minutes a day"
    )


def _topic_table(figures: ReadinessFigures, limit: int | None) -> list[str]:
    rows = [("overall", figures.now.overall, figures.with_plan)]
    rows += [(f"{t.title} ({t.cards})", t.stop_now, t.with_plan) for t in figures.topics()[:limit]]
    columns = [Column("Readiness on the day"), Column("stop now", "right"), Column("with the plan", "right")]
    return text_table(columns, [(name, f"{now:.0%}", f"{planned:.0%}") for name, now, planned in rows])


def _verdict(figures: ReadinessFigures) -> list[str]:
    plan = figures.plan
    assert plan is not None
    if plan.fits:
        return [f"The plan fits: {plan.planned.overall:.0%} on the day, target {plan.target:.0%}."]
    out = [f"It does not fit: {'; '.join(plan.reasons)}."]
    would = []
    if plan.minutes_needed is not None:
        would.append(f"{plan.minutes_needed} minutes a day (drill plan --minutes {plan.minutes_needed})")
    if plan.leave_out:
        would.append("leaving out " + ", ".join(cut.topic for cut in plan.leave_out))
    if would:
        out.append("What would: " + ", or ".join(would) + ".")
    else:
        out.append(
            f"No number of minutes would: every card is introduced {INTRO_LEAD_DAYS} days before the date at the "
            "latest; a later date or a smaller track would."
        )
    return out


def _day_figures(day: PlanDay) -> str:
    early = f" ({round(day.early_reviews)} early)" if round(day.early_reviews) else ""
    mock = " + a mock interview" if day.mock else ""
    return (
        f"{len(day.new_cards):>3} new, {round(day.reviews):>3} reviews{early}, "
        f"about {counted(round(day.minutes), 'minute')}{mock}"
    )


def _top_up_lines(day: PlanDay) -> list[str]:
    """The day's top-up in one line (none when there is none): the cards not due that the minutes left bring up."""
    count = round(day.top_up)
    if not count:
        return []
    return [
        f"of those reviews, {counted(count, 'card')} not yet due top up the minutes left "
        "(the lowest recall on the date first)"
    ]


def _weekday_and_date(day: dt.date) -> str:
    return f"{day:%a} {day.isoformat()}"
