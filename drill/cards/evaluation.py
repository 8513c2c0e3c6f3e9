"""Reading, compiling and running card templates and expressions: the allow-list first, then the sandbox."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TypeVar

from jinja2 import TemplateSyntaxError, nodes
from jinja2.environment import Template, TemplateExpression
from jinja2.exceptions import SecurityError
from jinja2.parser import Parser

from drill.cards.allowlist import node_problems
from drill.cards.sandbox import CALLABLE_NOW, ENV, MAX_RENDERED_CHARS
from drill.cards.template_records import TemplateProblem

MAX_TEMPLATE_CHARS = 20_000
MAX_EXPRESSION_CHARS = 2_000


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


def template_problems(source: str, names: Mapping[str, object]) -> list[str]:
    """Why `source` may not be used as card text given the available `names`; empty when it may."""
    try:
        ast = _parse_template(source)
    except TemplateProblem as e:
        return [e.message]
    return node_problems(ast, names)


def expression_problems(source: str, names: Mapping[str, object]) -> list[str]:
    """Why `source` may not be used as a card expression; empty when it may."""
    try:
        expr = _parse_expression(source)
    except TemplateProblem as e:
        return [e.message]
    return node_problems(expr, names)


class Scope(dict[str, object]):
    """Names for many templates and expressions in a row: the functions among them are found once."""

    def __init__(self, names: Mapping[str, object]) -> None:
        super().__init__(names)
        self.callables: tuple[object, ...] = tuple(v for v in self.values() if callable(v))


def _callables(names: Mapping[str, object]) -> tuple[object, ...]:
    if isinstance(names, Scope):
        return names.callables
    return tuple(v for v in names.values() if callable(v))


Result = TypeVar("Result")


def _run(fn: Callable[[], Result], allowed: tuple[object, ...], where: str) -> Result:
    token = CALLABLE_NOW.set(allowed)
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
        CALLABLE_NOW.reset(token)


def render_text(source: str, names: Mapping[str, object], where: str = "template") -> str:
    """Render card text in the sandbox with `names` (functions and parameters) in scope."""
    problems = template_problems(source, names)
    if problems:
        raise TemplateProblem("; ".join(problems), where)
    allowed = _callables(names)
    template = _run(lambda: _compiled_template(source), allowed, where)
    text = _run(lambda: template.render(dict(names)), allowed, where)
    if len(text) > MAX_RENDERED_CHARS:
        raise TemplateProblem(f"rendered text longer than {MAX_RENDERED_CHARS} characters", where)
    return str(text)


def evaluate(source: str, names: Mapping[str, object], where: str = "expr") -> float:
    """Evaluate a card expression in the sandbox; the result must be a finite real number."""
    problems = expression_problems(source, names)
    if problems:
        raise TemplateProblem("; ".join(problems), where)
    allowed = _callables(names)
    compiled = _run(lambda: _compiled_expression(source), allowed, where)
    value = _run(lambda: compiled(**names), allowed, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TemplateProblem(f"gives {type(value).__name__} {str(value)[:60]!r}, not a number", where)
    try:
        result = float(value)
    except OverflowError:
        raise TemplateProblem("number too large", where) from None
    if not math.isfinite(result):
        raise TemplateProblem(f"gives {result}, not a finite number", where)
    return result
