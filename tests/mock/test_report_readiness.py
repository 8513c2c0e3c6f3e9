"""A mock's report shows readiness on the interview date: overall stop-now and with-plan, and the three furthest topics."""

import datetime as dt
import json
import random

from drill import paths
from drill.cli import main
from drill.config.settings import load_settings
from drill.mock.record import MockRecorder
from drill.mock.render import render_html, render_markdown
from drill.mock.report import build_report
from drill.mock.report_record import MockReport
from drill.workspace import Workspace
from tests.mock.test_render import FIXTURE
from tests.readiness_world import START, make_world, study

TODAY = START + dt.timedelta(days=3)
DATE = START + dt.timedelta(days=12)


def test_the_readiness_line_names_both_figures_and_the_three_furthest_topics(tmp_path, monkeypatch, capsys):
    data = make_world(tmp_path, monkeypatch)
    rng = random.Random(4)
    for offset in range(3):
        study(data, START + dt.timedelta(days=offset), rng)
    assert main(["plan", "--data-dir", str(data), "--date", DATE.isoformat(), "--today", TODAY.isoformat()]) == 0
    capsys.readouterr()
    workspace = Workspace(data, [paths.cards_dir()], settings=load_settings())
    figures = workspace.readiness(TODAY).as_json()
    line = workspace.readiness_line(TODAY)
    workspace.close()
    overall = figures["overall"]
    assert line.startswith(
        f"Readiness on {DATE.isoformat()} (9 days left): {overall['stop_now']:.0%} if you stop now, "
        f"{overall['with_plan']:.0%} with the plan (target 90%); furthest from the target: "
    )
    named = line.split("furthest from the target: ")[1].split(", ")
    assert named == [f"{t['title']} {t['stop_now']:.0%}" for t in figures["topics"][:3]]


def test_a_mock_report_shows_the_line_when_a_date_is_set_and_none_without():
    report = json.loads(FIXTURE.read_text(encoding="utf-8"))
    line = "Readiness on 2026-12-15 (17 days left): 41% if you stop now, 93% with the plan (target 90%)"
    assert line not in render_markdown(MockReport.from_json(report))
    with_line = {**report, "readiness": line}
    assert f"\n\n{line}\n" in render_markdown(MockReport.from_json(with_line))
    assert line in render_html(MockReport.from_json(with_line))
    built = build_report(
        {"id": 1, "started_at": "2026-11-28T10:00:00", "minutes": 30, "status": "finished"}, [], {}, {}, {}, line
    )
    assert built.readiness == line


class _Store:
    """What a MockRecorder writes to, kept in memory."""

    def __init__(self):
        self.finished = None

    def close_abandoned_mocks(self, now):
        pass

    def start_mock(self, at, minutes, plan):
        return 1

    def save_mock_answer(self, mock_id, card_id, **row):
        pass

    def mock(self, mock_id):
        return [type("Row", (), {"started_at": "2026-11-28T10:00:00"})()]

    def finish_mock(self, mock_id, ended, status, score, report):
        self.finished = report


def test_the_recorder_asks_for_the_line_when_the_mock_ends():
    from drill.mock.plan import MockPlan
    from drill.mock.run import MockRun

    plan = MockPlan(minutes=30, questions=[])
    run = MockRun(plan, {}, lambda: 0.0)
    store = _Store()
    asked = []
    recorder = MockRecorder(
        store,
        run,
        plan,
        {},
        lambda: dt.datetime(2026, 11, 28, 10, 30),
        lambda: dt.date(2026, 11, 28),
        readiness_after=lambda: asked.append(1) or "Readiness on 2026-12-15 (17 days left): 41% if you stop now",
    )
    assert asked == []  # read at the end, after the mock's own answers
    report = recorder.finish()
    assert asked == [1] and report.readiness.startswith("Readiness on 2026-12-15")
