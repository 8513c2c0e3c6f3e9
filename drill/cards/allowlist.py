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
from typing import Any

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


def node_problems(root: nodes.Node, names: Mapping[str, Any]) -> list[str]:
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
