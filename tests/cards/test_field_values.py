"""Parsed YAML and JSON values read as what a reader needs: each helper keeps what has the shape asked for and
gives an empty value (or, for a number, an error) for what has not."""

import pytest

from drill.cards.field_values import items, mapping, mappings, number, texts


@pytest.mark.parametrize(
    "value, expected",
    [
        ([1, "a", None], [1, "a", None]),
        ([], []),
        (None, []),
        ("a text is no list", []),
        ({"a": 1}, []),
    ],
)
def test_items_are_a_lists_entries_or_nothing(value, expected):
    assert items(value) == expected


def test_items_is_a_copy_a_reader_may_change():
    original = [1, 2]
    copy = items(original)
    copy.append(3)
    assert original == [1, 2]


@pytest.mark.parametrize(
    "value, expected",
    [({"a": 1}, {"a": 1}), ({}, {}), (None, {}), ([("a", 1)], {}), ("a", {})],
)
def test_mapping_is_a_mapping_or_an_empty_one(value, expected):
    assert mapping(value) == expected


def test_mappings_keep_the_mappings_of_a_list_in_order():
    assert mappings([{"a": 1}, "b", None, {"c": 2}, [1]]) == [{"a": 1}, {"c": 2}]
    assert mappings({"a": 1}) == []


def test_texts_are_a_lists_entries_as_text():
    assert texts(["a", 1, 2.5, True]) == ["a", "1", "2.5", "True"]
    assert texts("ab") == []


@pytest.mark.parametrize("value, expected", [(3, 3.0), (2.5, 2.5), (-1, -1.0), (0, 0.0)])
def test_a_number_is_read_as_a_float(value, expected):
    assert number(value) == expected and isinstance(number(value), float)


@pytest.mark.parametrize("value", [True, False, "3", None, [1]])
def test_anything_else_is_no_number(value):
    with pytest.raises(TypeError, match="expected a number"):
        number(value)
