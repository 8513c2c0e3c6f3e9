"""Parameterised cards: draws, sandboxed rendering, deck checks, and escape attempts that must fail."""

import dataclasses
import json
import math
import random
import time

import pytest
from jinja2.exceptions import SecurityError, UndefinedError

from drill.cards.model import Card
from drill.cards.templating import (
    ENV,
    ExpectedAnswer,
    LedgerTerm,
    TemplateProblem,
    check_ledger_card,
    draw_params,
    evaluate,
    render,
    render_text,
)
from tests.conftest import bundled_cards, stretched


def fake_kv_bytes(model, tokens, batch=1):
    if model["layers"] <= 0:
        raise ValueError("layers must be > 0")
    return 2 * model["layers"] * model["kv_heads"] * model["head_dim"] * 2 * tokens * batch


FUNCS = {"kv_bytes": fake_kv_bytes, "ceil": math.ceil, "min": min, "GiB": 2**30}
MODELS = {
    "tiny": {"name": "tiny", "title": "Tiny", "layers": 2, "kv_heads": 4, "head_dim": 8},
    "small": {"name": "small", "title": "Small", "layers": 4, "kv_heads": 8, "head_dim": 16},
    "broken": {"name": "broken", "title": "Broken", "layers": 0, "kv_heads": 8, "head_dim": 16},
}
GPUS = {"g1": {"name": "g1", "title": "G1", "hbm_bandwidth": 1e12}}
TABLES = {"functions": FUNCS, "models": MODELS, "gpus": GPUS}


def ledger_card(**fields) -> Card:
    base = {
        "params": {
            "model": {"model": ["tiny", "small"]},
            "gpu": {"gpu": ["g1"]},
            "n": {"choices": [1, 8]},
            "s": {"range": [1024, 4096], "step": 1024},
        },
        "answers": [{"label": "KV cache", "expr": "kv_bytes(model, tokens=s, batch=n)", "unit": "bytes"}],
        "ledger": [
            {
                "term": "K and V per token",
                "formula": "2 × {{ model.layers }} × {{ model.kv_heads }} × {{ model.head_dim }} × 2 B",
                "expr": "kv_bytes(model, tokens=1)",
                "unit": "bytes",
            }
        ],
    }
    prompt = fields.pop("prompt", "KV cache of {{ model.title }} on {{ gpu.name }}: {{ s }} tokens × {{ n }}?")
    answer = fields.pop("answer", "It is {{ kv_bytes(model, tokens=s, batch=n) / GiB }} GiB.")
    base["params"].update(fields.pop("params", {}))  # replace or add single parameters
    base.update(fields)
    return Card(
        id="l", kind="memory_ledger", topic="serving", prompt=prompt, answer=answer, sources=("x",), fields=base
    )


CARD = ledger_card()


# --- draws ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_draws():
    a, b = random.Random(7), random.Random(7)
    first = [draw_params(CARD, a) for _ in range(20)]
    assert first == [draw_params(CARD, b) for _ in range(20)]
    other = random.Random(8)
    assert first != [draw_params(CARD, other) for _ in range(20)]


def test_a_draw_is_plain_json_with_models_by_name():
    draw = draw_params(CARD, random.Random(1))
    assert json.loads(json.dumps(draw)) == draw
    assert draw["model"] in ("tiny", "small") and draw["gpu"] == "g1"


def test_draws_stay_inside_their_specs_and_reach_every_value():
    rng = random.Random(3)
    seen: dict[str, set] = {k: set() for k in CARD.fields["params"]}
    for _ in range(400):
        for k, v in draw_params(CARD, rng).items():
            seen[k].add(v)
    assert seen == {"model": {"tiny", "small"}, "gpu": {"g1"}, "n": {1, 8}, "s": {1024, 2048, 3072, 4096}}


def test_a_range_whose_step_overshoots_stops_below_high():
    card = ledger_card(params={"s": {"range": [1, 10], "step": 4}})
    rng = random.Random(0)
    assert {draw_params(card, rng)["s"] for _ in range(200)} == {1, 5, 9}


# --- rendering -------------------------------------------------------------------------


def test_render_resolves_models_and_evaluates_every_expression():
    r = render(CARD, {"model": "small", "gpu": "g1", "n": 8, "s": 2048}, **TABLES)
    per_token = 2 * 4 * 8 * 16 * 2
    # the model's figures the answer needs and the prompt leaves out are stated after it (8 KV heads it shows)
    assert r.prompt == "KV cache of Small on g1: 2048 tokens × 8?\n\n**Given:** Small: layers 4, head dim 16.\n"
    assert r.answers == [ExpectedAnswer("KV cache", per_token * 2048 * 8, "bytes", 0.02)]
    assert r.ledger == [LedgerTerm("K and V per token", "2 × 4 × 8 × 16 × 2 B", per_token, "bytes")]
    assert r.answer == f"It is {per_token * 2048 * 8 / 2**30} GiB."


def test_render_keeps_a_card_tolerance():
    card = ledger_card(answers=[{"label": "x", "expr": "s", "unit": "count", "tolerance": 0}])
    (a,) = render(card, {"model": "tiny", "gpu": "g1", "n": 1, "s": 1024}, **TABLES).answers
    assert a.tolerance == 0 and a.value == 1024


def test_render_gives_the_model_name_when_the_mapping_lacks_it():
    models = {"anon": {"layers": 1, "kv_heads": 1, "head_dim": 1}}
    card = ledger_card(params={"model": {"model": ["anon"]}}, prompt="{{ model.name }}")
    draw = {"model": "anon", "gpu": "g1", "n": 1, "s": 1024}
    assert render(card, draw, functions=FUNCS, models=models, gpus=GPUS).prompt.startswith("anon\n\n**Given:** anon:")


@pytest.mark.parametrize(
    "draw, says",
    [
        ({"model": "tiny", "gpu": "g1", "n": 1}, "the draw lacks s"),
        ({"model": "huge", "gpu": "g1", "n": 1, "s": 1024}, "unknown model 'huge'"),
        ({"model": "broken", "gpu": "g1", "n": 1, "s": 1024}, "ValueError: layers must be > 0"),
    ],
)
def test_render_explains_what_went_wrong(draw, says):
    with pytest.raises(TemplateProblem, match=says):
        render(CARD, draw, **TABLES)


def test_render_fills_the_templates_of_labels_and_ledger_terms():
    card = ledger_card(
        answers=[
            {"label": "cache of {{ n }} sequences", "expr": "kv_bytes(model, tokens=s, batch=n)", "unit": "bytes"}
        ],
        ledger=[{"term": "bytes in {{ model.title }}", "formula": "{{ s }} tokens", "expr": "s", "unit": "count"}],
    )
    r = render(card, {"model": "tiny", "gpu": "g1", "n": 8, "s": 1024}, **TABLES)
    assert r.answers[0].label == "cache of 8 sequences"
    assert r.ledger[0].term == "bytes in Tiny"


def test_render_states_the_gpu_figures_an_answer_reads_and_the_prompt_leaves_out():
    card = ledger_card(answers=_answers(expr="s / gpu.hbm_bandwidth", unit="seconds"))
    r = render(card, {"model": "tiny", "gpu": "g1", "n": 8, "s": 1024}, **TABLES)
    assert r.prompt.endswith("**Given:** G1: HBM bandwidth 1.00 TB/s.\n")
    stated = ledger_card(
        prompt="{{ s }} B at {{ gpu.hbm_bandwidth / 1e12 }} TB/s?", answers=_answers(expr="s / gpu.hbm_bandwidth")
    )
    assert "Given" not in render(stated, {"model": "tiny", "gpu": "g1", "n": 8, "s": 1024}, **TABLES).prompt


def test_a_number_in_a_models_name_states_none_of_its_figures():
    models = {"m": {"name": "m", "title": "Model 4", "layers": 4, "kv_heads": 4, "head_dim": 4}}
    card = ledger_card(params={"model": {"model": ["m"]}}, prompt="{{ model.title }}: {{ s }} tokens × {{ n }}?")
    r = render(card, {"model": "m", "gpu": "g1", "n": 1, "s": 1024}, functions=FUNCS, models=models, gpus=GPUS)
    assert r.prompt.endswith("**Given:** Model 4: layers 4, KV heads 4, head dim 4.\n")


# --- checking a card ----------------------------------------------------------------------


def test_a_good_card_passes():
    assert check_ledger_card(CARD, **TABLES) == []


def _answers(expr="s", unit="bytes", **extra):
    return [{"label": "x", "expr": expr, "unit": unit, **extra}]


BAD_CARDS = [
    (ledger_card(params={"s": {"range": [10, 1]}}), "range low 10 is above high 1"),
    (ledger_card(params={"s": {"range": [1.5, 3]}}), "`range` needs two integers"),
    (ledger_card(params={"s": {"range": [1, 3], "step": 0}}), "`step` must be a positive integer"),
    (ledger_card(params={"s": {"choices": []}}), "`choices` needs a non-empty list"),
    (ledger_card(params={"s": {"choices": [[1]]}}), "choices must be numbers, text or true/false"),
    (ledger_card(params={"s": {"choices": [1], "range": [1, 2]}}), "needs exactly one of"),
    (ledger_card(params={"s": {"choise": [1]}}), "needs exactly one of"),
    (ledger_card(params={"s": {"choices": [1], "step": 2}}), "unknown key 'step'"),
    (ledger_card(params={"s": [1, 2]}), "expected a mapping"),
    (ledger_card(params={"_s": {"choices": [1]}}), "must be a plain identifier"),
    (ledger_card(params={"ceil": {"choices": [1]}}), "hides the function or constant 'ceil'"),
    (ledger_card(params={"model": {"model": ["tiny", "giant"]}}), "unknown model 'giant'"),
    (ledger_card(params={"gpu": {"gpu": ["h999"]}}), "unknown gpu 'h999'"),
    (ledger_card(answers=[]), "`answers` needs at least one entry"),
    (ledger_card(answers=_answers(unit="parsecs")), "answers[0].unit: unknown unit 'parsecs'"),
    (ledger_card(answers=_answers(tolerance=2)), "answers[0].tolerance: a relative tolerance between 0"),
    (ledger_card(answers=_answers(tolerance=-0.1)), "answers[0].tolerance"),
    (ledger_card(answers=[{"label": "x", "expr": "s"}]), "answers[0]: missing `unit`"),
    (ledger_card(answers=_answers(note="hi")), "answers[0]: unknown key 'note'"),
    (ledger_card(answers=["s"]), "answers[0]: expected a mapping"),
    (ledger_card(answers=_answers(expr="s +")), "answers[0].expr: expression syntax error"),
    (ledger_card(answers=_answers(expr="kv_byte(model, tokens=s)")), "unknown name 'kv_byte'"),
    (ledger_card(answers=_answers(expr="s(1)")), "'s' is not a function"),
    (ledger_card(answers=_answers(expr="'big'")), "gives str 'big', not a number"),
    (ledger_card(answers=_answers(expr="s > 1")), "gives bool"),
    (ledger_card(answers=_answers(expr="s * 1e308")), "not a finite number"),
    (ledger_card(answers=_answers(expr="s - 10**6")), "gives a negative value"),
    (ledger_card(answers=_answers(expr="s * 0")), "gives 0"),
    (ledger_card(answers=_answers(expr="s / 3", unit="count", tolerance=0)), "tolerance 0 asks for an exact answer"),
    (
        ledger_card(ledger=[{"term": "t", "formula": "{{ s }", "expr": "s", "unit": "bytes"}]),
        "ledger[0].formula: template syntax error",
    ),
    (ledger_card(ledger=[{"term": "t", "formula": "x", "unit": "bytes"}]), "ledger[0]: missing `expr`"),
    (ledger_card(prompt="{{ nothing }}"), "prompt: unknown name 'nothing'"),
    (ledger_card(answer="{{ s|center(9) }}"), "answer: filter 'center' not allowed"),
    (ledger_card(params={"s": {"range": [1024, 8192]}}, answers=_answers(expr="1 / (s - 1024)")), "ZeroDivisionError"),
    (ledger_card(params={"model": {"model": ["tiny", "small", "broken"]}}), "layers must be > 0"),
    (
        ledger_card(ledger=[{"term": "t", "formula": "{{ '{{' }} s", "expr": "s", "unit": "bytes"}]),
        "ledger[0].formula: the learner would see template text '{{'",
    ),
    (
        ledger_card(ledger=[{"term": "per {{ s }", "formula": "x", "expr": "s", "unit": "bytes"}]),
        "ledger[0].term: template syntax error",
    ),
    (ledger_card(answer="{{ '{%' }} raw"), "answer: the learner would see template text '{%'"),
    (dataclasses.replace(CARD, rubric=("{{ s }} tokens",)), "rubric: shows template text '{{'"),
    (
        ledger_card(prompt="KV cache of {{ model.title }} for {{ n }} sequences?"),
        "answers[0]: computed from s = ",
    ),
    (ledger_card(answers=_answers(expr="s * 5e10")), "answers[0]: computed from the literal 5e+10"),
]


@pytest.mark.parametrize("card, says", BAD_CARDS, ids=[s for _, s in BAD_CARDS])
def test_check_ledger_card_finds_problems(card, says):
    problems = check_ledger_card(card, **TABLES)
    assert any(says in p for p in problems), problems


def test_check_names_the_draw_that_failed_even_at_a_range_end():
    card = ledger_card(params={"s": {"range": [1024, 8192]}}, answers=_answers(expr="1 / (s - 1024)"))
    (problem,) = check_ledger_card(card, **TABLES)
    assert problem.startswith("answers[0].expr: ZeroDivisionError") and "s=1024" in problem


def test_check_reports_each_failing_place_once():
    card = ledger_card(params={"model": {"model": ["broken"]}})
    problems = check_ledger_card(card, **TABLES)
    assert len(problems) == len(set(problems)) == 1


def test_check_is_repeatable():
    card = ledger_card(params={"model": {"model": ["tiny", "small", "broken"]}})
    assert check_ledger_card(card, **TABLES) == check_ledger_card(card, **TABLES)


# --- the sandbox ---------------------------------------------------------------------------

MARKER = "drill-sandbox-marker"

ESCAPES = [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''['__class__'] }}",
    "{{ model.__globals__ }}",
    "{{ kv_bytes.__globals__['os'].system('touch {marker}') }}",
    "{{ kv_bytes.__globals__.__builtins__.open('{marker}', 'w').write('x') }}",
    "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ lipsum.__globals__['os'].popen('touch {marker}').read() }}",
    "{{ joiner.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ namespace.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ open('{marker}', 'w') }}",
    "{% include '/etc/passwd' %}",
    "{% import 'os' as os %}{{ os.system('touch {marker}') }}",
    "{% from 'os' import system %}{{ system('touch {marker}') }}",
    "{% extends '/etc/passwd' %}",
    "{{ range(10**12)|list }}",
    "{{ 'x' * 10**10 }}",
    "{{ 10 ** (10 ** 10) }}",
    "{{ '%999999999d' % 1 }}",
    "{{ '%*d' % (999999999, 1) }}",
    "{{ '%999999999d'|format(1) }}",
    "{{ '{:999999999}'.format(1) }}",
    "{{ 'x'|center(999999999) }}",
    "{{ [0] * 10**9 }}",
    "{% for i in [1, 2] %}{% for j in [1, 2] %}{% endfor %}{% endfor %}",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "{% set a = 'x' ~ 'x' %}{{ a }}",
    "{{ model.items() }}",
    "{{ model['items'] }}",
    "{{ s|attr('__class__') }}",
    "{{ model|map(attribute='__class__')|first }}",
    "{{ [model]|max(attribute='__class__') }}",
    "{{ [model]|sum(attribute='items') }}",
    "{{ (" * 500 + "1" + ")" * 500 + " }}",
    "{{ 1" + "0" * 5000 + " }}",
]


@pytest.mark.parametrize("attempt", ESCAPES)
def test_escape_attempts_are_rejected_and_nothing_runs(attempt, tmp_path):
    marker = tmp_path / MARKER
    text = attempt.replace("{marker}", str(marker))
    card = ledger_card(prompt=text)
    started = time.perf_counter()
    problems = check_ledger_card(card, **TABLES)
    assert problems and all(p.startswith("prompt: ") for p in problems), problems
    with pytest.raises(TemplateProblem):
        render(card, draw_params(card, random.Random(0)), **TABLES)
    assert time.perf_counter() - started < stretched(5)
    assert not marker.exists()


EXPRESSION_ESCAPES = [
    "kv_bytes.__globals__['os'].system('touch {marker}')",
    "''.__class__.__base__.__subclasses__()",
    "model.get('layers')",
    "range(10**12)",
    "lipsum",
    "10 ** (10 ** 10)",
    "(10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000) * (10 ** 1000)",
    "(-8) ** 0.5",
    "self",
]


@pytest.mark.parametrize("attempt", EXPRESSION_ESCAPES)
def test_expression_escape_attempts_are_rejected(attempt, tmp_path):
    marker = tmp_path / MARKER
    card = ledger_card(answers=_answers(expr=attempt.replace("{marker}", str(marker))))
    problems = check_ledger_card(card, **TABLES)
    assert problems and all(p.startswith("answers[0].expr") for p in problems), problems
    assert not marker.exists()


@pytest.mark.parametrize(
    "source, scope",
    [
        ("{{ f.__globals__ }}", {"f": fake_kv_bytes}),
        ("{{ m.items() }}", {"m": {}}),
        ("{{ s.upper() }}", {"s": "x"}),
        ("{{ s.format(1) }}", {"s": "{}"}),
        ("{{ f('.') }}", {"f": __import__("os").listdir}),
        ("{{ range(3) }}", {}),
        ("{{ lipsum() }}", {}),
        ("{{ 'x' * 20000 }}", {}),
    ],
)
def test_the_sandbox_holds_even_without_the_allow_list(source, scope):
    # The parse-time allow-list is the first fence; the environment is the second.
    with pytest.raises((SecurityError, UndefinedError)):
        ENV.from_string(source).render(scope)


def test_only_the_listed_functions_can_be_called():
    assert evaluate("ceil(s / 3)", {"ceil": math.ceil, "s": 10}) == 4
    with pytest.raises(TemplateProblem, match="unknown name 'floor'"):
        evaluate("floor(s / 3)", {"ceil": math.ceil, "s": 10})


def test_formatting_filters_work_within_bounds():
    scope = {"x": 2.5 * 2**30, "n": 8192}
    assert render_text("{{ x|qty('bytes') }} / {{ n|thousands }} / {{ '%.1f'|format(n / 1024) }}", scope) == (
        "2.68 GB (2.50 GiB) / 8,192 / 8.0"
    )
    assert render_text("{% if n > 4096 %}long{% else %}short{% endif %}", scope) == "long"


# --- with the real calculators ----------------------------------------------------------------


def test_real_calculators_llama2_kv_per_token_and_opt13b_request():
    card = Card(
        id="kv",
        kind="memory_ledger",
        topic="serving",
        prompt="{{ model.title }}, {{ s }} tokens",
        answer="-",
        sources=("x",),
        fields={
            "params": {"model": {"model": ["llama-2-7b", "opt-13b"]}, "s": {"choices": [2048]}},
            "answers": [
                {"label": "per token", "expr": "kv_bytes_per_token(model)", "unit": "bytes"},
                {"label": "request", "expr": "kv_bytes(model, tokens=s)", "unit": "bytes"},
            ],
        },
    )
    assert check_ledger_card(card) == []
    llama = render(card, {"model": "llama-2-7b", "s": 2048})
    # 2 (K, V) x 32 layers x 32 KV heads x 128 x 2 bytes [Hugging Face Llama-2-7b config.json]
    assert llama.answers[0].value == 2 * 32 * 32 * 128 * 2 == 524_288
    assert llama.prompt == "Llama 2 7B, 2048 tokens\n\n**Given:** Llama 2 7B: layers 32, KV heads 32, head dim 128.\n"
    opt = render(card, {"model": "opt-13b", "s": 2048})
    # vLLM (arXiv:2309.06180): about 800 KB per token and 1.6 GB for a 2,048-token request
    assert opt.answers[0].value == 819_200
    assert opt.answers[1].value == pytest.approx(1.6e9, rel=0.05)


BUNDLED = bundled_cards()


@pytest.mark.parametrize("card_id", sorted(c.id for c in BUNDLED.values() if c.kind == "memory_ledger"))
def test_bundled_ledger_cards_pass_and_render(bundled_decks, card_id):
    from drill.cards.kinds import KINDS

    card = bundled_decks.cards[card_id]
    # the deep load ran check_ledger_card on every ledger card and kept its messages as the card's problems
    assert KINDS[card.kind].checker == "drill.cards.templating:check_ledger_card"
    assert [p.message for p in bundled_decks.problems if p.card_id == card_id] == []
    draw = draw_params(card, random.Random(11))
    first = render(card, draw)
    assert first == render(card, json.loads(json.dumps(draw)))
    assert first.answers and all(math.isfinite(a.value) for a in first.answers)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"p": {"choices": list(range(8000))}}, "8000 choices; at most 1000"),
        ({f"p{i}": {"choices": list(range(1, 51))} for i in range(300)}, "300 parameters; a card may have at most 50"),
    ],
    ids=["8000-choices", "300-parameters"],
)
def test_absurd_parameter_lists_are_refused_quickly(params, message):
    import time

    from drill.cards.model import Card
    from drill.cards.templating import check_ledger_card

    card = Card(
        id="c",
        kind="memory_ledger",
        topic="t",
        prompt="{{ p }}",
        answer="a",
        sources=("s",),
        fields={"params": params, "answers": [{"label": "x", "expr": "1", "unit": "count"}]},
    )
    started = time.perf_counter()
    problems = check_ledger_card(card)
    assert any(message in p for p in problems), problems
    assert time.perf_counter() - started < stretched(5)  # it used to take minutes
