"""The learner's code made callable inside the judge child: a CUDA module (NVRTC + the driver API) or a Triton file."""

from __future__ import annotations

import itertools
import os
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from drill.judge.source_only import run_source
from drill.kernel_shared import nvrtc
from drill.kernel_shared.launch import LaunchDecl, LaunchError, parse_launch, validate

if TYPE_CHECKING:
    from drill.judge import cudadrv

_counter = itertools.count(1)


class BuildError(Exception):
    """The learner's file could not be turned into a program; `messages` carry line numbers."""

    def __init__(self, message: str, messages: list[nvrtc.CompilerMessage] | None = None, log: str = "") -> None:
        super().__init__(message)
        self.messages = messages or [nvrtc.CompilerMessage(0, 0, "error", message)]
        self.log = log


@dataclass
class CudaProgram:
    """A compiled CUDA file. `launch` calls one of its `extern "C"` kernels through the driver API."""

    decl: LaunchDecl
    compiled: nvrtc.CompileResult
    module: cudadrv.Module | None = None  # on a GPU; None when only compiled
    stream: Callable[[], int] = lambda: 0  # the CUDA stream handle to launch on (the judge gives torch's)
    _functions: dict[str, cudadrv.Function] = field(default_factory=dict)

    @property
    def kernel_names(self) -> list[str]:
        return [r.name for r in self.compiled.resources]

    def function(self, name: str) -> cudadrv.Function:
        if name not in self._functions:
            if self.module is None:
                raise RuntimeError("the CUDA file was only compiled here (no GPU): its kernels cannot be launched")
            self._functions[name] = self.module.get_function(name)
        return self._functions[name]

    def launch(
        self, name: str, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[object, ...], smem: int = 0
    ) -> None:
        self.function(name).launch(grid, block, args, smem, self.stream())


@dataclass
class TritonProgram:
    module: types.ModuleType
    path: Path


def build_cuda(
    source: str,
    filename: str,
    *,
    entry: tuple[str, ...],
    launch_keys: tuple[str, ...] | None,
    arch: str,
    load: bool,
    workdir: Path,
) -> CudaProgram:
    """Compile with NVRTC; check the kernels and the launch line; load the cubin when `load` (a GPU is here)."""
    result = nvrtc.compile_cuda(source, filename, arch=arch)
    if not result.ok:
        raise _CompileFailed(result)
    try:
        decl = parse_launch(source, launch_keys)
        validate(decl)
    except LaunchError as exc:
        raise BuildError(str(exc), [nvrtc.CompilerMessage(exc.line, 0, "error", exc.message)], result.log) from None
    names = {r.name for r in result.resources} | {r.name for r in nvrtc.cubin_kernels(result.cubin)}
    missing = [e for e in entry if e not in names]
    if missing:
        message = (
            f'kernel `{missing[0]}` not found; declare it `extern "C" __global__ void {missing[0]}(...)`'
            f" (found: {', '.join(sorted(names)) or 'no kernels'})"
        )
        raise BuildError(message, log=result.log)
    program = CudaProgram(decl, result)
    if load:
        from drill.judge import cudadrv

        program.module = cudadrv.Module(result.cubin)
    return program


class _CompileFailed(BuildError):
    def __init__(self, result: nvrtc.CompileResult) -> None:
        first = result.errors[0] if result.errors else None
        super().__init__(str(first) if first else "compilation failed", result.messages, result.log)
        self.result = result


def build_triton(source: str, filename: str, *, entry: tuple[str, ...], workdir: Path) -> TritonProgram:
    """Run the learner's Triton file, written to a fresh folder (Triton reads the source of jitted functions there)."""
    folder = workdir / f"run{next(_counter)}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / os.path.basename(filename)
    path.write_text(source, encoding="utf-8")
    name = f"drill_learner_{path.stem}_{folder.name}"
    try:
        compile(source, filename, "exec")
    except SyntaxError as exc:
        line = exc.lineno or 0
        raise BuildError(
            f"line {line}: {exc.msg}", [nvrtc.CompilerMessage(line, exc.offset or 0, "error", exc.msg)]
        ) from None
    try:
        # from the text itself, as it was written: no bytecode is read or written for it
        module = run_source(name, path, source.encode("utf-8"), register=True)
    except Exception as exc:  # the learner's module-level code failed
        line = learner_line(exc, path)
        text = f"importing {filename} failed: {type(exc).__name__}: {exc}"
        raise BuildError(text, [nvrtc.CompilerMessage(line, 0, "error", f"{type(exc).__name__}: {exc}")]) from None
    missing = [e for e in entry if not callable(getattr(module, e, None))]
    if missing:
        raise BuildError(f"{filename} must define `{missing[0]}` (the function the judge calls)")
    return TritonProgram(module, path)


def learner_line(exc: BaseException, path: Path) -> int:
    """The line of the learner's file where `exc` arose: inside a Triton kernel, else the traceback's last frame there."""
    line = triton_error_line(exc, path)
    if line:
        return line
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            line = frame.lineno or 0
    return line


def triton_error_line(exc: BaseException, path: Path) -> int:
    """Map a Triton CompilationError (line counted inside the jitted function) to a line of the file."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        src = getattr(exc, "src", None)
        node = getattr(exc, "node", None)
        lineno = getattr(node, "lineno", None)
        if isinstance(src, str) and lineno:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                return 0
            at = text.find(src.strip("\n"))
            if at < 0:
                return int(lineno)
            return text.count("\n", 0, at) + int(lineno)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return 0
