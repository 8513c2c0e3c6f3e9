"""Plain-text tables for the command line, laid out by Rich: columns aligned, no borders, no colour, no wrapping."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.table import Table
from rich.text import Text

GAP = 2  # spaces between two columns


@dataclass(frozen=True)
class Column:
    """A column's heading and which side its cells keep to."""

    heading: str = ""
    justify: Literal["left", "right"] = "left"


def text_table(columns: Sequence[Column], rows: Iterable[Sequence[str]], *, headings: bool = True) -> list[str]:
    """The rows as lines of text, each column as wide as its widest cell; cells are text, never Rich markup."""
    table = Table(box=None, show_header=headings, header_style=None, pad_edge=False, padding=(0, 0, 0, GAP))
    for column in columns:
        table.add_column(Text(column.heading), justify=column.justify, no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    out = io.StringIO()
    Console(file=out, width=100_000, color_system=None, highlight=False, emoji=False).print(table)
    return [line.rstrip() for line in out.getvalue().splitlines()]
