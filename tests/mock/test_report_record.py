"""A mock's report as a record: kept as JSON, read back as the same record, an older report's gaps read as empty; a
round's report within it likewise, one that cannot be read taken as none."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from drill.mock.render import render_markdown
from drill.mock.report import build_report
from drill.mock.report_record import DimensionLine, MockReport, RoundReport, RoundVerdict, StageLine

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


# A round's mock as the database held it before its round report was a record (the text `drill` wrote then, laid
# out on lines here): the round report with its plan, as `{**build_round_report(...), "plan": plan}` kept it.
KEPT_ROUND_MOCK = """{"id": 7, "started_at": "2026-05-10T12:00:00", "ended_at": "2026-05-10T12:40:00", "minutes": 40,
"status": "finished", "score": 0.7, "evidence": 0.7, "answered": 3, "said": 3, "skipped": 0, "unanswered": 0,
"total": 3, "topics": [], "questions": [], "study_next": [], "readiness": null,
"round": {"kind": "debug", "title": "sc decode", "source_id": "sc-decode", "verdict": "lean",
"reason": "graded 70% over 3 stages (3 answered); held to lean: debugging below 50%", "evidence": 0.7000000000000001,
"reached": 3, "stages_total": 3, "stages": [
{"number": 1, "type": "clarify", "dimension": "clarifying", "twist": false, "status": "answered", "evidence": 1.0,
"hints": []},
{"number": 2, "type": "estimate", "dimension": "estimation", "twist": false, "status": "answered", "evidence": 0.9,
"hints": []},
{"number": 3, "type": "diagnose", "dimension": "debugging", "twist": false, "status": "answered", "evidence": 0.2,
"hints": ["a narrower question with a hint (gaps between kernels from CPU launch overhead, closed by CUDA graphs)"]},
{"number": 4, "type": "twist", "dimension": "estimation", "twist": true, "status": "answered", "evidence": 0.8,
"hints": []}],
"dimensions": [
{"dimension": "clarifying", "verdict": "pass", "evidence": 1.0, "reason": "stage 1 (clarify) 100%"},
{"dimension": "estimation", "verdict": "pass", "evidence": 0.8500000000000001,
"reason": "stage 2 (estimate) 90%, stage 4 (twist) 80%"},
{"dimension": "design", "verdict": "not assessed", "evidence": null, "reason": "no stage of it was answered"},
{"dimension": "debugging", "verdict": "fail", "evidence": 0.2, "reason": "stage 3 (diagnose) 20%"},
{"dimension": "communication", "verdict": "not assessed", "evidence": null, "reason": "no stage of it was answered"}],
"hints": ["stage 3 (diagnose): a narrower question with a hint (gaps between kernels from CPU launch overhead, closed \
by CUDA graphs)"],
"next_asked": "every stage and twist was put: the debrief, then the candidate's questions", "timing": "",
"plan": {"kind": "debug", "source_id": "sc-decode", "title": "sc decode",
"draw": {"model": "llama-3-8b", "gpu": "h100-sxm", "b": 16, "c": 4096},
"stages": [{"card_id": "sc-decode#1", "number": 1, "type": "clarify", "dimension": "clarifying", "twist": false,
"minutes": 5}, {"card_id": "sc-decode#2", "number": 2, "type": "estimate", "dimension": "estimation", "twist": false,
"minutes": 10}, {"card_id": "sc-decode#3", "number": 3, "type": "diagnose", "dimension": "debugging", "twist": false,
"minutes": 15}, {"card_id": "sc-decode#4", "number": 4, "type": "twist", "dimension": "estimation", "twist": true,
"minutes": 5}], "timed": true}}}"""


def test_a_round_kept_before_it_was_a_record_reads_back_as_one_and_is_kept_the_same():
    report = MockReport.from_json(json.loads(KEPT_ROUND_MOCK))
    kept_round = report.round
    assert kept_round is not None
    assert kept_round.verdict is RoundVerdict.LEAN and kept_round.source_id == "sc-decode"
    assert (kept_round.reached, kept_round.stages_total, kept_round.timing) == (3, 3, "")
    assert [s.status for s in kept_round.stages] == ["answered"] * 4 and kept_round.stages[3].twist
    assert kept_round.stages[2].hints == (
        "a narrower question with a hint (gaps between kernels from CPU launch overhead, closed by CUDA graphs)",
    )
    dims = {d.dimension: d for d in kept_round.dimensions}
    assert dims["debugging"] == DimensionLine("debugging", RoundVerdict.FAIL, 0.2, "stage 3 (diagnose) 20%")
    assert dims["design"].verdict is RoundVerdict.NOT_ASSESSED and dims["design"].evidence is None
    assert kept_round.plan is not None and kept_round.plan["draw"] == {
        "model": "llama-3-8b",
        "gpu": "h100-sxm",
        "b": 16,
        "c": 4096,
    }
    # kept again, it is the very same JSON: a report read and kept loses nothing
    assert json.loads(json.dumps(report.as_json())) == json.loads(KEPT_ROUND_MOCK)


def test_a_round_record_survives_the_database_text():
    line = StageLine(2, "estimate", "estimation", False, "answered", 0.9, ("a hint",))
    kept_round = RoundReport(
        kind="serving",
        title="chat",
        source_id="sc-chat",
        verdict=RoundVerdict.PASS,
        reason="graded 90%",
        evidence=0.9,
        reached=1,
        stages_total=1,
        stages=(line,),
        dimensions=(DimensionLine("estimation", RoundVerdict.PASS, 0.9, "stage 2 (estimate) 90%"),),
        hints=("stage 2 (estimate): a hint",),
        next_asked="the debrief",
    )
    report = replace(MockReport.from_json(kept()), round=kept_round)
    stored = json.loads(json.dumps(report.as_json()))
    assert "plan" not in stored["round"]  # a round built with no plan keeps none
    assert MockReport.from_json(stored) == report


@pytest.mark.parametrize(
    "kept_round",
    [
        "lean",
        ["pass"],
        {"verdict": "maybe", "stages": []},
        {"stages": []},  # no verdict at all
        {"verdict": "pass", "dimensions": [{"dimension": "design", "verdict": "splendid"}]},
    ],
    ids=["text", "list", "unknown verdict", "no verdict", "unknown dimension verdict"],
)
def test_a_malformed_kept_round_reads_as_no_round_report_and_the_rest_of_the_report_stays(kept_round):
    data = json.loads(KEPT_ROUND_MOCK)
    data["round"] = kept_round
    report = MockReport.from_json(data)
    assert report.round is None
    assert (report.id, report.score, report.answered, report.total, report.status) == (7, 0.7, 3, 3, "finished")
    assert "Round:" not in render_markdown(report)


def test_an_older_rounds_missing_fields_read_as_empty_and_lines_that_are_no_mapping_are_left_out():
    data = json.loads(KEPT_ROUND_MOCK)
    kept_round = data["round"]
    del kept_round["timing"]
    del kept_round["plan"]
    del kept_round["hints"]
    kept_round["stages"] = ["stage 1", *kept_round["stages"][:1]]
    kept_round["dimensions"] = [kept_round["dimensions"][0], 3]
    report = MockReport.from_json(data).round
    assert report is not None
    assert (report.timing, report.plan, report.hints) == ("", None, ())
    assert [s.number for s in report.stages] == [1] and [d.dimension for d in report.dimensions] == ["clarifying"]
