"""The mock report as Markdown and as a self-contained HTML file."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from drill.mock.render import clock, html_text, md_text, render_html, render_markdown, time_chart, topic_chart
from drill.mock.report_record import MockReport

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mock_report.json"
EMPTY: dict[str, Any] = {
    "id": 4,
    "started_at": "2026-11-21T09:00:00",
    "ended_at": "2026-11-21T09:00:20",
    "minutes": 30,
    "status": "quit",
    "score": 0.0,
    "answered": 0,
    "skipped": 0,
    "unanswered": 0,
    "total": 0,
    "topics": [],
    "questions": [],
    "study_next": [],
}
TAG = re.compile(r"(?<!\\)</?[A-Za-z][^>]*>")


class Collector(HTMLParser):
    """Every start tag with its attributes, the text inside <style>, and the text outside it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []
        self.css = ""
        self.text = ""
        self.svg_text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "style":
            self.css += data
        else:
            self.text += data
        if "svg" in self.stack:
            self.svg_text += data

    def all(self, tag: str) -> list[dict[str, str]]:
        return [attrs for name, attrs in self.tags if name == tag]


def parse(html: str) -> Collector:
    collector = Collector()
    collector.feed(html)
    collector.close()
    return collector


@pytest.fixture
def report() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_fixture_follows_the_contract(report: dict[str, Any]) -> None:
    questions = report["questions"]
    assert len(questions) == report["total"] == 10
    statuses = [q["status"] for q in questions]
    assert (statuses.count("answered"), statuses.count("skipped"), statuses.count("unanswered")) == (7, 1, 2)
    assert (report["answered"], report["skipped"], report["unanswered"]) == (7, 1, 2)
    assert report["score"] == pytest.approx(sum(q["score"] for q in questions) / len(questions), abs=1e-3)
    assert sum(q["spent_s"] > q["budget_s"] for q in questions) == 1
    assert sum(q.get("follow_up") is not None for q in questions) == 1
    assert any("<script>alert(1)</script>" in q["prompt"] and "&" in q["prompt"] for q in questions)
    for t in report["topics"]:
        scores = [q["score"] for q in questions if q["topic"] == t["topic"]]
        assert t["questions"] == len(scores)
        assert t["score"] == pytest.approx(sum(scores) / len(scores), abs=1e-3)
    assert len(report["study_next"]) == 3


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def test_markdown_summary(report: dict[str, Any]) -> None:
    md = render_markdown(MockReport.from_json(report))
    assert md.startswith("# Mock interview #3 · 20 November 2026, 18:02\n")
    assert "**Score 49%**" in md
    assert "7 answered, 1 skipped, 2 unanswered of 10" in md
    assert "45 of 45 minutes used" in md
    assert "time ran out" in md


@pytest.mark.parametrize(("status", "words"), [("finished", "finished"), ("quit", "ended early")])
def test_markdown_status_in_words(report: dict[str, Any], status: str, words: str) -> None:
    report["status"] = status
    assert f"minutes used · {words}\n" in render_markdown(MockReport.from_json(report))


def test_markdown_tables(report: dict[str, Any]) -> None:
    md = render_markdown(MockReport.from_json(report))
    assert "| Mixture of experts | 2 | 20% |" in md
    assert "| CUDA reduction | 1 | 0% |" in md
    assert "| 3 | Transformer memory accounting | 75% | 5:00 | 6:13 | 1:13 over |" in md
    assert "| 1 | Inference serving | 67% | 5:00 | 4:48 | 0:12 under |" in md
    assert "| 5 | Mixture of experts | skipped | 4:00 | 0:35 | 3:25 under |" in md
    assert "| 10 | CUDA reduction | unanswered | 4:00 | 0:00 | not reached |" in md


def test_markdown_has_every_question(report: dict[str, Any]) -> None:
    md = render_markdown(MockReport.from_json(report))
    for q in report["questions"]:
        assert f"### {q['position']}. {q['title']} · {q['kind'].replace('_', ' ')}" in md
        # The expected answer is all there (the `<` escape aside, which no expected answer here needs).
        assert q["expected"] in md
        for point in q["missed"]:
            assert f"- {point}\n" in md
    assert md.count("#### Missed") == sum(1 for q in report["questions"] if q["missed"])
    assert md.count("(no answer)") == 3
    assert "> Little's law: L = lambda * W, so lambda = 64 / 8 = 8 requests per second.\n> Above" in md
    assert "#### Follow-up: a deeper question · 100% · 2:30 of 4:00" in md
    assert "> queueing delay grows like rho/(1-rho)" in md
    assert "Score 50% (graded 0%)" in md and "1 of 3 rubric points" in md
    assert "#### Ticked by your override (not graded)" in md and "your reason: I said ring is bandwidth optimal" in md


def test_markdown_study_next(report: dict[str, Any]) -> None:
    md = render_markdown(MockReport.from_json(report))
    study = md[md.index("## Study next") :]
    for i, s in enumerate(report["study_next"], start=1):
        assert f"{i}. **{s['title']}** — {s['why']}" in study


def test_markdown_has_no_html(report: dict[str, Any]) -> None:
    md = render_markdown(MockReport.from_json(report))
    assert TAG.search(md) is None
    assert "\\<script>alert(1)\\</script>" in md
    assert "compare ring & tree" in md


def test_markdown_escape_leaves_code_alone() -> None:
    text = "Use `a<b` here, not <b>bold</b>.\n\n```cpp\nif (a < b) {}\n```"
    assert md_text(text) == "Use `a<b` here, not \\<b>bold\\</b>.\n\n```cpp\nif (a < b) {}\n```"


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------


def test_html_is_self_contained(report: dict[str, Any]) -> None:
    html = render_html(MockReport.from_json(report))
    page = parse(html)
    names = [name for name, _ in page.tags]
    assert "link" not in names
    assert "script" not in names
    assert "img" not in names and "iframe" not in names and "object" not in names
    for _, attrs in page.tags:
        for key in ("src", "href", "xlink:href", "srcset", "action", "data"):
            if key in attrs:
                assert attrs[key].startswith("#"), (key, attrs[key])
        assert "url(" not in attrs.get("style", "")
    assert page.css.strip()
    assert "url(" not in page.css
    assert "@import" not in page.css
    assert "@font-face" not in page.css
    assert "<script" not in html.lower()


def test_html_charts(report: dict[str, Any]) -> None:
    page = parse(render_html(MockReport.from_json(report)))
    assert len(page.all("svg")) == 2
    rects = page.all("rect")
    assert len(rects) == len(report["topics"]) + len(report["questions"])
    over = [r for r in rects if "over" in r["class"].split()]
    assert len(over) == 1
    for label in ("Inference serving", "84%", "0%", "100%", "6:13 / 5:00", "0:35 / 4:00", "8:00"):
        assert label in page.svg_text


def test_html_escapes_card_text(report: dict[str, Any]) -> None:
    html = render_html(MockReport.from_json(report))
    page = parse(html)
    assert "never run: <script>alert(1)</script>" in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "ring &amp; tree" in html
    for q in report["questions"]:
        for point in q["missed"]:
            assert point in page.text
    assert "Little's law: L = lambda * W" in page.text


def test_html_text_escapes_before_marking_up() -> None:
    out = str(html_text("**<b>x</b>** and `<i>` and *y* & <img src=x onerror=alert(1)>"))
    assert out == (
        "<p><strong>&lt;b&gt;x&lt;/b&gt;</strong> and <code>&lt;i&gt;</code> and <em>y</em> &amp; "
        "&lt;img src=x onerror=alert(1)&gt;</p>"
    )


def test_html_text_lists_tables_and_code() -> None:
    out = str(html_text("Intro:\n\n- a\n- b\n\n| k | v |\n| --- | --- |\n| x | 1 |\n\n```\na < b\n```"))
    assert "<ul>\n<li>a</li>\n<li>b</li>\n</ul>" in out
    assert "<th>k</th>\n<th>v</th>" in out and "<td>x</td>\n<td>1</td>" in out
    assert "<pre><code>a &lt; b\n</code></pre>" in out


def test_html_text_makes_no_link_and_loads_no_image() -> None:
    out = str(html_text("see [x](http://e.com), ![i](http://e.com/a.png) and <http://e.com>"))
    assert out == "<p>see [x](http://e.com), ![i](http://e.com/a.png) and &lt;http://e.com&gt;</p>"


def _expected_div(html: str) -> str:
    start = html.index('<div class="text expected">') + len('<div class="text expected">')
    return html[start : html.index("</div>", start)]


def test_every_bundled_answer_renders_as_markdown_it_renders_it(report: dict[str, Any]) -> None:
    """The report shows each card's expected answer as markdown-it-py renders it: bold around code included."""
    from markdown_it import MarkdownIt

    from tests.conftest import bundled_cards

    reference = MarkdownIt("commonmark", {"html": False}).enable("table").disable(["image", "link", "autolink"])
    one = copy.deepcopy(report)
    one["questions"] = one["questions"][:1]
    bold_code = 0
    for card in bundled_cards().values():
        if not card.answer.strip():
            continue
        one["questions"][0]["expected"] = card.answer
        shown = _expected_div(render_html(MockReport.from_json(one)))
        assert shown == reference.render(card.answer.strip("\n")).strip(), card.id
        assert "**" not in re.sub(r"<code>.*?</code>", "", shown, flags=re.S), card.id
        bold_code += "<strong><code>" in shown
    assert bold_code > 0  # bold text that opens with code: hand-written patterns left its ** showing


def test_html_long_text_is_wrapped(report: dict[str, Any]) -> None:
    long_word = "x" * 3000
    report["questions"][0]["prompt"] = f"{long_word} " * 3
    report["questions"][0]["answer"] = long_word
    html = render_html(MockReport.from_json(report))
    assert long_word in html
    css = parse(html).css
    assert "overflow-wrap: anywhere" in css
    assert "pre-wrap" in css


def test_html_shows_the_follow_up_and_the_overrides_with_their_question(report: dict[str, Any]) -> None:
    html = render_html(MockReport.from_json(report))
    page = parse(html)
    assert {"q1", "q10"} <= {a.get("id", "") for _, a in page.tags}
    first, rest = html.split('id="q2"', 1)
    assert "Follow-up: a deeper question · 100%" in first and "a deeper question" not in rest
    assert "your reason: I said ring is bandwidth optimal" in rest and "graded 0%" in rest


def test_a_mock_finished_far_under_its_minutes_says_how_much_was_answered(report: dict[str, Any]) -> None:
    report["status"] = "finished"
    report["ended_at"] = report["started_at"]  # in no time at all
    report["answered"] = 9
    report["said"] = 2
    report["total"] = 9
    md = render_markdown(MockReport.from_json(report))
    assert "finished far under time: 2 of 9 questions answered with something, 7 blank answers among them" in md
    report["ended_at"] = None  # the time from the questions' own clocks: 45 minutes and more
    assert "far under time" not in render_markdown(MockReport.from_json(report))


# ---------------------------------------------------------------------------
# Chart geometry
# ---------------------------------------------------------------------------


def test_topic_bars_are_proportional_to_score() -> None:
    chart = topic_chart(
        [
            {"topic": "a", "title": "A", "score": 0.5, "questions": 2},
            {"topic": "b", "title": "B", "score": 1.0, "questions": 1},
            {"topic": "c", "title": "C", "score": 0.0, "questions": 1},
        ]
    )
    half, full, zero = chart.bars
    assert half.width == pytest.approx(full.width / 2)
    assert zero.width == 0
    assert half.x == full.x
    assert full.x + full.width == pytest.approx(chart.ticks[-1].x)
    assert [t.label for t in chart.ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert [b.value_text for b in chart.bars] == ["50%", "100%", "0%"]
    assert half.y < full.y < zero.y
    assert chart.height > zero.y + zero.height


def test_topic_score_is_clamped_and_long_titles_shortened() -> None:
    (bar,) = topic_chart([{"topic": "t", "title": "A very long topic title that goes on and on", "score": 1.7}]).bars
    (full,) = topic_chart([{"topic": "t", "title": "T", "score": 1.0}]).bars
    assert bar.width == full.width
    assert bar.label.endswith("…") and len(bar.label) <= 26
    assert bar.title.startswith("A very long topic title that goes on and on")


def test_time_bars_mark_over_budget() -> None:
    chart = time_chart(
        [
            {"position": 1, "title": "A", "budget_s": 240, "spent_s": 120, "status": "answered"},
            {"position": 2, "title": "B", "budget_s": 240, "spent_s": 300, "status": "answered"},
            {"position": 3, "title": "C", "budget_s": 240, "spent_s": 0, "status": "unanswered"},
        ]
    )
    under, over, unreached = chart.bars
    assert under.css_class == "bar" and unreached.css_class == "bar"
    assert over.css_class == "bar over" and over.value_class == "value over"
    assert under.width == pytest.approx(over.width * 120 / 300)
    assert unreached.width == 0
    assert over.value_text == "5:00 / 4:00"
    # The budget outline ends at the same x for equal budgets, and the over-budget bar goes past it.
    ends = {b.outline.split("H")[1].split("V")[0] for b in chart.bars}
    assert len(ends) == 1
    assert over.x + over.width > float(ends.pop())
    # The axis covers the longest bar, with ticks in m:ss.
    assert chart.ticks[0].label == "0:00"
    assert chart.ticks[-1].x >= over.x + over.width


def test_clock() -> None:
    assert clock(0) == "0:00"
    assert clock(195.4) == "3:15"
    assert clock(59.6) == "1:00"
    assert clock(3725) == "62:05"


# ---------------------------------------------------------------------------
# Empty and odd reports
# ---------------------------------------------------------------------------


def test_empty_report_renders() -> None:
    md = render_markdown(MockReport.from_json(EMPTY))
    assert "0 answered, 0 skipped, 0 unanswered of 0" in md
    assert "ended early" in md
    assert "No questions were asked." in md
    assert TAG.search(md) is None
    page = parse(render_html(MockReport.from_json(EMPTY)))
    assert page.all("rect") == []
    assert "No questions were asked." in page.text
    assert "script" not in [name for name, _ in page.tags]


def test_empty_mapping_renders() -> None:
    assert render_markdown(MockReport.from_json({})).startswith("# Mock interview")
    assert "<h1>" in render_html(MockReport.from_json({}))


def test_missing_end_uses_time_spent(report: dict[str, Any]) -> None:
    odd = copy.deepcopy(report)
    odd["ended_at"] = None
    assert "45 of 45 minutes used" in render_markdown(MockReport.from_json(odd))


BREAKOUTS = [
    "<script>alert(1)</script>",
    "\\<script>alert(1)</script>",
    "``<img src=x onerror=alert(1)>`",
    "\\`<b>`",
    "````\n<script>alert(1)</script>",
    "```\n<script>alert(1)</script>",
    "```\ncode\n``` not a closing fence\n<script>alert(1)</script>",
    "```\ncode\n    ```\n<script>alert(1)</script>",
    "```a`b\n<script>alert(1)</script>",
    "~~~\n```\n<script>alert(1)</script>",
    "```<script>alert(1)</script>",
]


def _html_and_headings(markdown: str) -> tuple[list[str], list[str]]:
    """The raw HTML a CommonMark renderer would pass through, and the headings it finds."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    inline = [child for token in tokens for child in token.children or []]
    html = [t.content for t in [*tokens, *inline] if t.type.startswith("html")]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    return html, headings


@pytest.mark.parametrize("text", BREAKOUTS)
def test_markdown_report_lets_no_html_or_fence_out_of_card_text_or_answers(report: dict[str, Any], text: str) -> None:
    hostile = copy.deepcopy(report)
    for q in hostile["questions"]:
        q.update(prompt=text, answer=text, expected=text, title=text, missed=[text])
    for t in hostile["topics"]:
        t["title"] = text
    md = render_markdown(MockReport.from_json(hostile))
    html, headings = _html_and_headings(md)
    assert html == []
    assert headings.count("Your answer") == headings.count("Expected") == len(hostile["questions"])
    assert "Study next" in headings


# ---------------------------------------------------------------------------
# What the report says: abandoned mocks, short mocks, badge colours
# ---------------------------------------------------------------------------


def test_an_abandoned_mock_says_not_scored_not_zero() -> None:
    abandoned = {**EMPTY, "status": "abandoned", "score": None}
    md = render_markdown(MockReport.from_json(abandoned))
    assert "**Not scored** (no question answered)" in md and "abandoned" in md and "0%" not in md
    page = parse(render_html(MockReport.from_json(abandoned)))
    assert "not scored" in page.text and "0%" not in page.text


def test_a_mock_shorter_than_a_minute_counts_seconds() -> None:
    assert "20 seconds of 30 minutes used" in render_markdown(
        MockReport.from_json(EMPTY)
    )  # ended 20 s after it started
    assert "20 seconds of 30 min" in parse(render_html(MockReport.from_json(EMPTY))).text


def test_a_question_badge_is_coloured_by_its_score(report: dict[str, Any]) -> None:
    page = parse(render_html(MockReport.from_json(report)))
    badges = [a["class"].split()[1] for a in page.all("span") if a.get("class", "").startswith("badge")]
    expected = [
        ("pass" if q["score"] >= 0.6 else "fail") if q["status"] == "answered" else q["status"]
        for q in report["questions"]
    ]
    assert badges == expected and "fail" in badges and "pass" in badges
    css = page.css
    assert ".badge.fail { color: var(--over); }" in css and ".badge.pass { color: var(--good); }" in css
