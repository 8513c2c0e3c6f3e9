"""The deck check of parameterised cards at each draw it makes: a draw that breaks one card is reported at that
card's file and line, with the draw, while the cards around it pass."""

from drill.cards.loader import load_decks
from drill.cli import main

DECK = """\
deck: Draws
cards:
  - id: fine-before
    kind: memory_ledger
    topic: gpu-arch
    prompt: "{{ n }} warps of 32 threads: how many threads?"
    answer: "{{ n * 32 }} threads."
    sources: [s]
    params:
      n: {choices: [2, 4, 8]}
    answers:
      - {label: threads, expr: "n * 32", unit: count}
  - id: breaks-at-some-draws
    kind: memory_ledger
    topic: gpu-arch
    prompt: "{{ n }} warps share 12 slots, less the 4 reserved: slots per warp?"
    answer: "12 / ({{ n }} - 4)."
    sources: [s]
    params:
      n: {choices: OPTIONS}
    answers:
      - {label: slots per warp, expr: "12 / (n - 4)", unit: count, tolerance: 0.01}
  - id: fine-after
    kind: memory_ledger
    topic: gpu-arch
    prompt: "{{ n }} warps of {{ w }} threads: how many threads?"
    answer: "{{ n * w }} threads."
    sources: [s]
    params:
      n: {choices: [2, 4, 8]}
      w: {range: [32, 64], step: 32}
    answers:
      - {label: threads, expr: "n * w", unit: count}
"""
BREAKING_OPTIONS = "[2, 4, 8]"
BROKEN_LINE = 13  # the line of `- id: breaks-at-some-draws` in DECK
# n = 4 divides by zero and n = 2 gives a negative count; n = 8 is fine: only the corner draws find both
EXPECTED = sorted(
    [
        "answers[0].expr: gives a negative value -6 (with n=2)",
        "answers[0].expr: ZeroDivisionError: division by zero (with n=4)",
    ]
)


def deck_with(options: str) -> str:
    """DECK with the options of the middle card's `n`."""
    return DECK.replace("OPTIONS", options)


def test_a_draw_that_breaks_one_card_is_reported_at_its_file_line_and_card(write_deck):
    deck = write_deck(deck_with(BREAKING_OPTIONS))
    assert DECK.splitlines()[BROKEN_LINE - 1] == "  - id: breaks-at-some-draws"

    decks = load_decks([deck], deep=True)

    assert sorted(decks.cards) == ["breaks-at-some-draws", "fine-after", "fine-before"]
    assert sorted((p.path, p.line, p.card_id, p.message) for p in decks.problems) == [
        (str(deck), BROKEN_LINE, "breaks-at-some-draws", message) for message in EXPECTED
    ]


def test_drill_check_prints_the_broken_draw_as_path_line_card_and_fails(write_deck, capsys):
    deck = write_deck(deck_with(BREAKING_OPTIONS))

    assert main(["check", str(deck)]) == 1

    out, err = capsys.readouterr()
    assert sorted(out.splitlines()) == [f"{deck}:{BROKEN_LINE}: breaks-at-some-draws: {m}" for m in EXPECTED]
    assert "2 problems in 3 good cards" in err


def test_the_same_card_with_its_breaking_options_left_out_passes(write_deck):
    deck = write_deck(deck_with("[8, 16]"))

    decks = load_decks([deck], deep=True)

    assert decks.problems == []
