"""Guards that keep a hostile YAML file from exhausting memory, the stack or the C reader.

Used by the loader before and while it builds cards: alias bombs and deep nesting
are measured on the node graph, and a file nested too deeply for libyaml is
refused before it is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_VALUES = 100_000  # values one card may expand to, aliases counted each time they are used
MAX_DEPTH = 64  # nesting a card may have
FILE_MAX_DEPTH = 5_000  # beyond some tens of thousands of levels the YAML reader itself crashes


def _children(node: yaml.Node) -> list[yaml.Node]:
    """The nodes a sequence or mapping holds: a mapping's keys and values alike."""
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return list(node.value)


def expanded_size(node: yaml.Node) -> tuple[int, int]:
    """(values, depth) of a node tree once aliases are expanded, computed without expanding them."""
    sizes: dict[int, tuple[int, int]] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, children_done = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        if isinstance(current, yaml.ScalarNode):
            sizes[key] = (1, 1)
            continue
        kids = _children(current)
        if not children_done:
            stack.append((current, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes and k is not current)
            continue
        values = 1
        depth = 1
        for k in kids:
            kv, kd = sizes.get(id(k), (MAX_VALUES + 1, MAX_DEPTH + 1))  # a node that holds itself
            values += kv
            depth = max(depth, kd + 1)
        sizes[key] = (min(values, 10 * MAX_VALUES), min(depth, 10 * MAX_DEPTH))
    return sizes[id(node)]


_BRACKETS = re.compile(r"[^\[\]{}]+")


@dataclass(frozen=True)
class FileShape:
    """What a cheap look at a deck file's text says about reading it safely."""

    too_deep_at: int | None  # the line where nesting passes FILE_MAX_DEPTH, which would crash the YAML reader
    measure_cards: bool  # anchors (so aliases can multiply values) or deep nesting: measure each card first


_EMPTY_PAIR = re.compile(r"\[\]|\{\}")


def _nested_beyond(brackets: str, limit: int) -> bool:
    """Whether brackets nest more than `limit` deep: each round strips the innermost pairs.

    Brackets inside quoted text may leave some unmatched; a long run of openers left over still counts.
    """
    for _ in range(limit + 1):
        brackets, stripped = _EMPTY_PAIR.subn("", brackets)
        if not stripped:
            return re.search(rf"[\[{{]{{{limit + 1},}}", brackets) is not None
    return True


_ANCHOR = re.compile(r"&[^\s\[\]{},]")


def _has_anchor(text: str) -> bool:
    """A YAML anchor (`&name` after a space, a bracket, a comma, `:` or `-`): aliases can then repeat values."""
    return any(m.start() == 0 or text[m.start() - 1] in " \t\r\n[{,:-" for m in _ANCHOR.finditer(text))


def _indented_beyond(text: str, spaces: int) -> bool:
    run = " " * (spaces + 1)
    return text.startswith(run) or "\n" + run in text


def _deepest(brackets: str) -> int:
    """The deepest the brackets nest, read left to right; an unmatched opener in quoted text counts as nesting
    (the careful look then decides), an unmatched closer lets go of nothing. A deck of many cards, each with its
    own lists, nests two or three deep however many brackets it has."""
    depth = 0
    deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def file_shape(text: str) -> FileShape:
    """Cheap looks at the text decide whether to look closer; only then are the parser's events counted."""
    brackets = _BRACKETS.sub("", text)
    measure = _has_anchor(text) or _indented_beyond(text, 2 * MAX_DEPTH) or _nested_beyond(brackets, MAX_DEPTH)
    if _deepest(brackets) <= FILE_MAX_DEPTH and not _indented_beyond(text, FILE_MAX_DEPTH):
        return FileShape(None, measure)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > FILE_MAX_DEPTH:
                    mark = event.start_mark
                    return FileShape(mark.line + 1 if mark is not None else 0, True)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        pass  # the reader reports the syntax error with its line
    return FileShape(None, True)
