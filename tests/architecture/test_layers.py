"""The layers hold: import-linter's contracts (pyproject.toml), and what really loads at run time."""

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import drill

# The judge process (its own package, which may load torch, triton and cupy); the UI and the CLI sit on top.
NOT_DOMAIN = (
    "drill.ui",
    "drill.cli",
    "drill.__main__",
    "drill.judge",
)


def domain_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(drill.__path__, "drill.")]
    return sorted(n for n in names if not n.startswith(NOT_DOMAIN))


def loaded_after(import_line: str) -> set[str]:
    code = f"import sys; {import_line}; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_contracts_are_kept():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([lint], capture_output=True, text=True, cwd=Path(drill.__file__).parents[1])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_domain_module_loads_without_textual_or_the_gpu_stack():
    modules = domain_modules()
    assert len(modules) > 40 and "drill.study.session" in modules and "drill.kernel.client" in modules
    loaded = loaded_after("; ".join(f"import {m}" for m in modules))
    assert not loaded & {"textual", "torch", "triton", "cupy"}


def test_cli_and_app_import_no_gpu_stack_and_no_sqlmodel():
    loaded = loaded_after("import drill.cli, drill.ui.app, drill.ui.review; drill.cli.build_parser()")
    assert not loaded & {"torch", "triton", "cupy", "sqlmodel", "sqlalchemy"}


def import_cycles(graph) -> list[list[str]]:
    """Groups of modules that import one another, directly or through others (strongly connected)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_the_import_graph_has_no_cycle():
    # every import counts, at module level or inside a function
    import grimp

    assert import_cycles(grimp.build_graph("drill")) == []


def test_the_cycle_finder_finds_a_cycle():
    class Graph:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.edges[module]

    assert import_cycles(Graph()) == [["a", "b", "c"]]
