"""Typed seams on the app's side: its packages name their types (`Any` stays rare), and screens take the domain's
records, never their JSON forms (those are for --json and files)."""

import ast
import re
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


# A JSON form spelled as a type: a string-keyed mapping of anything.
LOOSE_MAPPING = re.compile(r"\b(?:dict|Dict|Mapping|MutableMapping)\[\s*str\s*,\s*(?:Any|object)\s*\]")

# Functions of the screens that do pass a JSON form, each at a real JSON edge: "module:function" -> why.
JSON_EDGES = {
    "kernel_screen.py:record_kernel_attempt": "the judge's verdict as the attempts table keeps it (Verdict.to_json)",
    "mock_screen.py:kernel_record": "a kernel question's answer as the mock's answer row keeps it (JSON column)",
    "mock_screen.py:answer_given": "the answer as the mock's answer row and the review log keep it (JSON column)",
    "rubric_ticks.py:ask": "the answer form's record, the answer as the review log keeps it (JSON column)",
}


def loose_aliases() -> set[str]:
    """Names drill gives a JSON form (`Json = dict[str, Any]`), so that an alias does not hide one."""
    names: set[str] = set()
    for path in sorted(DRILL.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and LOOSE_MAPPING.search(ast.unparse(node.value)):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
                if LOOSE_MAPPING.search(ast.unparse(node.value)):
                    names.add(node.target.id)  # `Json: TypeAlias = dict[str, Any]` (`type` statements need 3.12)
    return names


def annotations(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return found + ([function.returns] if function.returns is not None else [])


def is_loose(annotation: ast.expr, aliases: set[str]) -> bool:
    text = ast.unparse(annotation)
    names = set(re.findall(r"\b\w+\b", text))
    return bool(LOOSE_MAPPING.search(text)) or bool(names & aliases)


def screens_taking_json() -> set[str]:
    aliases = loose_aliases()
    found: set[str] = set()
    for path in sorted((DRILL / "ui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any(is_loose(a, aliases) for a in annotations(node)):
                found.add(f"{path.relative_to(DRILL / 'ui')}:{node.name}")
    return found


def test_the_screens_take_and_return_records_not_json_forms():
    """No function in drill/ui takes or returns dict[str, Any], Mapping[str, Any], dict[str, object] or
    Mapping[str, object] (nor an alias of one), but at a JSON edge named above."""
    found = screens_taking_json()
    assert found - JSON_EDGES.keys() == set(), "a screen takes or returns a JSON form: give it the record"
    assert JSON_EDGES.keys() - found == set(), "no longer a JSON edge: take it off JSON_EDGES"


def test_the_check_sees_a_json_form_in_every_place_a_function_can_name_one():
    source = """
def returns(a: int) -> dict[str, Any]: ...
def takes(*, report: "Mapping[str, object]") -> None: ...
async def takes_in_a_union(report: typing.Mapping[str, Any] | None) -> None: ...
def through_an_alias(**extra: Json) -> None: ...
def a_record(report: MockReport, counts: dict[str, int], rows: Sequence[Mapping[int, object]]) -> str: ...
"""
    functions = [n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    loose = [f.name for f in functions if any(is_loose(a, {"Json"}) for a in annotations(f))]
    assert loose == ["returns", "takes", "takes_in_a_union", "through_an_alias"]
