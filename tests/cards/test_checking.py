"""Shape traces, diagnosis choices, their deck checks, and the suggested grade."""

import pytest

from drill.cards.checking import (
    ShapeError,
    case_matters,
    check_choice,
    check_diagnosis_card,
    check_shape_card,
    check_shape_steps,
    normalise_shape,
    suggest_grade,
)
from drill.cards.model import Card
from tests.conftest import bundled_cards

ALIASES = {"Dh": ["D/H", "head_dim"], "D": ["H*Dh"]}

# typed text, aliases, dimensions
SHAPE_TABLE = [
    ("(B, S, D)", None, ("B", "S", "D")),
    ("[B,S,D]", None, ("B", "S", "D")),
    ("B, S, D", None, ("B", "S", "D")),
    ("  ( B ,S,  D )  ", None, ("B", "S", "D")),
    ("B×S×D", None, ("B", "S", "D")),
    ("B x S x D", None, ("B", "S", "D")),
    ("BxSxD", None, ("B", "S", "D")),
    ("B*S*D", None, ("B", "S", "D")),
    ("B S D", None, ("B", "S", "D")),
    ("(B*S*D)", None, ("B*D*S",)),  # bracketed without commas: one flattened dimension
    ("(B*S, D)", None, ("B*S", "D")),
    ("(B·S, D)", None, ("B*S", "D")),
    ("(B×S, D)", None, ("B*S", "D")),  # with commas, × multiplies
    ("(S*B, D)", None, ("B*S", "D")),  # factor order does not matter
    ("(B, H, S, D / H)", None, ("B", "H", "S", "D/H")),
    ("(B, H, S, (D/H))", None, ("B", "H", "S", "D/H")),
    ("(B, H, S, D/H)", ALIASES, ("B", "H", "S", "Dh")),
    ("(B, H, S, head_dim)", ALIASES, ("B", "H", "S", "Dh")),
    ("(B, S, H*Dh)", ALIASES, ("B", "S", "D")),
    ("(B, S, Dh*H)", ALIASES, ("B", "S", "D")),
    ("(B, S, H*Dh)", None, ("B", "S", "Dh*H")),  # H*Dh is D only where the card says so
    ("(B, S, H*head_dim)", ALIASES, ("B", "S", "D")),
    ("Q: (B, S, D)", None, ("B", "S", "D")),
    ("Q = (B, S, D)", None, ("B", "S", "D")),
    ("torch.Size([2, 3])", None, ("2", "3")),
    ("(B,)", None, ("B",)),
    ("()", None, ()),
    ("(32768)", None, ("32768",)),
    ("32_768", None, ("32768",)),
    ("(256, 128)", None, ("256", "128")),
    ("256,128", None, ("256", "128")),  # never a thousands separator
    ("4096 x 8192", None, ("4096", "8192")),
    ("4096x8192", None, ("4096", "8192")),
    ("(2**10)", None, ("2^10",)),
    ("(B*S/2)", None, ("B*S/2",)),
    ("B*S/2", None, ("B*S/2",)),
    ("(ceil(N/256), 256)", None, ("ceil(N/256)", "256")),
    ("(..., D)", None, ("...", "D")),
    ("(B, S, max_len)", None, ("B", "S", "max_len")),
    ("(B, γ + 1, V)", {"K": ["γ", "gamma"]}, ("B", "K+1", "V")),
    ("(B, gamma+1, V)", {"K": ["γ", "gamma"]}, ("B", "K+1", "V")),
]


@pytest.mark.parametrize("text, aliases, dims", SHAPE_TABLE, ids=[t for t, *_ in SHAPE_TABLE])
def test_normalise_shape(text, aliases, dims):
    assert normalise_shape(text, aliases) == dims


def test_case_is_kept_unless_folded():
    assert normalise_shape("(b, s, d)") == ("b", "s", "d")
    assert normalise_shape("(b, s, d)", fold_case=True) == normalise_shape("(B, S, D)", fold_case=True)


@pytest.mark.parametrize(
    "text, says",
    [
        ("(B, S, D", "unbalanced"),
        ("B, S, D)", "closing bracket"),
        ("(B,,S)", "empty dimension"),
        ("(D/)", "ends with an operator"),
        ("(B, S @ D)", "cannot read"),
        ("(B S, D)", "unexpected 'S'"),
        ("( , )", "empty dimension"),
        ("", "no shape"),
        ("   ", "no shape"),
        ("x" * 600, "longer than"),
    ],
)
def test_unreadable_shapes_say_why(text, says):
    with pytest.raises(ShapeError, match=says):
        normalise_shape(text)


def shape_card(steps, aliases=None, given="X: (B, S, D); H heads; Dh = D/H") -> Card:
    fields = {"given": given, "steps": steps}
    if aliases is not None:
        fields["aliases"] = aliases
    return Card(id="s", kind="shape_trace", topic="transformer-shapes", prompt="?", answer="!", fields=fields)


ATTENTION = shape_card(
    [
        {"label": "Q = X·Wq", "shape": "(B, S, D)"},
        {"label": "Q split into heads", "shape": "(B, H, S, Dh)"},
        {"label": "scores", "shape": "(B, H, S, S)"},
    ],
    aliases={"Dh": ["D/H"]},
)


def test_check_shape_steps_marks_each_step():
    results = check_shape_steps(ATTENTION, ["B,S,D", "(B, H, S, D / H)", "(B, H, S, Dh)"])
    assert [r.ok for r in results] == [True, True, False]
    assert results[2].expected == "(B, H, S, S)" and results[2].given == "(B, H, S, Dh)"
    assert [r.label for r in results] == ["Q = X·Wq", "Q split into heads", "scores"]


def test_check_shape_steps_counts_missing_blank_and_unreadable_answers_wrong():
    results = check_shape_steps(ATTENTION, ["", "(B, H, S"])
    assert [r.ok for r in results] == [False, False, False]
    assert results[2].given == ""


def test_lower_case_matches_on_a_card_without_case_clashes():
    assert not case_matters(ATTENTION)
    results = check_shape_steps(ATTENTION, ["(b, s, d)", "(b, h, s, d/h)", "b h s s"])
    assert [r.ok for r in results] == [True, True, True]


def test_prose_in_given_does_not_make_case_count():
    card = shape_card(
        [{"label": "latents", "shape": "(B, 4, H/8, W/8)"}], given="Diffusion: a diffusion model; B images"
    )
    assert not case_matters(card)
    assert check_shape_steps(card, ["(b, 4, h/8, w/8)"])[0].ok


def test_case_counts_when_given_names_d_beside_a_step_symbol_D():
    card = shape_card([{"label": "per head", "shape": "(B, H, S, d)"}], given="X: (B, S, D); d = D/H")
    assert case_matters(card)


def test_case_counts_on_a_card_that_uses_d_and_D():
    card = shape_card([{"label": "X", "shape": "(B, S, D)"}, {"label": "per head", "shape": "(B, H, S, d)"}])
    assert case_matters(card)
    assert check_shape_steps(card, ["(B, S, D)", "(B, H, S, d)"])[1].ok
    assert not check_shape_steps(card, ["(B, S, D)", "(B, H, S, D)"])[1].ok
    assert not check_shape_steps(card, ["(b, s, d)"])[0].ok


@pytest.mark.parametrize(
    "card, says",
    [
        (shape_card([]), "needs at least one step"),
        (shape_card(["(B, S, D)"]), "expected a mapping with `label` and `shape`"),
        (shape_card([{"label": "Q", "shape": "(B, S"}]), "steps[0].shape: unbalanced"),
        (shape_card([{"label": "Q", "shape": 4096}]), "`shape` must be non-empty text"),
        (shape_card([{"label": "", "shape": "(B)"}]), "`label` must be non-empty text"),
        (shape_card([{"label": "Q", "shape": "(B)", "hint": "x"}]), "unknown key 'hint'"),
        (shape_card([{"label": "Q", "shape": "(B)"}], aliases={"Dh": ["(D"]}), "aliases.Dh: '(D'"),
        (shape_card([{"label": "Q", "shape": "(B)"}], aliases={"Dh": ["Dh"]}), "is the symbol itself"),
        (shape_card([{"label": "Q", "shape": "(B)"}], aliases={"Dh": ["k"], "Dk": ["k"]}), "stands for both"),
        (shape_card([{"label": "Q", "shape": "(B)"}], aliases={"Dh": []}), "expected a symbol with a list"),
        (shape_card([{"label": "Q", "shape": "(B)"}], given=" "), "`given` must be non-empty text"),
        (shape_card([{"label": "s", "shape": "(N)", "also": "(N, 1)"}]), "`also` must be a non-empty list"),
        (shape_card([{"label": "s", "shape": "(N)", "also": []}]), "`also` must be a non-empty list"),
        (shape_card([{"label": "s", "shape": "(N)", "also": ["(N, 1"]}]), "steps[0].also[0]: unbalanced"),
        (shape_card([{"label": "s", "shape": "(N)", "also": [4096]}]), "steps[0].also[0]: must be non-empty"),
        (shape_card([{"label": "s", "shape": "(N)", "also": ["[N]"]}]), "repeats a shape"),
        (shape_card([{"label": "s", "shape": "(N)", "also": ["(1, N)", "1 x N"]}]), "also[1]: '1 x N' repeats"),
    ],
)
def test_check_shape_card_finds_problems(card, says):
    assert any(says in p for p in check_shape_card(card)), check_shape_card(card)


def test_check_shape_card_accepts_a_good_card():
    assert check_shape_card(ATTENTION) == []


SCALES = shape_card(
    [
        {"label": "activations", "shape": "(T, K)"},
        {"label": "weight scales", "shape": "(N)", "also": ["(1, N)", "(N, 1)"]},
    ],
    aliases={"N": ["out_features"]},
    given="X: (T, K); W: (N, K); one scale per output channel",
)


def test_also_accepts_each_listed_spelling_and_nothing_else():
    assert check_shape_card(SCALES) == []
    for typed in ["(N,)", "[1, N]", "N x 1", "(out_features, 1)", "torch.Size([1, N])"]:
        assert check_shape_steps(SCALES, ["(T, K)", typed])[1].ok, typed
    for typed in ["(N, N)", "(1, 1, N)", "(K, 1)", "(N, K)", ""]:
        assert not check_shape_steps(SCALES, ["(T, K)", typed])[1].ok, typed
    assert check_shape_steps(SCALES, ["(T, K)", "(K, 1)"])[1].expected == "(N)"


def test_also_shapes_count_for_the_case_rule():
    card = shape_card([{"label": "s", "shape": "(D)", "also": ["(d, 1)"]}], given="x")
    assert case_matters(card)
    assert not check_shape_steps(card, ["(D, 1)"])[0].ok


def diagnosis_card(choices, correct, evidence="step 412 ms; GPU busy 30%") -> Card:
    fields = {"evidence": evidence, "choices": choices, "correct": correct}
    return Card(id="d", kind="diagnosis", topic="profiling", prompt="?", answer="!", fields=fields)


BOUNDS = diagnosis_card(["compute-bound", "memory-bound", "input/launch-bound"], "memory-bound")


@pytest.mark.parametrize(
    "choice, ok",
    [
        ("memory-bound", True),
        ("  Memory-Bound ", True),
        ("memory-bound.", True),
        ("compute-bound", False),
        ("", False),
        ("memory", False),
        (2, True),
        ("2", True),
        ("b", True),
        ("B)", True),
        (1, False),
        ("3", False),
        (0, False),
        (4, False),
        ("9", False),
        ("z", False),
        (True, False),
    ],
)
def test_check_choice(choice, ok):
    assert check_choice(BOUNDS, choice) is ok


@pytest.mark.parametrize(
    "card, says",
    [
        (diagnosis_card(["a-bound"], "a-bound"), "at least two"),
        (diagnosis_card(["compute-bound", "Compute-bound "], "compute-bound"), "repeats 'compute-bound'"),
        (diagnosis_card(["compute-bound", "memory-bound"], "io-bound"), "'io-bound' is not one of the choices"),
        (diagnosis_card(["compute-bound", "memory-bound"], "Memory-bound"), "write it exactly"),
        (diagnosis_card(["compute-bound", "2"], "compute-bound"), "read as a choice number or letter"),
        (diagnosis_card(["compute-bound", "c"], "compute-bound"), "read as a choice number or letter"),
        (diagnosis_card(["compute-bound", ""], "compute-bound"), "non-empty text"),
        (diagnosis_card(["compute-bound", "memory-bound"], "compute-bound", evidence=""), "`evidence`"),
    ],
)
def test_check_diagnosis_card_finds_problems(card, says):
    assert any(says in p for p in check_diagnosis_card(card)), check_diagnosis_card(card)


def test_check_diagnosis_card_accepts_a_good_card():
    assert check_diagnosis_card(BOUNDS) == []


@pytest.mark.parametrize(
    "fraction, seconds, grade",
    [
        (1.0, 0, 5),
        (1.0, 60, 5),
        (1.0, 60.5, 4),
        (1.0, 180, 4),
        (1.0, 181, 3),
        (0.75, 5, 3),
        (0.01, 5, 3),
        (0.5, 500, 3),
        (0.0, 5, 1),
        (0.0, 500, 1),
    ],
)
def test_suggest_grade(fraction, seconds, grade):
    assert suggest_grade(fraction, seconds) == grade


def test_suggest_grade_thresholds_can_be_moved():
    assert suggest_grade(1.0, 100, quick_s=120, slow_s=300) == 5
    assert suggest_grade(1.0, 100, quick_s=30, slow_s=90) == 3


@pytest.mark.parametrize(
    "args, kwargs",
    [((1.5, 10), {}), ((-0.1, 10), {}), ((1.0, -1), {}), ((float("nan"), 1), {}), ((1.0, 10), {"quick_s": 200})],
)
def test_suggest_grade_rejects_impossible_input(args, kwargs):
    with pytest.raises(ValueError):
        suggest_grade(*args, **kwargs)


BUNDLED = bundled_cards()


@pytest.mark.parametrize("card_id", sorted(c.id for c in BUNDLED.values() if c.kind == "shape_trace"))
def test_bundled_shape_cards_pass_and_accept_their_own_shapes(card_id):
    card = BUNDLED[card_id]
    assert check_shape_card(card) == []
    expected = [step["shape"] for step in card.fields["steps"]]
    assert all(r.ok for r in check_shape_steps(card, expected))
    assert not any(r.ok for r in check_shape_steps(card, ["(Q, Z, 7, 7, 7)"] * len(expected)))
    for i, step in enumerate(card.fields["steps"]):
        for other in step.get("also", []):
            typed = expected[:i] + [other] + expected[i + 1 :]
            assert check_shape_steps(card, typed)[i].ok, (step["label"], other)


@pytest.mark.parametrize("card_id", sorted(c.id for c in BUNDLED.values() if c.kind == "diagnosis"))
def test_bundled_diagnosis_cards_pass_and_only_correct_is_right(card_id):
    card = BUNDLED[card_id]
    assert check_diagnosis_card(card) == []
    verdicts = [check_choice(card, c) for c in card.fields["choices"]]
    assert verdicts.count(True) == 1
    assert verdicts.index(True) == card.fields["choices"].index(card.fields["correct"])


def test_torch_size_spelling_is_read_whatever_the_case_rule():
    from drill.cards.checking import normalise_shape

    assert normalise_shape("torch.Size([4096, 1024])", None, fold_case=True) == normalise_shape(
        "(4096, 1024)", None, fold_case=True
    )
