"""Reading a typed shape into its dimensions, each a list of tokens (the rules are in drill.cards.shapes)."""

from __future__ import annotations

import re
from itertools import pairwise


class ShapeError(ValueError):
    """Text that cannot be read as a shape."""


# A token is (kind, text); kind is ident, number, op, open, close, comma, times or ellipsis.
NAME = r"[^\W\d][\w']*"  # a symbol: letters of any script (B, Dh, γ), digits, _ and '
_TOKEN = re.compile(
    rf"\s*(?:(?P<ellipsis>\.\.\.|…)|(?P<number>\d+(?:_\d+)*(?:\.\d+)?)|(?P<ident>{NAME})"
    r"|(?P<op>//|\*\*|[-+*/^%])|(?P<open>[(\[])|(?P<close>[)\]])|(?P<comma>,)|(?P<times>×))"
)
_TRANSLATE = str.maketrans({"·": "*", "⋅": "*", "−": "-", "–": "-", "（": "(", "）": ")"})
_X_SEPARATOR = re.compile(r"(?<=[A-Z0-9)\]])x(?=[A-Z0-9(\[])|\s+x\s+")
_PREFIX = re.compile(rf"^\s*{NAME}\s*[:=]\s*")
_TORCH_SIZE = re.compile(r"\s*torch\.Size\s*\((.*)\)\s*", re.DOTALL | re.IGNORECASE)
OPERAND_END = ("ident", "number", "close", "ellipsis")
OPERAND_START = ("ident", "number", "open", "ellipsis")


def tokenize(text: str) -> list[tuple[str, str]]:
    """The tokens of `text`: numbers lose their underscores, `**` becomes `^`, `…` becomes `...`."""
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ShapeError(f"cannot read {text[pos:].strip()[:20]!r} in a shape")
        kind = m.lastgroup or ""
        value = m[kind]
        if kind == "number":
            value = value.replace("_", "")
            if "." not in value:
                value = str(int(value))
        elif kind == "op" and value == "**":
            value = "^"
        elif kind == "ellipsis":
            value = "..."
        out.append((kind, value))
        pos = m.end()
    return out


def strip_outer(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop one pair of brackets when it encloses everything."""
    if len(tokens) >= 2 and tokens[0][0] == "open" and tokens[-1][0] == "close":
        depth = 0
        for i, (kind, _) in enumerate(tokens):
            depth += kind == "open"
            depth -= kind == "close"
            if depth == 0 and i < len(tokens) - 1:
                return tokens
        return tokens[1:-1]
    return tokens


def split_dims(tokens: list[tuple[str, str]], bracketed: bool) -> list[list[tuple[str, str]]]:
    """Cut a shape's tokens into dimensions (see the module notes for the rules)."""
    depth = 0
    top = []  # (index, kind, value) of the tokens outside any bracket
    for i, (kind, value) in enumerate(tokens):
        if kind == "open":
            depth += 1
            if depth == 1:
                top.append((i, kind, value))
        elif kind == "close":
            depth -= 1
            if depth < 0:
                raise ShapeError("a closing bracket without an opening one")
            if depth == 0:
                top.append((i, kind, value))
        elif depth == 0:
            top.append((i, kind, value))
    if depth != 0:
        raise ShapeError("unbalanced brackets")
    kinds = {kind for _, kind, _ in top}
    ops = {value for _, kind, value in top if kind == "op"}
    separators: set[int] = set()
    starts: set[int] = set()
    if "comma" in kinds:
        separators = {i for i, kind, _ in top if kind == "comma"}
        tokens = [("op", "*") if kind == "times" else (kind, value) for kind, value in tokens]
    elif "times" in kinds:
        separators = {i for i, kind, _ in top if kind == "times"}
    elif not bracketed and ops == {"*"}:
        separators = {i for i, kind, value in top if kind == "op"}
    else:
        for (j, before, _), (i, kind, _) in pairwise(top):
            call = before == "ident" and kind == "open" and j == i - 1
            if before in OPERAND_END and kind in OPERAND_START and not call:
                starts.add(i)
    groups: list[list[tuple[str, str]]] = [[]]
    for i, tok in enumerate(tokens):
        if i in separators or i in starts:
            groups.append([])
        if i not in separators:
            groups[-1].append(tok)
    if len(groups) > 1 and not groups[-1] and "comma" in kinds:
        groups.pop()  # (B,) is one dimension
    return groups


def check_dimension(tokens: list[tuple[str, str]]) -> None:
    """A dimension must be an arithmetic expression of names and numbers."""
    pos = 0

    def peek() -> tuple[str, str] | None:
        return tokens[pos] if pos < len(tokens) else None

    def expr() -> None:
        nonlocal pos
        unary()
        while (tok := peek()) is not None and tok[0] in ("op", "times"):
            pos += 1
            unary()

    def unary() -> None:
        nonlocal pos
        tok = peek()
        if tok is not None and tok == ("op", "-"):
            pos += 1
            return unary()
        atom()

    def atom() -> None:
        nonlocal pos
        tok = peek()
        if tok is None:
            raise ShapeError("a dimension ends with an operator")
        kind, value = tok
        pos += 1
        if kind in ("number", "ellipsis"):
            return
        if kind == "ident":
            if (nxt := peek()) is not None and nxt[0] == "open":
                pos += 1
                args()
            return
        if kind == "open":
            expr()
            if (tok := peek()) is None or tok[0] != "close":
                raise ShapeError("unbalanced brackets")
            pos += 1
            return
        raise ShapeError(f"unexpected {value!r} in a dimension")

    def args() -> None:
        nonlocal pos
        while True:
            expr()
            tok = peek()
            if tok is None:
                raise ShapeError("unbalanced brackets")
            pos += 1
            if tok[0] == "close":
                return
            if tok[0] != "comma":
                raise ShapeError(f"unexpected {tok[1]!r} in a dimension")

    if not tokens:
        raise ShapeError("an empty dimension")
    expr()
    if pos != len(tokens):
        raise ShapeError(f"unexpected {tokens[pos][1]!r} in a dimension")


def read_dims(text: str) -> list[list[tuple[str, str]]]:
    """The dimensions of a typed shape, each as its tokens; raises ShapeError if it is not a shape."""
    if not isinstance(text, str):
        raise ShapeError("a shape must be text")
    if len(text) > 500:
        raise ShapeError("shape longer than 500 characters")
    if not text.strip():
        raise ShapeError("no shape given")
    text = _PREFIX.sub("", text.translate(_TRANSLATE), count=1)
    if m := _TORCH_SIZE.fullmatch(text):
        text = m[1]
    text = _X_SEPARATOR.sub("×", text)
    tokens = tokenize(text)
    inner = strip_outer(tokens)
    bracketed = inner is not tokens
    if not inner:
        return []  # () is a scalar
    groups = split_dims(inner, bracketed)
    for group in groups:
        check_dimension(group)
    return groups
