"""Whether a learner's file changed the code that judges it (drill/judge/tamper.py), on a CPU."""

import statistics

from drill.judge import tamper
from drill.judge.tamper import Fingerprint, tampered_words
from drill.kernel import verdict


def test_nothing_changed_is_nothing_named():
    assert Fingerprint().changed() == []


def test_a_replaced_function_a_replaced_method_and_a_new_code_object_are_each_named(monkeypatch):
    watch = Fingerprint()
    monkeypatch.setattr(statistics, "median", min)
    monkeypatch.setattr(verdict.Verdict, "exit_code", lambda self: 0)
    assert watch.changed() == ["drill.kernel.verdict.Verdict.exit_code", "statistics.median"]
    monkeypatch.undo()
    assert watch.changed() == []

    original = verdict.impossible_reason.__code__
    verdict.impossible_reason.__code__ = (lambda t, slack=0.05: "").__code__  # the same function object, re-coded
    try:
        assert watch.changed() == ["drill.kernel.verdict.impossible_reason"]
    finally:
        verdict.impossible_reason.__code__ = original
    assert watch.changed() == []


def test_a_removed_function_is_named_and_new_names_are_not(monkeypatch):
    watch = Fingerprint()
    monkeypatch.delattr(tamper, "tampered_words")
    monkeypatch.setattr(statistics, "a_helper_of_the_learners", len, raising=False)
    assert watch.changed() == ["drill.judge.tamper.tampered_words"]


def test_the_message_names_the_first_few_and_counts_the_rest():
    words = tampered_words([f"m.f{i}" for i in range(7)])
    assert words.startswith("the file changed the judge's own code (m.f0, m.f1, m.f2, m.f3, m.f4 and 2 more)")
    assert "nothing from this run is scored" in words and "replaced" in words
