"""The parse-time allow-list: which parts of Jinja2 a card template or expression may use.

Only output, `{% if %}`, literals, names, arithmetic, comparisons, attribute
and item access, calls of the listed functions, and a short list of filters
and tests. No `{% for %}`, `{% set %}`, `{% macro %}`, `{% include %}`,
`{% import %}`, `{% extends %}` or blocks; no name or attribute that starts
with an underscore; only names the card defines (its parameters and the
calculator functions).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from jinja2 import nodes

from drill.cards.sandbox import FILTERS, TESTS

_ALLOWED_NODES: tuple[type[nodes.Node], ...] = (
    nodes.Template,
    nodes.Output,
    nodes.TemplateData,
    nodes.If,
    nodes.Name,
    nodes.Const,
    nodes.Tuple,
    nodes.List,
    nodes.Dict,
    nodes.Pair,
    nodes.Keyword,
    nodes.CondExpr,
    nodes.BinExpr,
    nodes.UnaryExpr,
    nodes.Compare,
    nodes.Operand,
    nodes.Concat,
    nodes.Getattr,
    nodes.Getitem,
    nodes.Slice,
    nodes.Call,
    nodes.Filter,
    nodes.Test,
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
_JINJA_NAMES = {
    "range",
    "lipsum",
    "cycler",
    "joiner",
    "namespace",
    "dict",
    "self",
    "loop",
    "caller",
    "super",
    "varargs",
    "kwargs",
}


def node_problems(root: nodes.Node, names: Mapping[str, object]) -> list[str]:
    """Why a parsed template or expression may not run; empty when it may."""
    problems: list[str] = []
    for what, text in _checks(root):
        if what == "problem":
            problems.append(text)
        elif what == "name":
            if text in _JINJA_NAMES and text not in names:
                problems.append(f"{text!r} is not available in cards")
            elif text not in names:
                problems.append(f"unknown name {text!r}")
        elif text in names and not callable(names[text]):
            problems.append(f"{text!r} is not a function")
    return list(dict.fromkeys(problems))


# A tree's checks in the order the walk meets them: fixed problems, and the names
# whose verdict depends on what a card defines. Trees come from the parse caches,
# so one walk serves every render of the same text.
@lru_cache(maxsize=2048)
def _checks(root: nodes.Node) -> tuple[tuple[str, str], ...]:
    checks: list[tuple[str, str]] = []

    def problem(text: str) -> None:
        checks.append(("problem", text))

    def visit(node: nodes.Node) -> None:
        if not isinstance(node, _ALLOWED_NODES):
            what = _TAG_NAMES.get(type(node), f"{type(node).__name__} is")
            why = ": cards cannot read files" if isinstance(node, _READS_FILES) else ""
            problem(f"{what} not allowed in cards{why}")
            return
        if isinstance(node, nodes.Name):
            if node.name.startswith("_"):
                problem(f"name {node.name!r} not allowed (leading underscore)")
            else:
                checks.append(("name", node.name))
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            problem(f"attribute {node.attr!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            if isinstance(node.arg.value, str) and node.arg.value.startswith("_"):
                problem(f"item {node.arg.value!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Call):
            if not isinstance(node.node, nodes.Name):
                problem("only the listed functions can be called, by name (no methods)")
            else:
                checks.append(("call", node.node.name))
        elif isinstance(node, nodes.Filter) and node.name not in FILTERS:
            problem(f"filter {node.name!r} not allowed (allowed: {', '.join(sorted(FILTERS))})")
        elif isinstance(node, nodes.Keyword) and node.key == "attribute" and isinstance(node.value, nodes.Const):
            if any(part.startswith("_") for part in str(node.value.value).split(".")):
                problem(f"attribute {node.value.value!r} not allowed (leading underscore)")
        elif isinstance(node, nodes.Test) and node.name not in TESTS:
            problem(f"test {node.name!r} not allowed")
        for child in node.iter_child_nodes():
            visit(child)

    try:
        visit(root)
    except RecursionError:
        problem("nested too deeply")
    return tuple(checks)
