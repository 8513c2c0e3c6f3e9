"""Shapes in a canonical spelling, so that two spellings of one shape compare equal.

A typed shape is read (by drill.cards.shape_reading) as a list of dimensions:

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

import re
from collections.abc import Iterable, Mapping

from drill.cards.field_values import items, mapping, mappings
from drill.cards.model import Card
from drill.cards.shape_reading import NAME, ShapeError, read_dims, strip_outer, tokenize


def _render(tokens: list[tuple[str, str]]) -> str:
    while True:
        inner = strip_outer(tokens)
        if inner is tokens:
            break
        tokens = inner
    depth = 0
    plain = True
    factors: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
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


def canonical_dim(text: str) -> str:
    """One dimension (an alias or its spelling): `*` inside it always multiplies."""
    if not text.strip():
        raise ShapeError("an empty dimension")
    dims = read_dims(f"({text})")
    if len(dims) != 1:
        raise ShapeError(f"{text!r} is not a single dimension")
    return _render(dims[0])


def _spelling_list(spellings: object) -> list[object]:
    """An alias's spellings as a list: one written alone stands for a list of one."""
    if isinstance(spellings, str):
        return [spellings]
    return items(spellings)


def _alias_table(aliases: Mapping[str, object] | None, fold: bool) -> dict[str, str]:
    table: dict[str, str] = {}
    for symbol, spellings in (aliases or {}).items():
        target = canonical_dim(str(symbol).casefold() if fold else str(symbol))
        for spelling in _spelling_list(spellings):
            spelling = str(spelling).casefold() if fold else str(spelling)
            table[canonical_dim(spelling)] = target
    return table


def _renamed(token: tuple[str, str], table: Mapping[str, str]) -> tuple[str, str]:
    """A name token with its alias when the alias is a plain name too; any other token as it is."""
    kind, value = token
    if kind == "ident" and value in table and _is_name(table[value]):
        return (kind, table[value])
    return token


def _apply_aliases(tokens: list[tuple[str, str]], table: Mapping[str, str]) -> str:
    text = _render(tokens)
    for _ in range(4):
        if text in table:
            text = table[text]
            continue
        swapped = [_renamed(token, table) for token in tokenize(text)]
        # a name that stands for an expression is spliced in with brackets
        spliced: list[tuple[str, str]] = []
        for kind, value in swapped:
            if kind == "ident" and value in table and not _is_name(table[value]):
                spliced += [("open", "(")] + tokenize(table[value]) + [("close", ")")]
            else:
                spliced.append((kind, value))
        new = _render(spliced)
        if new == text:
            break
        text = new
    return text


def _is_name(text: str) -> bool:
    return re.fullmatch(NAME, text) is not None


def normalise_shape(
    text: str, aliases: Mapping[str, object] | None = None, *, fold_case: bool = False
) -> tuple[str, ...]:
    """The dimensions of a typed shape in a canonical spelling; raises ShapeError if it is not a shape.

    `aliases` maps a symbol to its other accepted spellings. With `fold_case`
    letters are compared without case (see the module notes).
    """
    if fold_case:
        text = text.casefold()
    table = _alias_table(aliases, fold_case)
    return tuple(_apply_aliases(group, table) for group in read_dims(text))


def _names_in(texts: Iterable[str]) -> set[str]:
    names: set[str] = set()
    for text in texts:
        names.update(re.findall(NAME, str(text)))
    return names


def accepted_shapes(step: Mapping[str, object]) -> list[str]:
    """The step's `shape` followed by the other spellings its optional `also` list accepts."""
    also = step.get("also") or []
    if not isinstance(also, list):
        also = [also]
    return [str(step.get("shape", "")), *(str(s) for s in also)]


def case_matters(card: Card) -> bool:
    """True when a symbol of the card's shapes differs only in case from another symbol it uses.

    The symbols are the names in the steps' shapes (their `also` shapes
    included) and the aliases; the `given` line counts too, but only against
    those symbols (its prose has words such as "Diffusion" and "diffusion"
    that are no symbols).
    """
    aliases = mapping(card.fields.get("aliases"))
    texts = []
    for step in mappings(card.fields.get("steps")):
        texts += accepted_shapes(step)
    for symbol, spellings in aliases.items():
        texts.append(str(symbol))
        texts += [str(s) for s in _spelling_list(spellings)]
    symbols = _names_in(texts)
    everything = symbols | _names_in([str(card.fields.get("given", ""))])
    folded: dict[str, set[str]] = {}
    for name in everything:
        folded.setdefault(name.casefold(), set()).add(name)
    return any(len(folded[name.casefold()]) > 1 for name in symbols)
