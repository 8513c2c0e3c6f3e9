"""A mock's report as a record: kept as JSON, read back as the same record, an older report's gaps read as empty."""

from __future__ import annotations

import json
from pathlib import Path

from drill.mock.report import build_report
from drill.mock.report_record import MockReport

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mock_report.json"


def kept() -> dict[str, object]:
    data: dict[str, object] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def test_a_kept_report_reads_back_as_the_record_it_was_kept_from():
    report = MockReport.from_json(kept())
    stored = json.loads(json.dumps(report.as_json()))  # through the database's text
    assert MockReport.from_json(stored) == report


def test_a_built_report_keeps_every_field_it_was_built_with():
    mock = {"id": 3, "started_at": "2026-11-28T10:00:00", "minutes": 30, "status": "quit"}
    slot = {
        "position": 1,
        "card_id": "gone",
        "topic": "serving",
        "kind": "concept",
        "budget_s": 300.0,
        "spent_s": 120.0,
        "status": "answered",
        "score": 0.5,
        "evidence": 0.25,
        "answer": {"typed": "batch it"},
        "missed": ["the queue"],
    }
    built = build_report(mock, [slot], {}, {"serving": "Inference serving"}, {}, "Readiness line")
    assert (built.id, built.status, built.answered, built.total, built.readiness) == (3, "quit", 1, 1, "Readiness line")
    assert built.score == 0.5 and built.evidence == 0.25
    [question] = built.questions
    assert question["title"] == "Inference serving" and question["answer"] == "batch it"
    assert question["prompt"] == "(this card is no longer in the decks)" and question["missed"] == ["the queue"]
    assert MockReport.from_json(json.loads(json.dumps(built.as_json()))) == built


def test_a_quick_mock_keeps_no_hard_mode_or_round_fields():
    data = MockReport.from_json(kept()).as_json()
    assert "hard" not in data and "round" not in data
    assert data["readiness"] is None  # no interview date was set


def test_an_older_report_reads_its_missing_fields_as_empty():
    data = kept()
    del data["answered"]
    questions = data["questions"]
    assert isinstance(questions, list)
    del questions[0]["status"]
    report = MockReport.from_json(data)
    assert report.answered == 0 and report.said == 0  # "said" is read as the answered count when missing
    assert report.evidence is None  # this fixture predates the graded evidence
    assert report.questions[0]["status"] == "unanswered" and report.questions[0]["overrides"] == []
    assert report.questions[0]["follow_up"] is not None
    assert report.questions[0]["follow_up"]["score"] == 1.0


def test_an_empty_mapping_is_an_empty_report_with_no_id():
    report = MockReport.from_json({})
    assert report.id is None and report.score is None and report.questions == [] and report.total == 0


def test_a_figure_that_is_no_finite_number_reads_as_zero():
    report = MockReport.from_json({"minutes": "lots", "score": float("nan"), "total": True})
    assert (report.minutes, report.score, report.total) == (0, 0.0, 0)
