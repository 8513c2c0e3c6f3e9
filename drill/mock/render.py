"""A finished mock interview's report as Markdown (for the terminal) and as one self-contained HTML file."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TypedDict

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from markdown_it import MarkdownIt
from markupsafe import Markup

from drill.cards.field_values import items, mappings
from drill.mock.charts import as_number, clock, percent, time_chart, topic_chart
from drill.mock.report_record import MockReport, RoundReport
from drill.mock.run import STATUS_WORDS
from drill.quantities import SECONDS_PER_MINUTE
from drill.study.scheduling import MOCK_PASS
from drill.words import counted

TEMPLATES = Path(__file__).parent / "templates"


# A fence line as CommonMark reads one: a backtick fence's info string holds no backtick (```a`b is inline text).
_FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
# A code span as CommonMark reads one: a run of backticks (not escaped, not part of a longer run) and the next
# run of the same length. Anything this misses is escaped as text, which is safe if less pretty.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_LESS_THAN = re.compile(r"(\\*)<")
_CLOSING = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\Z")


def _blocks(text: str) -> list[tuple[bool, list[str]]]:
    """Split Markdown into runs of lines: (True, lines) for a fenced code block with its fences, else (False, lines)."""
    blocks: list[tuple[bool, list[str]]] = []
    fence = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence:
            blocks[-1][1].append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
        elif match:
            fence = match.group(1)
            blocks.append((True, [line]))
        else:
            if not blocks or blocks[-1][0]:
                blocks.append((False, []))
            blocks[-1][1].append(line)
    return blocks


def _outside_code(line: str, plain: Callable[[str], str], code: Callable[[re.Match[str]], str]) -> str:
    """Apply `plain` to the parts of a line outside inline code spans and `code` to the spans."""
    parts: list[str] = []
    end = 0
    for match in _CODE_SPAN.finditer(line):
        parts.append(plain(line[end : match.start()]))
        parts.append(code(match))
        end = match.end()
    parts.append(plain(line[end:]))
    return "".join(parts)


def _no_tags(text: str) -> str:
    """Text outside code with every `<` escaped (a backslash before it doubled, so it cannot undo the escape)."""
    return _LESS_THAN.sub(lambda m: m.group(1) * 2 + "\\<", text)


def _inline(line: str) -> str:
    return _outside_code(line, _no_tags, lambda m: m.group(0))


def md_text(value: object) -> str:
    """Card Markdown made safe to show as Markdown: a `<` outside code is escaped so no HTML tag survives,
    and a code block left open is closed, so the report's own headings after it stay headings."""
    lines: list[str] = []
    for is_code, block in _blocks(str(value or "").strip("\n")):
        if not is_code:
            lines.extend(_inline(line) for line in block)
            continue
        lines.extend(block)
        lines.extend(_closing_fence(block))
    return "\n".join(lines).rstrip()


def _closing_fence(block: list[str]) -> list[str]:
    """The fence line a code block needs to end before the report's text goes on ([] when it has one)."""
    opened = _FENCE.match(block[0])
    fence = opened.group(1) if opened else "```"
    last = _CLOSING.match(block[-1]) if len(block) > 1 else None
    if last and last.group(1)[0] == fence[0] and len(last.group(1)) >= len(fence):
        return []
    return [fence]


def md_quote(value: object) -> str:
    """Plain text the learner typed, as a Markdown block quote."""
    return "\n".join(f"> {line}".rstrip() for line in md_text(value).splitlines())


def md_cell(value: object) -> str:
    """Text that fits in one Markdown table cell."""
    return md_line(value).replace("|", "\\|")


def md_line(value: object) -> str:
    """Text on one line (a list item, a heading): `<` escaped, and a fence at its start too (it would open a block)."""
    line = _inline(" ".join(str(value or "").split()))
    return "\\" + line if _FENCE.match(line) else line


# Card Markdown as the report's HTML: CommonMark and tables, with any HTML in the text shown as text, never run.
# No links or images either: the report is one file that loads nothing and sends the reader nowhere.
REPORT_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table").disable(["image", "link", "autolink"])


def html_text(value: object) -> Markup:
    """Card Markdown as HTML (markdown-it-py): paragraphs, lists, tables, code, bold and italic; any HTML escaped."""
    return Markup(REPORT_MARKDOWN.render(str(value or "").strip("\n")).strip())


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------


def _parse_time(value: object) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _date_text(moment: dt.datetime | None) -> str:
    if moment is None:
        return "date unknown"
    return f"{moment.day} {moment:%B %Y, %H:%M}"


def _question(q: Mapping[str, object], index: int) -> dict[str, object]:
    budget = max(0.0, as_number(q.get("budget_s")))
    spent = max(0.0, as_number(q.get("spent_s")))
    status = str(q.get("status") or "unanswered")
    gap = round(spent) - round(budget)
    if status == "unanswered" and round(spent) == 0:
        verdict = "not reached"
    elif gap > 0:
        verdict = f"{clock(gap)} over"
    elif gap < 0:
        verdict = f"{clock(-gap)} under"
    else:
        verdict = "on budget"
    score = as_number(q.get("score"))
    answered = status == "answered"
    result = percent(score) if answered else status
    passed = "pass" if score >= MOCK_PASS else "fail"
    return {
        "position": q.get("position", index + 1),
        "card_id": str(q.get("card_id") or ""),
        "topic": str(q.get("topic") or ""),
        "title": str(q.get("title") or q.get("topic") or ""),
        "kind": str(q.get("kind") or "").replace("_", " "),
        "prompt": str(q.get("prompt") or ""),
        "answer": str(q.get("answer") or "").strip(),
        "expected": str(q.get("expected") or ""),
        "missed": [str(m) for m in items(q.get("missed")) if str(m).strip()],
        "graded": [str(p) for p in items(q.get("graded"))],
        # the part of the score drill checked, said only where the learner's overrides made it differ
        "evidence": percent(as_number(q.get("evidence"))) if answered and _differs(q) else "",
        "overrides": [
            {"point": str(o.get("point") or ""), "reason": str(o.get("reason") or "")}
            for o in mappings(q.get("overrides"))
        ],
        "hints": [str(h) for h in items(q.get("hints"))],
        "follow_up": _follow_up(q.get("follow_up")),
        "status": status,
        "result": result,
        "badge": passed if answered else status,  # the badge's colour: a pass, a fail, or how it went unanswered
        "budget": clock(budget),
        "spent": clock(spent),
        "verdict": verdict,
        "over": gap > 0,
    }


def _differs(q: Mapping[str, object]) -> bool:
    return abs(as_number(q.get("score")) - as_number(q.get("evidence"))) > 0.005


FOLLOW_UP_WORDS = {"deeper": "a deeper question", "narrower": "a hint and a narrower question"}


def _follow_up(follow: object) -> dict[str, object] | None:
    if not isinstance(follow, Mapping):
        return None
    status = str(follow.get("status") or "")
    score = follow.get("score")
    if status == "answered" and score is not None:
        result = percent(as_number(score))
    elif status == "answered":
        result = "answered"
    else:
        result = "not answered"
    return {
        "what": FOLLOW_UP_WORDS.get(str(follow.get("kind")), "a follow-up"),
        "prompt": str(follow.get("prompt") or ""),
        "hint": str(follow.get("hint") or ""),
        "answer": str(follow.get("answer") or "").strip(),
        "result": result,
        "spent": clock(max(0.0, as_number(follow.get("spent_s")))),
        "budget": clock(max(0.0, as_number(follow.get("budget_s")))),
        "missed": [str(m) for m in follow.get("missed") or [] if str(m).strip()],
    }


class DimensionRow(TypedDict):
    dimension: str
    verdict: str
    graded: str
    reason: str


class RoundContext(TypedDict):
    """A round's report as the report templates show it: every figure already in words."""

    title: str
    kind: str
    verdict: str
    reason: str
    reached: str
    dimensions: list[DimensionRow]
    stages: list[str]
    hints: list[str]
    next_asked: str
    timing: str


def _graded(evidence: float | None) -> str:
    return "-" if evidence is None else f"{evidence:.0%}"


def round_context(report: RoundReport) -> RoundContext:
    """A round's report in words for the templates."""
    rows = [
        DimensionRow(dimension=d.dimension, verdict=d.verdict.value, graded=_graded(d.evidence), reason=d.reason)
        for d in report.dimensions
    ]
    stages = []
    for s in report.stages:
        graded = "" if s.evidence is None else f", graded {s.evidence:.0%}"
        what = "twist" if s.twist else f"stage {s.number} · {s.type}"
        stages.append(f"{what} ({s.dimension}): {s.status}{graded}")
    return RoundContext(
        title=report.title,
        kind=report.kind,
        verdict=report.verdict.value,
        reason=report.reason,
        reached=f"{report.reached} of {report.stages_total} stages answered",
        dimensions=rows,
        stages=stages,
        hints=list(report.hints),
        next_asked=report.next_asked,
        timing=report.timing,
    )


# A finished mock that used less than this share of its minutes is said to be far under time, with how much of it
# was answered with something (a mock of blank answers submitted in seconds is no finished mock).
FAR_UNDER_SHARE = 0.25


def status_words(report: MockReport, used_s: float) -> str:
    """How the mock ended, in words; a finished mock far under its minutes says how much was answered."""
    status = report.status or "finished"
    words = STATUS_WORDS.get(status, status.replace("_", " "))
    if status != "finished" or used_s >= FAR_UNDER_SHARE * report.minutes * SECONDS_PER_MINUTE:
        return words
    total = report.total
    said = report.said
    blank = report.answered - said
    blanks = f", {counted(blank, 'blank answer')} among them" if blank > 0 else ""
    return f"finished far under time: {said} of {counted(total, 'question')} answered with something{blanks}"


def _time_used(seconds: float) -> str:
    """The time a mock took, before "of N minutes": whole minutes ("12"), or the seconds of a mock shorter
    than a minute ("20 seconds"), which is not "0"."""
    whole = round(seconds)
    if whole >= SECONDS_PER_MINUTE:
        return str(round(seconds / SECONDS_PER_MINUTE))
    return counted(whole, "second")


def _context(report: MockReport) -> dict[str, object]:
    questions = [_question(q, i) for i, q in enumerate(report.questions)]
    topics = [
        {
            "topic": t["topic"],
            "title": t["title"] or t["topic"],
            "questions": t["questions"],
            "score": percent(t["score"]),
        }
        for t in report.topics
    ]
    started = _parse_time(report.started_at)
    ended = _parse_time(report.ended_at)
    if started is not None and ended is not None and ended >= started:
        used_s = (ended - started).total_seconds()
    else:
        used_s = sum(max(0.0, q["spent_s"]) for q in report.questions)
    evidence = report.evidence
    score = report.score
    differs = evidence is not None and score is not None and abs(score - evidence) > 0.005
    return {
        "id": report.id,
        "date": _date_text(started),
        "scored": score is not None,  # an abandoned mock (no question answered) is not scored
        "score": percent(score or 0.0),
        "evidence": percent(evidence) if differs and evidence is not None else "",
        "answered": report.answered,
        "skipped": report.skipped,
        "unanswered": report.unanswered,
        "total": report.total or len(questions),
        "used": _time_used(used_s),
        "minutes": report.minutes,
        "status_words": status_words(report, used_s),
        # readiness on the interview date when the mock ended (drill.study.readiness's summary line); "" without a date
        "readiness": report.readiness or "",
        "hard": report.hard or "",  # how a hard-mode mock was asked; "" for any other
        "topics": topics,
        "questions": questions,
        "study_next": [
            {"topic": s["topic"], "title": s["title"] or s["topic"], "why": s["why"]} for s in report.study_next
        ],
        # a round's report per dimension; None for any other mock
        "round": None if report.round is None else round_context(report.round),
        "topic_chart": topic_chart(report.topics),
        "time_chart": time_chart(report.questions),
    }


@lru_cache(maxsize=2)
def _environment(html: bool) -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=html,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=StrictUndefined,
    )
    env.filters.update(md_text=md_text, md_quote=md_quote, md_cell=md_cell, md_line=md_line, html_text=html_text)
    return env


def render_markdown(report: MockReport) -> str:
    """The report as Markdown that reads well in a terminal; it holds no HTML."""
    text = _environment(False).get_template("report.md.j2").render(_context(report))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def render_html(report: MockReport) -> str:
    """The report as one HTML file with inline styles and inline SVG charts; it loads nothing from anywhere."""
    return _environment(True).get_template("report.html.j2").render(_context(report))
