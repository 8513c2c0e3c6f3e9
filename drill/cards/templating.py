"""Parameterised cards: drawing parameters, rendering their text and expressions in a sandbox, and checking them.

A shared deck must never run code or read files on the learner's machine, so
card templates go through several fences:

- a parse-time allow-list (drill.cards.allowlist): only output, `{% if %}`,
  literals, names, arithmetic, comparisons, attribute and item access, calls
  of the listed functions, and a short list of filters and tests. No
  `{% for %}`, `{% set %}`, `{% macro %}`, `{% include %}`, `{% import %}`,
  `{% extends %}` or blocks; no name or attribute that starts with an
  underscore; only names the card defines (its parameters and the calculator
  functions);
- Jinja2's immutable sandbox (drill.cards.sandbox) with no loader and no
  default globals, where an attribute is readable only if it is plain data
  (never a method) and only the listed functions may be called;
- bounds on the work: every arithmetic operator is checked before it runs
  (no `10**10**10`, no `'x' * 10**10`, no printf widths in the millions),
  templates and expressions have a size limit, and so does the rendered text
  (drill.cards.evaluation).

Without loops, macros or assignments, the work a template can do grows only
with its length.

The work is split by job: drill.cards.param_specs draws parameters,
drill.cards.rendering renders one draw, drill.cards.ledger_check checks a
card for the deck check. This module gathers the names callers import.
"""

from __future__ import annotations

from drill.cards.evaluation import (
    MAX_EXPRESSION_CHARS,
    MAX_TEMPLATE_CHARS,
    evaluate,
    expression_problems,
    render_text,
    template_problems,
)
from drill.cards.ledger_check import (
    ANSWER_KEYS,
    CHECK_DRAWS,
    CHECK_SEED,
    LEDGER_KEYS,
    MAX_CORNER_DRAWS,
    check_ledger_card,
)
from drill.cards.number_check import DEFAULT_TOLERANCE
from drill.cards.param_specs import PARAM_KINDS, draw_params
from drill.cards.rendering import render
from drill.cards.sandbox import (
    ENV,
    FILTERS,
    MAX_INT_BITS,
    MAX_RENDERED_CHARS,
    MAX_STRING_PRODUCT,
    TESTS,
    CardSandbox,
)
from drill.cards.template_records import ExpectedAnswer, LedgerTerm, Rendered, TemplateProblem

__all__ = [
    "ANSWER_KEYS",
    "CHECK_DRAWS",
    "CHECK_SEED",
    "DEFAULT_TOLERANCE",
    "ENV",
    "FILTERS",
    "LEDGER_KEYS",
    "MAX_CORNER_DRAWS",
    "MAX_EXPRESSION_CHARS",
    "MAX_INT_BITS",
    "MAX_RENDERED_CHARS",
    "MAX_STRING_PRODUCT",
    "MAX_TEMPLATE_CHARS",
    "PARAM_KINDS",
    "TESTS",
    "CardSandbox",
    "ExpectedAnswer",
    "LedgerTerm",
    "Rendered",
    "TemplateProblem",
    "check_ledger_card",
    "draw_params",
    "evaluate",
    "expression_problems",
    "render",
    "render_text",
    "template_problems",
]
