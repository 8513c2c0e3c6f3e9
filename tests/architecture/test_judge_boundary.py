"""The judge process loads from the app's side only what both processes share: drill.kernel_shared, paths, words."""

import re
from pathlib import Path

import grimp
import pytest

import drill

# what the judge may import outside its own package (the package root `drill` holds only its version)
SHARED = ("drill.kernel_shared", "drill.paths", "drill.words")


def outside_imports(graph: grimp.ImportGraph, package: str) -> set[str]:
    """The drill modules that modules of `package` import directly, other than its own."""
    found: set[str] = set()
    for module in graph.find_descendants(package) | {package}:
        for other in graph.find_modules_directly_imported_by(module):
            if other.startswith("drill") and not (other == package or other.startswith(package + ".")):
                found.add(other)
    return found


def allowed(module: str) -> bool:
    return module == "drill" or any(module == name or module.startswith(name + ".") for name in SHARED)


def test_the_judge_imports_only_the_shared_modules_of_the_app():
    graph = grimp.build_graph("drill")
    imported = outside_imports(graph, "drill.judge")
    assert "drill.kernel_shared.protocol" in imported  # the check sees the judge's imports at all
    assert sorted(m for m in imported if not allowed(m)) == []


def test_the_shared_modules_import_nothing_else_of_the_app():
    graph = grimp.build_graph("drill")
    imported = outside_imports(graph, "drill.kernel_shared")
    assert sorted(m for m in imported if not allowed(m)) == []


def test_a_judge_module_importing_the_app_is_seen():
    graph = grimp.ImportGraph()
    for name in ("drill", "drill.judge", "drill.judge.a", "drill.kernel", "drill.kernel.client", "drill.words"):
        graph.add_module(name)
    graph.add_import(importer="drill.judge.a", imported="drill.kernel.client")
    graph.add_import(importer="drill.judge.a", imported="drill.words")
    imported = outside_imports(graph, "drill.judge")
    assert sorted(m for m in imported if not allowed(m)) == ["drill.kernel.client"]


# -- typed seams: the judge and the kernel packages name their types, `Any` stays rare ---------------------------
ANY_PER_1000_LINES = 10
ANY = re.compile(r"\bAny\b")


def any_per_1000_lines(files: list[Path]) -> float:
    """`Any` written per 1,000 lines of these files (comments and docstrings count too: the stricter reading)."""
    texts = [f.read_text(encoding="utf-8") for f in files]
    lines = sum(text.count("\n") for text in texts)
    return 1000 * sum(len(ANY.findall(text)) for text in texts) / max(lines, 1)


@pytest.mark.parametrize("package", ["judge", "kernel", "kernel_shared"])
def test_the_judge_and_the_kernel_packages_say_what_their_values_are(package):
    files = sorted((Path(drill.__file__).parent / package).rglob("*.py"))
    assert len(files) > 3
    assert any_per_1000_lines(files) <= ANY_PER_1000_LINES


def test_the_any_count_sees_every_any(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from typing import Any\n\ndef f(x: Any) -> dict[str, Any]:\n    return {}\n")
    assert any_per_1000_lines([source]) == 1000 * 3 / 4
