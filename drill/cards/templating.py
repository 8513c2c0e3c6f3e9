"""Parameterised cards: drawing parameters, rendering their text and expressions in a sandbox, and checking them.

A shared deck must never run code or read files on the learner's machine, so
card templates go through several fences:

- a parse-time allow-list: only output, `{% if %}`, literals, names,
  arithmetic, comparisons, attribute and item access, calls of the listed
  functions, and a short list of filters and tests. No `{% for %}`,
  `{% set %}`, `{% macro %}`, `{% include %}`, `{% import %}`, `{% extends %}`
  or blocks; no name or attribute that starts with an underscore; only names
  the card defines (its parameters and the calculator functions);
- Jinja2's immutable sandbox with no loader and no default globals, where an
  attribute is readable only if it is plain data (never a method) and only
  the listed functions may be called;
- bounds on the work: every arithmetic operator is checked before it runs
  (no `10**10**10`, no `'x' * 10**10`, no printf widths in the millions),
  templates and expressions have a size limit, and so does the rendered text.

Without loops, macros or assignments, the work a template can do grows only
with its length.
"""

from __future__ import annotations

import contextvars
import keyword
import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, nodes
from jinja2.environment import Template, TemplateExpression
from jinja2.filters import FILTERS as JINJA_FILTERS
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.tests import TESTS as JINJA_TESTS

from drill.cards.model import Card
from drill.cards.units import CARD_UNITS, format_quantity

MAX_TEMPLATE_CHARS = 20_000
MAX_EXPRESSION_CHARS = 2_000
MAX_RENDERED_CHARS = 50_000
MAX_STRING_PRODUCT = 10_000  # longest string that `*` may build
MAX_INT_BITS = 4_096  # about 1,200 decimal digits
DEFAULT_TOLERANCE = 0.02
CHECK_DRAWS = 8
CHECK_SEED = 20_240_601
MAX_CORNER_DRAWS = 64

PARAM_KINDS = ("model", "gpu", "choices", "range")
ANSWER_KEYS = {"label": True, "expr": True, "unit": True, "tolerance": False}
LEDGER_KEYS = {"term": True, "formula": True, "expr": True, "unit": True}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class TemplateProblem(ValueError):
    """A card template or expression that cannot be used; `where` names the part of the card."""

    def __init__(self, message: str, where: str = "") -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class ExpectedAnswer:
    label: str
    value: float
    unit: str
    tolerance: float


@dataclass(frozen=True)
class LedgerTerm:
    term: str
    formula: str
    value: float
    unit: str


@dataclass(frozen=True)
class Rendered:
    prompt: str
    answers: list[ExpectedAnswer]
    ledger: list[LedgerTerm]
    answer: str


# --- the sandbox ---------------------------------------------------------------

_CALLABLE_NOW: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar("callable_now", default=())
_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")


def _printf_safe(fmt: str) -> None:
    for m in _PRINTF.finditer(fmt):
        for part in (m[1], m[2]):
            if part == "*" or (part and int(part) > 60):
                raise SecurityError(f"format width or precision {part!r} is too large")


def _check_int(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise SecurityError("number too large")
    if isinstance(value, complex):
        raise SecurityError("result is not a real number")
    return value


class CardSandbox(ImmutableSandboxedEnvironment):
    """The sandbox in which card templates and expressions run."""

    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # Data only: a method is never handed to a template, so nothing reachable can run.
        if attr.startswith("_") or callable(value):
            return False
        return super().is_safe_attribute(obj, attr, value)

    def is_safe_callable(self, obj: Any) -> bool:
        return any(obj is allowed for allowed in _CALLABLE_NOW.get())

    def wrap_str_format(self, value: Any) -> None:
        return None  # str.format is a method like any other: not reachable

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (list, tuple)):
                    raise SecurityError("repeating a list with * is not allowed")
                if isinstance(seq, str) and isinstance(n, int) and len(seq) * n > MAX_STRING_PRODUCT:
                    raise SecurityError(f"string longer than {MAX_STRING_PRODUCT} characters")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_INT_BITS:
                raise SecurityError("number too large")
        elif operator == "%" and isinstance(left, str):
            _printf_safe(left)
        elif (
            operator == "+"
            and isinstance(left, (str, list, tuple))
            and isinstance(right, type(left))
            and len(left) + len(right) > MAX_RENDERED_CHARS
        ):
            raise SecurityError("value too long")
        return _check_int(self.binop_table[operator](left, right))


def _format_filter(fmt: Any, *args: Any, **kwargs: Any) -> str:
    """printf-style formatting ("%.1f"|format(x)) with small widths only."""
    fmt = str(fmt)
    _printf_safe(fmt)
    if args and kwargs:
        raise SecurityError("format takes positional or keyword arguments, not both")
    return fmt % (kwargs or args)


def _qty_filter(value: Any, unit: str, digits: int = 3) -> str:
    """A quantity for reading: {{ x|qty('bytes') }} -> 2.68 GB (2.50 GiB)."""
    if unit not in CARD_UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    return format_quantity(float(value), unit, digits=max(1, min(int(digits), 12)))


def _thousands_filter(value: Any) -> str:
    """Digit grouping: {{ 8192|thousands }} -> 8,192."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}"


_SAFE_FILTERS = (
    "abs", "capitalize", "d", "default", "first", "float", "int", "join", "last", "length", "count",
    "lower", "max", "min", "round", "string", "sum", "title", "trim", "upper", "filesizeformat",
)
_SAFE_TESTS = (
    "defined", "undefined", "none", "number", "integer", "float", "string", "boolean", "divisibleby",
    "even", "odd", "eq", "ne", "lt", "le", "gt", "ge", "in", "true", "false",
)
FILTERS: dict[str, Callable[..., Any]] = {name: JINJA_FILTERS[name] for name in _SAFE_FILTERS}
FILTERS.update(format=_format_filter, qty=_qty_filter, thousands=_thousands_filter)
TESTS: dict[str, Callable[..., Any]] = {name: JINJA_TESTS[name] for name in _SAFE_TESTS}


def _make_environment() -> CardSandbox:
    env = CardSandbox(
        loader=None,
        undefined=StrictUndefined,
        autoescape=False,
        optimized=False,
        keep_trailing_newline=True,
        cache_size=0,
    )
    env.globals.clear()  # no range, dict, lipsum, cycler, joiner or namespace
    env.filters = dict(FILTERS)
    env.tests = dict(TESTS)
    return env


ENV = _make_environment()

# --- the parse-time allow-list ---------------------------------------------------

_ALLOWED_NODES: tuple[type[nodes.Node], ...] = (
    nodes.Template, nodes.Output, nodes.TemplateData, nodes.If, nodes.Name, nodes.Const, nodes.Tuple,
    nodes.List, nodes.Dict, nodes.Pair, nodes.Keyword, nodes.CondExpr, nodes.BinExpr, nodes.UnaryExpr,
    nodes.Compare, nodes.Operand, nodes.Concat, nodes.Getattr, nodes.Getitem, nodes.Slice, nodes.Call,
    nodes.Filter, nodes.Test,
)
_TAG_NAMES = {
    nodes.For: "{% for %} loops are",
    nodes.Macro: "{% macro %} is",
    nodes.CallBlock: "{% call %} blocks are",
    nodes.FilterBlock: "{% filter %} blocks are",
    nodes.With: "{% with %} blocks are",
    nodes.Block: "{% block %} is",
    nodes.Extends: "{% extends %} is",
    nodes.Include: "{% include %} is",
    nodes.Import: "{% import %} is",
    nodes.FromImport: "{% from ... import %} is",
    nodes.Assign: "{% set %} is",
    nodes.AssignBlock: "{% set %} blocks are",
    nodes.NSRef: "namespace attributes are",
}
_READS_FILES = (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)
# Jinja's own globals and special names: none exists in a card's scope.
_JINJA_NAMES = {"range", "lipsum", "cycler", "joiner", "namespace", "dict", "self", "loop", "caller", "super",
                "varargs", "kwargs"}


def _node_problems(root: nodes.Node, names: Mapping[str, Any]) -> list[str]:
    """Why a parsed template or expression may not run; empty when it may."""
    problems: list[str] = []

    def visit(node: nodes.Node) -> None:
        if not isinstance(node, _ALLOWED_NODES):
            what = _TAG_NAMES.get(type(node), f"{type(node).__name__} is")
            why = ": cards cannot read files" if isinstance(node, _READS_FILES) else ""
            problems.append(f"{what} not allowed in cards{why}")
            return
        if isinstance(node, nodes.Name):
            if node.name.startswith("_"):
                problems.append(f"name {node.name!r} not allowed (leading underscore)")
            elif node.name in _JINJA_NAMES and node.name not in names:
                problems.append(f"{node.name!r} is not available in cards")
            elif node.name not in names:
                problems.append(f"unknown name {node.name!r}")
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            problems.append(f"attribute {node.attr!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            if isinstance(node.arg.value, str) and node.arg.value.startswith("_"):
                problems.append(f"item {node.arg.value!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Call):
            if not isinstance(node.node, nodes.Name):
                problems.append("only the listed functions can be called, by name (no methods)")
            elif node.node.name in names and not callable(names[node.node.name]):
                problems.append(f"{node.node.name!r} is not a function")
        elif isinstance(node, nodes.Filter) and node.name not in FILTERS:
            problems.append(f"filter {node.name!r} not allowed (allowed: {', '.join(sorted(FILTERS))})")
        elif isinstance(node, nodes.Keyword) and node.key == "attribute" and isinstance(node.value, nodes.Const):
            if any(part.startswith("_") for part in str(node.value.value).split(".")):
                problems.append(f"attribute {node.value.value!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Test) and node.name not in TESTS:
            problems.append(f"test {node.name!r} not allowed")
        for child in node.iter_child_nodes():
            visit(child)

    try:
        visit(root)
    except RecursionError:
        problems.append("nested too deeply")
    return list(dict.fromkeys(problems))


@lru_cache(maxsize=1024)
def _parse_template(source: str) -> nodes.Template:
    if len(source) > MAX_TEMPLATE_CHARS:
        raise TemplateProblem(f"template longer than {MAX_TEMPLATE_CHARS} characters")
    try:
        return ENV.parse(source)
    except TemplateSyntaxError as e:
        raise TemplateProblem(f"template syntax error on line {e.lineno}: {e.message}") from None
    except RecursionError:
        raise TemplateProblem("template nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - e.g. an integer literal beyond Python's digit limit
        raise TemplateProblem(f"template cannot be read: {e}") from None


@lru_cache(maxsize=1024)
def _parse_expression(source: str) -> nodes.Expr:
    if len(source) > MAX_EXPRESSION_CHARS:
        raise TemplateProblem(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        parser = Parser(ENV, source, state="variable")
        expr = parser.parse_expression()
        if not parser.stream.eos:
            raise TemplateSyntaxError("unexpected text after the expression", parser.stream.current.lineno)
        return expr
    except TemplateSyntaxError as e:
        raise TemplateProblem(f"expression syntax error: {e.message}") from None
    except RecursionError:
        raise TemplateProblem("expression nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - as for templates
        raise TemplateProblem(f"expression cannot be read: {e}") from None


# Compiled only after the allow-list has passed on the parsed tree; compiled
# from a fresh parse so the cached trees stay untouched.
@lru_cache(maxsize=1024)
def _compiled_template(source: str) -> Template:
    return ENV.from_string(source)


@lru_cache(maxsize=1024)
def _compiled_expression(source: str) -> TemplateExpression:
    expr = Parser(ENV, source, state="variable").parse_expression()
    body = [nodes.Assign(nodes.Name("result", "store"), expr, lineno=1)]
    template = ENV.from_string(nodes.Template(body, lineno=1))
    return TemplateExpression(template, undefined_to_none=False)


def template_problems(source: str, names: Mapping[str, Any]) -> list[str]:
    """Why `source` may not be used as card text given the available `names`; empty when it may."""
    try:
        ast = _parse_template(source)
    except TemplateProblem as e:
        return [e.message]
    return _node_problems(ast, names)


def expression_problems(source: str, names: Mapping[str, Any]) -> list[str]:
    """Why `source` may not be used as a card expression; empty when it may."""
    try:
        expr = _parse_expression(source)
    except TemplateProblem as e:
        return [e.message]
    return _node_problems(expr, names)


def _run(fn: Callable[[], Any], names: Mapping[str, Any], where: str) -> Any:
    token = _CALLABLE_NOW.set(tuple(v for v in names.values() if callable(v)))
    try:
        return fn()
    except TemplateProblem:
        raise
    except SecurityError as e:
        raise TemplateProblem(f"not allowed: {e}", where) from None
    except RecursionError:
        raise TemplateProblem("nested too deeply", where) from None
    except Exception as e:  # noqa: BLE001 - anything a sandboxed template or a calculator raises
        raise TemplateProblem(f"{type(e).__name__}: {e}", where) from None
    finally:
        _CALLABLE_NOW.reset(token)


def render_text(source: str, names: Mapping[str, Any], where: str = "template") -> str:
    """Render card text in the sandbox with `names` (functions and parameters) in scope."""
    problems = template_problems(source, names)
    if problems:
        raise TemplateProblem("; ".join(problems), where)
    template = _run(lambda: _compiled_template(source), names, where)
    text = _run(lambda: template.render(dict(names)), names, where)
    if len(text) > MAX_RENDERED_CHARS:
        raise TemplateProblem(f"rendered text longer than {MAX_RENDERED_CHARS} characters", where)
    return text


def evaluate(source: str, names: Mapping[str, Any], where: str = "expr") -> float:
    """Evaluate a card expression in the sandbox; the result must be a finite real number."""
    problems = expression_problems(source, names)
    if problems:
        raise TemplateProblem("; ".join(problems), where)
    compiled = _run(lambda: _compiled_expression(source), names, where)
    value = _run(lambda: compiled(**names), names, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TemplateProblem(f"gives {type(value).__name__} {str(value)[:60]!r}, not a number", where)
    try:
        result = float(value)
    except OverflowError:
        raise TemplateProblem("number too large", where) from None
    if not math.isfinite(result):
        raise TemplateProblem(f"gives {result}, not a finite number", where)
    return result


# --- parameters -------------------------------------------------------------------


def _spec_problem(name: Any, spec: Any) -> str | None:
    if not isinstance(name, str) or not _NAME.match(name) or keyword.iskeyword(name):
        return f"parameter name {name!r} must be a plain identifier (letters, digits, _; no leading _)"
    if not isinstance(spec, dict):
        return f"params.{name}: expected a mapping such as {{choices: [...]}}, got {type(spec).__name__}"
    kinds = [k for k in spec if k in PARAM_KINDS]
    if len(kinds) != 1:
        return f"params.{name}: needs exactly one of {', '.join(PARAM_KINDS)}"
    kind = kinds[0]
    extra = set(spec) - {kind} - ({"step"} if kind == "range" else set())
    if extra:
        return f"params.{name}: unknown key {min(map(str, extra))!r}"
    values = spec[kind]
    if kind in ("model", "gpu"):
        if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
            return f"params.{name}: `{kind}` needs a non-empty list of {kind} names"
    elif kind == "choices":
        if not isinstance(values, list) or not values:
            return f"params.{name}: `choices` needs a non-empty list"
        if not all(isinstance(v, (int, float, str)) for v in values):
            return f"params.{name}: choices must be numbers, text or true/false"
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return f"params.{name}: choices must be finite"
    else:
        step = spec.get("step", 1)
        if (
            not isinstance(values, list)
            or len(values) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        ):
            return f"params.{name}: `range` needs two integers [low, high]"
        if values[0] > values[1]:
            return f"params.{name}: range low {values[0]} is above high {values[1]}"
        if not isinstance(step, int) or isinstance(step, bool) or step < 1:
            return f"params.{name}: `step` must be a positive integer"
        if max(abs(values[0]), abs(values[1])) > 10**15:
            return f"params.{name}: range bounds beyond 10^15"
    return None


def _params(card: Card) -> dict[str, dict[str, Any]]:
    params = card.fields.get("params") or {}
    if not isinstance(params, dict):
        raise TemplateProblem("`params` must be a mapping", "params")
    for name, spec in params.items():
        problem = _spec_problem(name, spec)
        if problem:
            raise TemplateProblem(problem, "params")
    return params


def _options(spec: Mapping[str, Any]) -> list[Any]:
    if "range" in spec:
        low, high = spec["range"]
        step = spec.get("step", 1)
        return [low, low + step * ((high - low) // step)]
    kind = next(k for k in PARAM_KINDS if k in spec)
    return list(spec[kind])


def _draw_one(spec: Mapping[str, Any], rng: random.Random) -> Any:
    if "range" in spec:
        low, high = spec["range"]
        step = spec.get("step", 1)
        return low + step * rng.randrange((high - low) // step + 1)
    kind = next(k for k in PARAM_KINDS if k in spec)
    return rng.choice(spec[kind])


def draw_params(card: Card, rng: random.Random) -> dict[str, Any]:
    """A fresh draw of the card's parameters: plain numbers and text (models and GPUs by name)."""
    return {name: _draw_one(spec, rng) for name, spec in _params(card).items()}


# --- rendering ------------------------------------------------------------------


@dataclass(frozen=True)
class _Catalogue:
    names: Mapping[str, Any]
    models: Mapping[str, Mapping[str, Any]]
    gpus: Mapping[str, Mapping[str, Any]]


def _catalogue(
    functions: Mapping[str, Any] | None,
    models: Mapping[str, Mapping[str, Any]] | None,
    gpus: Mapping[str, Mapping[str, Any]] | None,
) -> _Catalogue:
    if functions is None:
        from drill.calc.expressions import NAMES

        functions = NAMES
    if models is None or gpus is None:
        from drill.calc.data import load_gpus, load_models

        models = load_models() if models is None else models
        gpus = load_gpus() if gpus is None else gpus
    return _Catalogue(functions, models, gpus)


def _resolve(name: str, value: Any, spec: Mapping[str, Any], cat: _Catalogue) -> Any:
    for kind, table in (("model", cat.models), ("gpu", cat.gpus)):
        if kind in spec:
            if value not in table:
                known = ", ".join(sorted(table)) or "none"
                raise TemplateProblem(f"unknown {kind} {value!r} (known: {known})", f"params.{name}")
            mapping = dict(table[value])
            mapping.setdefault("name", value)
            return mapping
    return value


def _scope(card: Card, draw: Mapping[str, Any], cat: _Catalogue) -> dict[str, Any]:
    params = _params(card)
    missing = [name for name in params if name not in draw]
    if missing:
        raise TemplateProblem(f"the draw lacks {', '.join(missing)}", "params")
    scope = dict(cat.names)
    for name, spec in params.items():
        scope[name] = _resolve(name, draw[name], spec, cat)
    return scope


def _entries(card: Card, key: str) -> list[dict[str, Any]]:
    entries = card.fields.get(key) or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise TemplateProblem("must be a list of mappings", key)
    return entries


def render(
    card: Card,
    draw: Mapping[str, Any],
    *,
    functions: Mapping[str, Any] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    gpus: Mapping[str, Mapping[str, Any]] | None = None,
) -> Rendered:
    """The card's text and expected answers for one draw; raises TemplateProblem.

    `functions`, `models` and `gpus` default to the calculators' tables
    (drill.calc.expressions.NAMES, cards/data/models.yaml and gpus.yaml).
    """
    cat = _catalogue(functions, models, gpus)
    scope = _scope(card, draw, cat)
    answers = []
    for i, entry in enumerate(_entries(card, "answers")):
        where = f"answers[{i}]"
        tolerance = entry.get("tolerance", DEFAULT_TOLERANCE)
        value = evaluate(str(entry.get("expr", "")), scope, f"{where}.expr")
        answers.append(ExpectedAnswer(str(entry.get("label", "")), value, str(entry.get("unit", "")), float(tolerance)))
    ledger = []
    for i, entry in enumerate(_entries(card, "ledger")):
        where = f"ledger[{i}]"
        formula = render_text(str(entry.get("formula", "")), scope, f"{where}.formula")
        value = evaluate(str(entry.get("expr", "")), scope, f"{where}.expr")
        ledger.append(LedgerTerm(str(entry.get("term", "")), formula, value, str(entry.get("unit", ""))))
    return Rendered(
        prompt=render_text(card.prompt, scope, "prompt"),
        answers=answers,
        ledger=ledger,
        answer=render_text(card.answer, scope, "answer"),
    )


# --- checking a card ------------------------------------------------------------


def _entry_problems(entries: Any, key: str, spec: dict[str, bool], names: Mapping[str, Any]) -> list[str]:
    if key == "answers" and (not isinstance(entries, list) or not entries):
        return ["`answers` needs at least one entry"]
    if not isinstance(entries, list):
        return [f"`{key}` must be a list"]
    problems = []
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a mapping with {', '.join(spec)}")
            continue
        for k in entry:
            if k not in spec:
                problems.append(f"{where}: unknown key {k!r} (expected {', '.join(spec)})")
        for k, required in spec.items():
            if k not in entry:
                if required:
                    problems.append(f"{where}: missing `{k}`")
                continue
            value = entry[k]
            if k == "tolerance":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 0.5:
                    problems.append(
                        f"{where}.tolerance: a relative tolerance between 0 (exact) and 0.5, got {value!r}"
                    )
            elif not isinstance(value, str) or not value.strip():
                problems.append(f"{where}.{k}: expected non-empty text")
            elif k == "unit" and value not in CARD_UNITS:
                problems.append(f"{where}.unit: unknown unit {value!r} (known: {', '.join(CARD_UNITS)})")
            elif k == "expr":
                problems += [f"{where}.expr: {p}" for p in expression_problems(value, names)]
            elif k == "formula":
                problems += [f"{where}.formula: {p}" for p in template_problems(value, names)]
    return problems


def _check_draws(card: Card, params: Mapping[str, Any], seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    draws = [draw_params(card, rng) for _ in range(CHECK_DRAWS)]
    corners = []
    for name, spec in params.items():
        for option in dict.fromkeys(map(repr, _options(spec))):
            base = draw_params(card, rng)
            base[name] = next(o for o in _options(spec) if repr(o) == option)
            corners.append(base)
    if len(corners) > MAX_CORNER_DRAWS:
        corners = rng.sample(corners, MAX_CORNER_DRAWS)
    return draws + corners


def check_ledger_card(
    card: Card,
    *,
    functions: Mapping[str, Any] | None = None,
    models: Mapping[str, Mapping[str, Any]] | None = None,
    gpus: Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = CHECK_SEED,
) -> list[str]:
    """Problems of a memory_ledger card (empty when it is fine).

    Checks parameter specs, the allow-list on every template and expression,
    then renders several seeded draws plus every model, GPU and choice and
    both ends of every range: each must render, and each expression must give
    a finite number (answers: non-zero and not negative).
    """
    try:
        cat = _catalogue(functions, models, gpus)
    except Exception as e:  # noqa: BLE001 - the calculator data itself is broken or missing
        return [f"cannot load the calculators to check this card: {type(e).__name__}: {e}"]
    problems: list[str] = []
    params = card.fields.get("params")
    if not isinstance(params, dict):
        return ["`params` must be a mapping of parameter name to spec"]
    for name, spec in params.items():
        problem = _spec_problem(name, spec)
        if problem:
            problems.append(problem)
            continue
        if name in cat.names:
            problems.append(f"params.{name}: the name hides the function or constant {name!r}")
        for kind, table in (("model", cat.models), ("gpu", cat.gpus)):
            for value in spec.get(kind, []):
                if value not in table:
                    problems.append(f"params.{name}: unknown {kind} {value!r} (known: {', '.join(sorted(table))})")
    names = {**cat.names, **{str(name): None for name in params}}
    problems += [f"prompt: {p}" for p in template_problems(card.prompt, names)]
    problems += [f"answer: {p}" for p in template_problems(card.answer, names)]
    problems += _entry_problems(card.fields.get("answers"), "answers", ANSWER_KEYS, names)
    problems += _entry_problems(card.fields.get("ledger", []), "ledger", LEDGER_KEYS, names)
    if problems:
        return list(dict.fromkeys(problems))
    seen: set[str] = set()
    for draw in _check_draws(card, params, seed):
        shown = ", ".join(f"{k}={v}" for k, v in draw.items()) or "no parameters"
        try:
            rendered = render(card, draw, functions=cat.names, models=cat.models, gpus=cat.gpus)
        except TemplateProblem as e:
            if e.where not in seen:
                seen.add(e.where)
                problems.append(f"{e} (with {shown})")
            continue
        for i, a in enumerate(rendered.answers):
            where = f"answers[{i}]"
            if where in seen:
                continue
            if a.value == 0 and a.tolerance > 0:
                problems.append(
                    f"{where}.expr: gives 0 (with {shown}); a relative tolerance cannot check 0 (use tolerance: 0)"
                )
                seen.add(where)
            elif a.value < 0:
                problems.append(f"{where}.expr: gives a negative value {a.value:g} (with {shown})")
                seen.add(where)
            elif a.tolerance == 0 and not a.value.is_integer():
                problems.append(
                    f"{where}: tolerance 0 asks for an exact answer, but the expr gives {a.value!r} (with {shown})"
                )
                seen.add(where)
    return problems
