"""Parsed YAML and JSON values (a card's fields, a stored report) read as what a reader needs: a list, a mapping,
texts or a number."""

from __future__ import annotations

from collections.abc import Mapping


def items(value: object) -> list[object]:
    """The entries of a YAML list; nothing when the value is no list."""
    return list(value) if isinstance(value, list) else []


def mapping(value: object) -> Mapping[str, object]:
    """A YAML mapping; an empty one when the value is no mapping."""
    return value if isinstance(value, dict) else {}


def mappings(value: object) -> list[Mapping[str, object]]:
    """The mappings among a YAML list's entries."""
    return [entry for entry in items(value) if isinstance(entry, dict)]


def texts(value: object) -> list[str]:
    """A YAML list's entries as text."""
    return [str(entry) for entry in items(value)]


def number(value: object) -> float:
    """A YAML number (a bool is no number); TypeError names the value otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)
