"""Built-in collectives named in a collective card's Python, found by reading its source (no import, no torch).

A collective card asks the learner to build an all-reduce (or its halves) from
point-to-point operations. Before anything runs, the judge reads the file for
the collectives torch already has (`dist.all_reduce(x)`, `from torch.distributed
import all_reduce as ar`, `group.allreduce(...)`, `funcol.all_reduce(...)`) and
refuses it with the line; `drill check` does the same for a deck's starter and
solution. What reading cannot see (`getattr(dist, "all_" + "reduce")`) is caught
when it runs: the ranks replace every collective with one that raises
(drill.judge.collective.point_to_point).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# The data-moving collectives among torch.distributed's module functions (the judge replaces these in every rank).
MODULE_COLLECTIVES = (
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_coalesced",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_gather_single",
    "_all_gather_base",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "broadcast_object_list",
)
# Functions of torch.distributed (and its functional collectives) that move data between all ranks at once.
COLLECTIVES = frozenset(
    {
        *MODULE_COLLECTIVES,
        "all_gather_tensor",
        "all_reduce_inplace",
        "all_gather_tensor_inplace",
        "reduce_scatter_tensor_inplace",
        "all_to_all_inplace",
    }
)
# Method names only a process group or backend has: refused on any object.
GROUP_METHODS = frozenset(
    {
        "allreduce",
        "allreduce_coalesced",
        "allgather",
        "allgather_coalesced",
        "allgather_into_tensor_coalesced",
        "_allgather_base",
        "reduce_scatter_single_coalesced",
        "reduce_scatter_tensor_coalesced",
        "_reduce_scatter_base",
        "alltoall",
        "alltoall_base",
        "allreduce_",
        "allgather_",
        "broadcast_",
    }
)
DISTRIBUTED_MODULES = (
    "torch.distributed",
    "torch.distributed.distributed_c10d",
    "torch.distributed._functional_collectives",
)
POINT_TO_POINT = "dist.send, recv, isend, irecv, batch_isend_irecv with P2POp"


@dataclass(frozen=True)
class Refusal:
    line: int
    column: int
    message: str


def refusal_message(name: str) -> str:
    return f"{name} is a built-in collective: build the collective yourself from point-to-point operations ({POINT_TO_POINT})"


def _dotted(node: ast.AST) -> str | None:
    """'torch.distributed.all_reduce' for that chain of names and attributes; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.modules: dict[str, str] = {}  # local name -> the torch.distributed module it stands for
        self.imported: dict[str, str] = {}  # local name -> the collective it was imported as
        self.found: list[Refusal] = []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in DISTRIBUTED_MODULES and alias.asname:
                self.modules[alias.asname] = alias.name
            elif alias.name.startswith("torch") and not alias.asname:
                self.modules.setdefault("torch", "torch")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = node.module or ""
        for alias in node.names:
            local = alias.asname or alias.name
            full = f"{source}.{alias.name}"
            if full in DISTRIBUTED_MODULES:
                self.modules[local] = full
            elif source in DISTRIBUTED_MODULES and alias.name in COLLECTIVES:
                self.imported[local] = full
                self._refuse(node, full)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in GROUP_METHODS:
            self._refuse(node, f".{node.attr}")
        elif node.attr in COLLECTIVES:
            owner = _dotted(node.value)
            resolved = self._module(owner) if owner else None
            if resolved in DISTRIBUTED_MODULES:
                self._refuse(node, f"{resolved}.{node.attr}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.imported and isinstance(node.ctx, ast.Load):
            self._refuse(node, self.imported[node.id])

    def _module(self, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        base = self.modules.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def _refuse(self, node: ast.AST, name: str) -> None:
        line = getattr(node, "lineno", 0)
        column = getattr(node, "col_offset", -1) + 1
        self.found.append(Refusal(line, column, refusal_message(name)))


def refused_calls(source: str, filename: str = "<collective>") -> list[Refusal]:
    """Every built-in collective the source names, in order; raises SyntaxError for a file Python cannot read."""
    tree = ast.parse(source, filename=filename)
    finder = _Finder()
    finder.visit(tree)
    seen = set()
    out = []
    for refusal in sorted(finder.found, key=lambda r: (r.line, r.column)):
        if (refusal.line, refusal.message) not in seen:
            seen.add((refusal.line, refusal.message))
            out.append(refusal)
    return out
