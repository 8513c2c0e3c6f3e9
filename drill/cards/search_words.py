"""The words the card search takes as one (cards/data/search-words.yaml): abbreviations and compounds, validated.

A form is kept as the words SQLite's FTS5 (tokenizer unicode61) cuts it into: case
folded, split at anything but a letter or a digit, so `all-reduce`, `All Reduce`
and `all_reduce` are the same form, and `allreduce` another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from drill import paths

if TYPE_CHECKING:
    from yaml import Node

FILE_NAME = "search-words.yaml"
ENTRY_KEYS = ("forms", "meaning", "source")
# letters and digits: what unicode61 keeps as a word (an underscore separates, as a hyphen does)
_WORD = re.compile(r"[^\W_]+")

Words = tuple[str, ...]


def words_of(text: str) -> Words:
    """The text as FTS5 reads it: its words, lower case."""
    return tuple(word.lower() for word in _WORD.findall(text))


class SearchWordsError(ValueError):
    """The search-words file is not as the search needs it; the message starts with `path:line:`."""


@dataclass(frozen=True)
class SearchTerm:
    """One thing the field writes in several ways: its forms as written, what it is, where the name comes from."""

    forms: tuple[str, ...]
    meaning: str
    source: str = ""
    line: int = 0

    @property
    def spellings(self) -> tuple[Words, ...]:
        """Each form as the words FTS5 reads, once each, in the file's order."""
        return tuple(dict.fromkeys(words_of(form) for form in self.forms))


@dataclass(frozen=True)
class SearchWords:
    """Every entry of the file, and each entry found by any of its forms."""

    terms: tuple[SearchTerm, ...]

    @cached_property
    def by_form(self) -> dict[Words, SearchTerm]:
        return {words: term for term in self.terms for words in term.spellings}

    @cached_property
    def longest(self) -> int:
        """The most words one form has."""
        return max((len(words) for words in self.by_form), default=0)

    def term_of(self, words: Words) -> SearchTerm | None:
        return self.by_form.get(words)


def parse_search_words(text: str, where: str) -> SearchWords:
    """The entries of a search-words file's text; SearchWordsError (`where:line: ...`) on the first problem.

    Each entry: `forms`, two or more strings each with a letter or digit and no two
    read as the same words; `meaning`, a sentence; `source`, optional. No form may
    belong to two entries: a search for it would not know which it means.
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise SearchWordsError(f"{where}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(root, yaml.MappingNode) or [key.value for key, _ in root.value] != ["terms"]:
        raise SearchWordsError(f"{where}:1: the file holds one key, `terms`: a list of entries")
    entries = root.value[0][1]
    if not isinstance(entries, yaml.SequenceNode):
        raise SearchWordsError(f"{where}:{entries.start_mark.line + 1}: `terms` must be a list of entries")
    seen: dict[Words, int] = {}
    terms = []
    for node in entries.value:
        term = _entry(node, where, yaml)
        for words in term.spellings:
            if words in seen:
                raise SearchWordsError(
                    f"{where}:{term.line}: the form {' '.join(words)!r} is already an entry's at line {seen[words]}"
                )
            seen[words] = term.line
        terms.append(term)
    return SearchWords(tuple(terms))


def _entry(node: Node, where: str, yaml: ModuleType) -> SearchTerm:
    line = node.start_mark.line + 1
    here = f"{where}:{line}"
    if not isinstance(node, yaml.MappingNode):
        raise SearchWordsError(f"{here}: an entry is a mapping with forms, meaning and (optionally) source")
    value = _construct(node, yaml)
    unknown = sorted(str(key) for key in value if key not in ENTRY_KEYS)
    if unknown:
        keys = "key" if len(unknown) == 1 else "keys"
        raise SearchWordsError(f"{here}: unknown {keys} {', '.join(unknown)} (an entry takes {', '.join(ENTRY_KEYS)})")
    forms = value.get("forms")
    if not isinstance(forms, list) or len(forms) < 2 or not all(isinstance(form, str) for form in forms):
        raise SearchWordsError(
            f"{here}: forms must be a list of two or more strings (quote one YAML reads as not text)"
        )
    for form in forms:
        if not words_of(form):
            raise SearchWordsError(f"{here}: the form {form!r} has no letter or digit")
    if len({words_of(form) for form in forms}) < 2:
        raise SearchWordsError(f"{here}: the forms {forms} are all read as the same words: nothing to find")
    meaning = value.get("meaning")
    if not isinstance(meaning, str) or not meaning.strip():
        raise SearchWordsError(f"{here}: meaning must say what the forms name")
    source = value.get("source", "")
    if not isinstance(source, str):
        raise SearchWordsError(f"{here}: source must be text")
    return SearchTerm(tuple(forms), meaning.strip(), source.strip(), line)


def _construct(node: Node, yaml: ModuleType) -> dict[str, object]:
    """The entry's mapping as plain values (the node's own lines are kept for the messages)."""
    loader = yaml.SafeLoader("")
    try:
        value = loader.construct_document(node)
    finally:
        loader.dispose()
    return value if isinstance(value, dict) else {}


def search_words_path() -> Path:
    return paths.data_files_dir() / FILE_NAME


@lru_cache(maxsize=1)
def bundled_search_words() -> SearchWords:
    """The bundled file's entries, read once."""
    path = search_words_path()
    return parse_search_words(path.read_text(encoding="utf-8"), str(path))
