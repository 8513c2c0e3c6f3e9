"""Text from decks, files and learners made inert for a terminal: control characters shown as visible symbols.

A terminal acts on control characters instead of showing them: ESC starts
sequences that set the window title, clear the screen or write the clipboard
(OSC 52), BEL rings, CR and BS move back over what was printed. Text drill did
not write itself (a card, a path, a kernel's output, an imported answer) passes
through `shown` where it enters drill (the deck loader, which warns of it),
where the app draws it (drill.ui.screen_text: every widget's content, whatever
store it was read from) and where it leaves (the command line's standard output
and error), so no such character reaches a terminal or an export. Newline and
tab are kept: they are layout. Each character is replaced by one character, so
a text keeps its length.

This module imports nothing from drill: the loader below every command and
the command line above them all use it.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any

KEPT = frozenset("\n\t")
# C0 controls as their Unicode "control pictures" (ESC as U+241B ␛), DEL as U+2421 ␡.
# C1 controls (0x80-0x9f: CSI, OSC, ... in 8-bit form) and the bidirectional overrides,
# which reorder what is shown, have no pictures: they become U+FFFD �, as lone surrogates do.
_REPLACEMENT = "\ufffd"
_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TABLE: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in KEPT},
    0x7F: "\u2421",
    **dict.fromkeys(range(0x80, 0xA0), _REPLACEMENT),
    **dict.fromkeys(_BIDI, _REPLACEMENT),
    # lone surrogates: bytes of a file name or an argument that were not UTF-8 (no stream can encode them)
    **dict.fromkeys(range(0xD800, 0xE000), _REPLACEMENT),
}
_UNSAFE = frozenset(chr(code) for code in _TABLE)


def shown(text: str) -> str:
    """`text` with every control character but newline and tab replaced by a visible symbol."""
    return text.translate(_TABLE)


def unsafe_in(text: str) -> str | None:
    """The first control character a terminal would act on, named for a message ("ESC U+001B"); None when none."""
    for char in text:
        if char in _UNSAFE:
            return describe(char)
    return None


def describe(char: str) -> str:
    """A control character by its usual name and code point: "ESC U+001B", "BEL U+0007"."""
    names = {0x1B: "ESC", 0x07: "BEL", 0x08: "BS", 0x0D: "CR", 0x7F: "DEL", 0x9B: "CSI", 0x9D: "OSC"}
    name = names.get(ord(char)) or unicodedata.name(char, "control character")
    return f"{name} U+{ord(char):04X}"


def shown_deep(value: Any) -> tuple[Any, str | None]:
    """`value` (text, or lists and mappings of it, as a deck's YAML holds) with every string passed through
    `shown`, and the first unsafe character found (None when there was none). Other values are kept."""
    found: list[str] = []

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            if not found and (name := unsafe_in(item)) is not None:
                found.append(name)
            return shown(item)
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, tuple):
            return tuple(clean(v) for v in item)
        if isinstance(item, Mapping):
            return {clean(k): clean(v) for k, v in item.items()}
        return item

    cleaned = clean(value)
    return cleaned, (found[0] if found else None)


def shown_fields(raw: Mapping[Any, Any]) -> tuple[dict[Any, Any], tuple[str, str] | None]:
    """A card's fields through `shown_deep`, and (field, character) of the first field that held an unsafe one."""
    cleaned: dict[Any, Any] = {}
    first: tuple[str, str] | None = None
    for key, value in raw.items():
        safe_key, in_key = shown_deep(key)
        cleaned[safe_key], in_value = shown_deep(value)
        found = in_key or in_value
        if first is None and found is not None:
            first = (str(safe_key), found)
    return cleaned, first


class ShownStream:
    """A text stream that writes what it is given through `shown`: standard output and error of a command."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(shown(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer: the stream's own
        return getattr(self.inner, name)


@contextmanager
def shown_output() -> Iterator[None]:
    """Standard output and error through `shown` while a command runs; the streams as they were afterwards."""
    out = sys.stdout
    err = sys.stderr
    sys.stdout = ShownStream(out)
    sys.stderr = ShownStream(err)
    try:
        yield
    finally:
        sys.stdout = out
        sys.stderr = err
