"""Checking the answers of shape_trace and diagnosis cards, the deeper deck checks of both kinds, and grade suggestion.

Shapes. A typed shape is read as a list of dimensions:

- brackets are optional: `(B, S, D)`, `[B, S, D]`, `B, S, D`, `torch.Size([B, S, D])`
  and a leading `Q:` or `Q =` are all the same;
- with commas, commas separate the dimensions and `×`, `x`, `·`, `*` inside
  one dimension multiply (`(B, S, H*Dh)`);
- without commas, `×` (or an `x` between capitals/digits, or ` x ` with spaces)
  separates: `B×S×D`, `BxSxD`, `4096 x 8192`; so does `*` when the shape has
  no brackets at all (`B*S*D`), while `(B*S*D)` is one flattened dimension;
- otherwise spaces separate (`B S D`), and spaces around operators are ignored
  (`D / H` is `D/H`);
- within a dimension, factors of a plain product are compared in any order
  (`Dh*H` is `H*Dh`), redundant outer parentheses are dropped, `**` is `^`,
  and `_` between digits is ignored (`32_768`). A comma is never a thousands
  separator here: `256,128` is two dimensions.
- a card's `aliases` map a symbol to other accepted spellings, as whole
  dimensions or as single names: `{Dh: ["D/H", head_dim]}` makes `D/H`,
  `head_dim` and `Dh` the same; `H*Dh` equals `D` only if the card says so.

Case: letters keep their case, and `b` is not `B` on a card that uses two
symbols differing only in case (e.g. `d` and `D`). On every other card a
learner's `(b, s, d)` matches `(B, S, D)`: there is nothing to confuse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from drill.cards.model import Card


class ShapeError(ValueError):
    """Text that cannot be read as a shape."""


@dataclass(frozen=True)
class StepResult:
    label: str
    expected: str
    given: str
    ok: bool


# --- reading a shape ---------------------------------------------------------------

_NAME = r"[^\W\d][\w']*"  # a symbol: letters of any script (B, Dh, γ), digits, _ and '
_TOKEN = re.compile(
    rf"\s*(?:(?P<ellipsis>\.\.\.|…)|(?P<number>\d+(?:_\d+)*(?:\.\d+)?)|(?P<ident>{_NAME})"
    r"|(?P<op>//|\*\*|[-+*/^%])|(?P<open>[(\[])|(?P<close>[)\]])|(?P<comma>,)|(?P<times>×))"
)
_TRANSLATE = str.maketrans({"·": "*", "⋅": "*", "−": "-", "–": "-", "（": "(", "）": ")"})
_X_SEPARATOR = re.compile(r"(?<=[A-Z0-9)\]])x(?=[A-Z0-9(\[])|\s+x\s+")
_PREFIX = re.compile(rf"^\s*{_NAME}\s*[:=]\s*")
_TORCH_SIZE = re.compile(r"\s*torch\.Size\s*\((.*)\)\s*", re.DOTALL | re.IGNORECASE)
OPERAND_END = ("ident", "number", "close", "ellipsis")
OPERAND_START = ("ident", "number", "open", "ellipsis")


def _tokens(text: str) -> list[tuple[str, str]]:
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


def _strip_outer(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
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


def _split(tokens: list[tuple[str, str]], bracketed: bool) -> list[list[tuple[str, str]]]:
    """Cut a shape's tokens into dimensions (see the module notes for the rules)."""
    depth, top = 0, []  # (index, kind, value) of the tokens outside any bracket
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


def _check_expression(tokens: list[tuple[str, str]]) -> None:
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


def _render(tokens: list[tuple[str, str]]) -> str:
    while True:
        inner = _strip_outer(tokens)
        if inner is tokens:
            break
        tokens = inner
    depth, factors, current, plain = 0, [], [], True
    for kind, value in tokens:
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        if depth == 0 and (kind, value) in (("op", "*"), ("times", "×")):
            factors.append(current)
            current = []
            continue
        if depth == 0 and kind in ("op", "comma"):
            plain = False
        current.append((kind, value))
    factors.append(current)
    texts = ["".join("*" if k == "times" else v for k, v in f) for f in factors]
    if plain and len(texts) > 1:
        texts.sort(key=lambda t: (not t[:1].isdigit(), t))
    return "*".join(texts)


def _dims(text: str) -> list[list[tuple[str, str]]]:
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
    tokens = _tokens(text)
    inner = _strip_outer(tokens)
    bracketed = inner is not tokens
    if not inner:
        return []  # () is a scalar
    groups = _split(inner, bracketed)
    for group in groups:
        _check_expression(group)
    return groups


def _canonical_dim(text: str) -> str:
    """One dimension (an alias or its spelling): `*` inside it always multiplies."""
    if not text.strip():
        raise ShapeError("an empty dimension")
    dims = _dims(f"({text})")
    if len(dims) != 1:
        raise ShapeError(f"{text!r} is not a single dimension")
    return _render(dims[0])


def _alias_table(aliases: Mapping[str, Any] | None, fold: bool) -> dict[str, str]:
    table: dict[str, str] = {}
    for symbol, spellings in (aliases or {}).items():
        if isinstance(spellings, str):
            spellings = [spellings]
        target = _canonical_dim(str(symbol).casefold() if fold else str(symbol))
        for spelling in spellings or []:
            spelling = str(spelling).casefold() if fold else str(spelling)
            table[_canonical_dim(spelling)] = target
    return table


def _apply_aliases(tokens: list[tuple[str, str]], table: Mapping[str, str]) -> str:
    text = _render(tokens)
    for _ in range(4):
        if text in table:
            text = table[text]
            continue
        swapped = [
            (kind, table[value]) if kind == "ident" and value in table and _is_name(table[value]) else (kind, value)
            for kind, value in _tokens(text)
        ]
        # a name that stands for an expression is spliced in with brackets
        spliced: list[tuple[str, str]] = []
        for kind, value in swapped:
            if kind == "ident" and value in table and not _is_name(table[value]):
                spliced += [("open", "(")] + _tokens(table[value]) + [("close", ")")]
            else:
                spliced.append((kind, value))
        new = _render(spliced)
        if new == text:
            break
        text = new
    return text


def _is_name(text: str) -> bool:
    return re.fullmatch(_NAME, text) is not None


def normalise_shape(text: str, aliases: Mapping[str, Any] | None = None, *, fold_case: bool = False) -> tuple[str, ...]:
    """The dimensions of a typed shape in a canonical spelling; raises ShapeError if it is not a shape.

    `aliases` maps a symbol to its other accepted spellings. With `fold_case`
    letters are compared without case (see the module notes).
    """
    if fold_case:
        text = text.casefold()
    table = _alias_table(aliases, fold_case)
    return tuple(_apply_aliases(group, table) for group in _dims(text))


def _names_in(texts: Iterable[str]) -> set[str]:
    names: set[str] = set()
    for text in texts:
        names.update(re.findall(_NAME, str(text)))
    return names


def case_matters(card: Card) -> bool:
    """True when a symbol of the card's shapes differs only in case from another symbol it uses.

    The symbols are the names in the steps' shapes and the aliases; the
    `given` line counts too, but only against those symbols (its prose has
    words such as "Diffusion" and "diffusion" that are no symbols).
    """
    aliases = card.fields.get("aliases") or {}
    texts = [str(s.get("shape", "")) for s in card.fields.get("steps", []) if isinstance(s, dict)]
    for symbol, spellings in aliases.items():
        texts.append(str(symbol))
        texts += [spellings] if isinstance(spellings, str) else [str(s) for s in spellings or []]
    symbols = _names_in(texts)
    everything = symbols | _names_in([str(card.fields.get("given", ""))])
    folded: dict[str, set[str]] = {}
    for name in everything:
        folded.setdefault(name.casefold(), set()).add(name)
    return any(len(folded[name.casefold()]) > 1 for name in symbols)


def check_shape_steps(card: Card, answers: Sequence[str]) -> list[StepResult]:
    """Each step of a shape_trace card against the learner's answer for it (missing answers are wrong)."""
    aliases = card.fields.get("aliases") or {}
    fold = not case_matters(card)
    results = []
    for i, step in enumerate(card.fields.get("steps", [])):
        expected = str(step["shape"])
        given = answers[i] if i < len(answers) else ""
        try:
            ok = bool(given.strip()) and normalise_shape(given, aliases, fold_case=fold) == normalise_shape(
                expected, aliases, fold_case=fold
            )
        except ShapeError:
            ok = False
        results.append(StepResult(str(step["label"]), expected, given, ok))
    return results


def check_shape_card(card: Card) -> list[str]:
    """Problems of a shape_trace card beyond field presence and types."""
    problems: list[str] = []
    given = card.fields.get("given")
    if not isinstance(given, str) or not given.strip():
        problems.append("`given` must be non-empty text")
    aliases = card.fields.get("aliases") or {}
    seen: dict[str, str] = {}
    if not isinstance(aliases, dict):
        problems.append("`aliases` must map a symbol to a list of other spellings")
        aliases = {}
    for symbol, spellings in aliases.items():
        if isinstance(spellings, str):
            spellings = [spellings]
        if not isinstance(symbol, str) or not isinstance(spellings, list) or not spellings:
            problems.append(f"aliases.{symbol}: expected a symbol with a list of spellings")
            continue
        try:
            target = _canonical_dim(symbol)
        except ShapeError as e:
            problems.append(f"aliases.{symbol}: {e}")
            continue
        for spelling in spellings:
            if not isinstance(spelling, str) or not spelling.strip():
                problems.append(f"aliases.{symbol}: spellings must be non-empty text, got {spelling!r}")
                continue
            try:
                canonical = _canonical_dim(spelling)
            except ShapeError as e:
                problems.append(f"aliases.{symbol}: {spelling!r}: {e}")
                continue
            if canonical == target:
                problems.append(f"aliases.{symbol}: {spelling!r} is the symbol itself")
            elif canonical in seen and seen[canonical] != target:
                problems.append(f"aliases: {spelling!r} stands for both {seen[canonical]!r} and {target!r}")
            seen[canonical] = target
    steps = card.fields.get("steps")
    if not isinstance(steps, list) or not steps:
        return problems + ["`steps` needs at least one step"]
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(f"{where}: expected a mapping with `label` and `shape`")
            continue
        for key in step:
            if key not in ("label", "shape"):
                problems.append(f"{where}: unknown key {key!r} (expected label, shape)")
        label, shape = step.get("label"), step.get("shape")
        if not isinstance(label, str) or not label.strip():
            problems.append(f"{where}: `label` must be non-empty text")
        if not isinstance(shape, str) or not shape.strip():
            problems.append(f"{where}: `shape` must be non-empty text (quote it: \"(4096)\")")
            continue
        try:
            normalise_shape(shape, aliases if not problems else None)
        except ShapeError as e:
            problems.append(f"{where}.shape: {e}")
    return problems


# --- diagnosis -----------------------------------------------------------------------


def _choice_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().strip(".").casefold()


def _index(choice: str | int, n: int) -> int | None:
    """A 0-based index from "2" / 2 (1-based) or "b" (letter), else None."""
    if isinstance(choice, int) and not isinstance(choice, bool):
        return choice - 1 if 1 <= choice <= n else -1
    text = str(choice).strip().rstrip(".)")
    if text.isdigit():
        return int(text) - 1 if 1 <= int(text) <= n else -1
    if len(text) == 1 and text.isalpha() and text.isascii():
        i = ord(text.lower()) - ord("a")
        return i if i < n else -1
    return None


def check_choice(card: Card, choice: str | int) -> bool:
    """Whether `choice` (a choice's text, its 1-based number, or its letter a, b, ...) is the card's `correct`."""
    choices = [str(c) for c in card.fields.get("choices", [])]
    correct = _choice_key(str(card.fields.get("correct", "")))
    i = _index(choice, len(choices))
    if i is not None:
        return 0 <= i < len(choices) and _choice_key(choices[i]) == correct
    return _choice_key(str(choice)) == correct


def check_diagnosis_card(card: Card) -> list[str]:
    """Problems of a diagnosis card beyond field presence and types."""
    problems: list[str] = []
    evidence = card.fields.get("evidence")
    if not isinstance(evidence, str) or not evidence.strip():
        problems.append("`evidence` must be non-empty text")
    choices = card.fields.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        return problems + ["`choices` needs at least two entries"]
    keys: dict[str, str] = {}
    for choice in choices:
        if not isinstance(choice, str) or not choice.strip():
            problems.append(f"choices: every choice must be non-empty text, got {choice!r}")
            continue
        if _index(choice, 10**6) is not None:
            problems.append(f"choices: {choice!r} would be read as a choice number or letter")
        key = _choice_key(choice)
        if key in keys:
            problems.append(f"choices: {choice!r} repeats {keys[key]!r}")
        keys[key] = choice
    correct = card.fields.get("correct")
    if not isinstance(correct, str) or not correct.strip():
        problems.append("`correct` must be one of the choices")
    elif correct not in choices:
        near = keys.get(_choice_key(correct))
        if near:
            problems.append(f"correct {correct!r} differs from the choice {near!r}: write it exactly")
        else:
            problems.append(f"correct {correct!r} is not one of the choices")
    return problems


# --- grade suggestion ------------------------------------------------------------------

QUICK_S = 60.0
SLOW_S = 180.0


def suggest_grade(fraction_correct: float, seconds: float, *, quick_s: float = QUICK_S, slow_s: float = SLOW_S) -> int:
    """An SM-2 grade (0-5) suggested from what was checked; the learner confirms or overrides it.

    All correct within `quick_s` seconds: 5 (perfect). All correct within
    `slow_s`: 4 (correct after some thought). All correct but slower than
    `slow_s`: 3 (correct with serious difficulty). Partly correct: 3.
    Nothing correct: 1.
    """
    for name, value in (("fraction_correct", fraction_correct), ("seconds", seconds)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not 0 <= fraction_correct <= 1:
        raise ValueError(f"fraction_correct must be between 0 and 1, got {fraction_correct!r}")
    if seconds < 0 or not 0 <= quick_s <= slow_s:
        raise ValueError("seconds must be >= 0 and 0 <= quick_s <= slow_s")
    if fraction_correct >= 1 - 1e-9:
        if seconds <= quick_s:
            return 5
        return 4 if seconds <= slow_s else 3
    if fraction_correct > 1e-9:
        return 3
    return 1
