"""Typed seams on the app's side: its packages name their types (`Any` stays rare), and screens take the domain's
records, never their JSON forms (those are for --json and files)."""

from pathlib import Path

import pytest

import drill
from tests.architecture.test_judge_boundary import ANY_PER_1000_LINES, any_per_1000_lines

DRILL = Path(drill.__file__).parent


@pytest.mark.parametrize("package", ["cards", "mock", "ui", "cli", "study", "exchange", "config", "calc"])
def test_the_apps_packages_say_what_their_values_are(package):
    files = sorted((DRILL / package).rglob("*.py"))
    assert len(files) > 3
    assert any_per_1000_lines(files) <= ANY_PER_1000_LINES


def test_drill_as_a_whole_says_what_its_values_are():
    assert any_per_1000_lines(sorted(DRILL.rglob("*.py"))) <= ANY_PER_1000_LINES


def test_no_screen_reads_a_records_json_form():
    calls = [
        f"{path.relative_to(DRILL)}:{number}"
        for path in sorted((DRILL / "ui").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ".as_json()" in line
    ]
    assert calls == []
