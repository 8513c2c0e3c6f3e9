"""A diagnosis card's right choice must not stand out by its length or by echoing the evidence."""

from __future__ import annotations

import pytest

from drill.cards.choices import choices_in_export_order
from drill.cards.fairness import fairness_warnings, longest_pick_figures
from drill.cards.loader import load_decks
from drill.cards.model import Card
from drill.cli import main

EVIDENCE = "ncu: smsp__warp_issue_stalled_long_scoreboard 61 %\nl1tex__data_bank_conflicts_pipe_lsu 0"


def diagnosis(choices: list[str], correct: str, evidence: str = EVIDENCE, card_id: str = "c") -> Card:
    return Card(
        id=card_id,
        kind="diagnosis",
        topic="gpu-arch",
        prompt="What bounds it?",
        answer="Because.",
        fields={"evidence": evidence, "choices": choices, "correct": correct},
    )


def test_a_fair_card_has_no_warning() -> None:
    card = diagnosis(["memory latency", "compute-bound", "launch overhead", "bank pressure"], "memory latency")
    assert fairness_warnings(card) == []


def test_a_right_choice_far_longer_than_the_others_is_warned() -> None:
    card = diagnosis(
        ["memory latency: loads wait on global memory with few warps to hide it", "compute", "launch", "banks"],
        "memory latency: loads wait on global memory with few warps to hide it",
    )
    (warning,) = fairness_warnings(card)
    assert "median length" in warning


def test_the_length_limit_is_on_the_median_of_the_others() -> None:
    # 15 characters against a median of 10: 1.5x exactly is allowed
    card = diagnosis(["a" * 15, "b" * 10, "c" * 10, "d" * 40], "a" * 15, evidence="x")
    assert fairness_warnings(card) == []
    card = diagnosis(["a" * 16, "b" * 10, "c" * 10, "d" * 40], "a" * 16, evidence="x")
    assert len(fairness_warnings(card)) == 1


def test_a_right_choice_alone_in_echoing_the_evidence_is_warned() -> None:
    card = diagnosis(["scoreboard stalls", "compute-bound", "launch overhead", "tail effect"], "scoreboard stalls")
    (warning,) = fairness_warnings(card)
    assert "'scoreb'" in warning


def test_an_echo_shared_with_a_wrong_choice_is_no_hint() -> None:
    card = diagnosis(
        ["scoreboard stalls", "compute-bound", "bank conflicts", "scoreboard on tensor pipe"], "scoreboard stalls"
    )
    assert fairness_warnings(card) == []


def test_a_word_ending_differently_still_echoes() -> None:
    card = diagnosis(
        ["the step mutates inputs", "graph capture fails", "too many shapes seen", "a slow host loop"],
        "the step mutates inputs",
        evidence="skipping cudagraphs due to mutated inputs",
    )
    (warning,) = fairness_warnings(card)
    assert "'mutate'" in warning


def test_the_longest_pick_figures_count_ties_as_a_share() -> None:
    cards = [
        diagnosis(["long answer", "short", "tiny"], "long answer", card_id="a"),  # strictly longest: 1
        diagnosis(["aaaa", "bbbb", "cc", "dd"], "aaaa", card_id="b"),  # tied with one other: 1/2
        diagnosis(["x", "longer one"], "x", card_id="c"),  # never picked: 0
    ]
    figures = longest_pick_figures(cards)
    assert figures.cards == 3
    assert figures.strictly_longest == 1
    assert figures.longest_pick_score == pytest.approx((1 + 0.5 + 0) / 3)
    assert figures.chance_score == pytest.approx((1 / 3 + 1 / 4 + 1 / 2) / 3)


def test_check_prints_warnings_and_fails_only_when_strict(write_deck, capsys) -> None:
    deck = write_deck(
        """
        deck: giveaways
        cards:
          - id: giveaway
            kind: diagnosis
            topic: gpu-arch
            prompt: What bounds it?
            evidence: |
              smsp__warp_issue_stalled_long_scoreboard 61 %
            choices:
              - compute-bound
              - scoreboard stalls from loads that miss in L1 and wait on DRAM
              - launch overhead
            correct: scoreboard stalls from loads that miss in L1 and wait on DRAM
            answer: Loads wait.
            rubric: [a point]
            sources: [FACTS.md]
        """
    )
    assert main(["check", str(deck)]) == 0
    out = capsys.readouterr().out
    assert f"{deck}:3: giveaway: warning: the correct choice is" in out
    assert "giveaway: warning: only the correct choice shares 'scoreb'" in out
    assert main(["check", "--strict", str(deck)]) == 1


def test_a_warned_card_still_loads(write_deck) -> None:
    deck = write_deck(
        """
        deck: giveaways
        cards:
          - id: giveaway
            kind: diagnosis
            topic: gpu-arch
            prompt: What bounds it?
            evidence: scoreboard
            choices: [compute-bound, scoreboard stalls]
            correct: scoreboard stalls
            answer: Loads wait.
            rubric: [a point]
            sources: [FACTS.md]
        """
    )
    decks = load_decks([deck], deep=True)
    assert list(decks.cards) == ["giveaway"]
    assert decks.problems == []
    (warning,) = decks.warnings
    assert "echo" in warning.message


def test_export_order_is_a_permutation_fixed_by_the_card_id() -> None:
    choices = ["one", "two", "three", "four", "five"]
    card = diagnosis(choices, "one", card_id="some-card")
    order = choices_in_export_order(card)
    assert sorted(order) == sorted(choices)
    assert order == choices_in_export_order(diagnosis(list(choices), "one", card_id="some-card"))
    orders = {tuple(choices_in_export_order(diagnosis(choices, "one", card_id=f"card-{i}"))) for i in range(20)}
    assert len(orders) > 5


def test_the_bundled_diagnosis_cards_are_fair(bundled_decks) -> None:
    diagnosis_cards = [c for c in bundled_decks.cards.values() if c.kind == "diagnosis"]
    figures = longest_pick_figures(diagnosis_cards)
    assert figures.cards >= 90
    assert figures.strictly_longest <= 0.25 * figures.cards
    assert figures.longest_pick_score <= figures.chance_score + 0.05
    assert [str(w) for w in bundled_decks.warnings] == []


def test_bundled_exports_do_not_put_the_right_choice_first_as_a_rule() -> None:
    cards = [c for c in load_decks().cards.values() if c.kind == "diagnosis"]
    first = sum(choices_in_export_order(c)[0] == c.fields["correct"] for c in cards)
    # about one card in five by chance (four to six choices); the deck order put it first in 63 of 96
    assert first <= 0.3 * len(cards)
