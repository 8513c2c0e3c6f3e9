"""The screen's tables: a DataTable whose cells and labels pass the screen's filter (drill.ui.screen_text)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import DataTable

from drill.ui.screen_text import screen_content, screen_text, shown_rich_text

if TYPE_CHECKING:
    from textual.coordinate import Coordinate
    from textual.widgets.data_table import ColumnKey, RowKey


def _cell(value: object) -> object:
    """A table cell through the filter; a string is shown as text (a DataTable reads a string as markup)."""
    if isinstance(value, str):
        return Text(screen_text(value))
    if isinstance(value, (int, float)) or value is None:
        return value
    return screen_content(value)  # type: ignore[arg-type]


def _label(label: Any) -> Any:
    """A table's column or row label through the filter (a string stays a string: a label is not markup)."""
    if isinstance(label, str):
        return screen_text(label)
    if isinstance(label, Text):
        return shown_rich_text(label)
    return label


class SafeDataTable(DataTable[Any]):
    """A DataTable whose cells and labels pass the filter as they are added or changed."""

    def add_column(
        self, label: Any, *, width: int | None = None, key: str | None = None, default: Any = None
    ) -> ColumnKey:
        return super().add_column(_label(label), width=width, key=key, default=_cell(default))

    def add_row(self, *cells: Any, height: int | None = 1, key: str | None = None, label: Any = None) -> RowKey:
        return super().add_row(*(_cell(c) for c in cells), height=height, key=key, label=_label(label))

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: Any, *, update_width: bool = False
    ) -> None:
        super().update_cell(row_key, column_key, _cell(value), update_width=update_width)

    def update_cell_at(self, coordinate: Coordinate, value: Any, *, update_width: bool = False) -> None:
        super().update_cell_at(coordinate, _cell(value), update_width=update_width)
