"""Plain-text tables for the command line (drill.text_table)."""

from drill.text_table import Column, text_table


def test_columns_are_as_wide_as_their_widest_cell_and_numbers_keep_right():
    lines = text_table(
        [Column("topic"), Column("stop now", "right")],
        [("overall", "41%"), ("A much longer topic", "100%")],
    )
    assert lines == [
        "topic                stop now",
        "overall                   41%",
        "A much longer topic      100%",
    ]


def test_cells_are_text_never_markup_and_lines_carry_no_trailing_space():
    lines = text_table(
        [Column(), Column()], [("[bold]x[/bold] = 1", "# file"), ("key = [1, 2]", "# default")], headings=False
    )
    assert lines == ["[bold]x[/bold] = 1  # file", "key = [1, 2]        # default"]


def test_a_long_row_is_never_wrapped():
    cell = "x" * 500
    assert text_table([Column("a"), Column("b")], [(cell, "1")]) == [f"a{' ' * 501}b", f"{cell}  1"]
