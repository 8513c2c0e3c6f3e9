"""Kernel cards: where their files are, what `drill check` verifies, and the job the judge receives."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drill import paths
from drill.cards.model import Card

LANGUAGES = {"cuda": ".cu", "triton": ".py"}
HARNESS_FUNCTIONS = ("cases", "timing_cases", "make_inputs", "reference", "launcher", "compare", "baseline", "bytes_moved")


@dataclass(frozen=True)
class KernelFiles:
    starter: Path
    solution: Path
    writeup: Path
    harness: Path


def _resolve(name: str, bundled: Path, card: Card, folder: str) -> Path:
    """A card's file: under the bundled folder, else under `<folder>/` beside the card's deck."""
    first = bundled / name
    if first.exists():
        return first
    beside = Path(card.path).parent / folder / name
    return beside if beside.exists() else first


def kernel_files(card: Card) -> KernelFiles:
    f = card.fields
    kernels, answers = paths.kernels_dir(), paths.answers_dir()
    return KernelFiles(
        starter=_resolve(str(f.get("starter", "")), kernels, card, "kernels"),
        solution=_resolve(str(f.get("solution", "")), answers, card, "answers"),
        writeup=_resolve(str(f.get("writeup", "")), answers, card, "answers"),
        harness=_resolve(str(f.get("harness", "")), kernels / "harness", card, "kernels/harness"),
    )


def kernel_job(card: Card) -> dict[str, Any]:
    """What the judge child needs to run this card (plain JSON)."""
    files = kernel_files(card)
    return {
        "card": card.id,
        "language": card.fields.get("language"),
        "harness": str(files.harness),
        "filename": files.starter.name,
        "target_pct": card.fields.get("target_pct"),
    }


def harness_constants(path: Path) -> dict[str, Any]:
    """The literal module-level constants of a harness, read without importing it (it needs torch)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
        elif isinstance(node, ast.FunctionDef):
            out.setdefault("__functions__", []).append(node.name)
    return out


def check_kernel_card(card: Card) -> list[str]:
    """Problems with a kernel card: missing files, unknown language, a harness that lacks parts, a starter that does not build."""
    problems: list[str] = []
    f = card.fields
    language = f.get("language")
    if language not in LANGUAGES:
        problems.append(f"language must be one of {', '.join(LANGUAGES)} (got {language!r})")
    target = f.get("target_pct")
    if isinstance(target, (int, float)) and not 0 < target <= 100:
        problems.append(f"target_pct must be above 0 and at most 100 (got {target})")
    files = kernel_files(card)
    for key, path in (("starter", files.starter), ("solution", files.solution), ("writeup", files.writeup), ("harness", files.harness)):
        if not path.is_file():
            problems.append(f"{key} file not found: {path}")
    if language in LANGUAGES:
        for key, path in (("starter", files.starter), ("solution", files.solution)):
            if path.suffix != LANGUAGES[language]:
                problems.append(f"{key} {path.name} should end in {LANGUAGES[language]} for a {language} card")
    if problems:
        return problems

    try:
        consts = harness_constants(files.harness)
    except SyntaxError as exc:
        return [f"harness {files.harness.name} line {exc.lineno}: {exc.msg}"]
    if consts.get("LANGUAGE") != language:
        problems.append(f"harness {files.harness.name} is for {consts.get('LANGUAGE')!r}, the card says {language!r}")
    entry = consts.get("ENTRY")
    if not isinstance(entry, (tuple, list)) or not entry:
        problems.append(f"harness {files.harness.name} must name the functions it calls in ENTRY = (...)")
        entry = ()
    defined = set(consts.get("__functions__", []))
    for name in HARNESS_FUNCTIONS:
        if name not in defined:
            problems.append(f"harness {files.harness.name} lacks `def {name}(...)`")

    for key, path in (("starter", files.starter), ("solution", files.solution)):
        source = path.read_text(encoding="utf-8")
        if language == "triton":
            problems.extend(f"{key} {m}" for m in _check_python(source, path.name, tuple(entry)))
        else:
            problems.extend(f"{key} {m}" for m in _check_cuda(source, path.name, tuple(entry), consts.get("LAUNCH_KEYS")))
    return problems


def _check_python(source: str, filename: str, entry: tuple[str, ...]) -> list[str]:
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [f"{filename} line {exc.lineno}: {exc.msg}"]
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return [f"{filename} does not define `{e}`" for e in entry if e not in names]


def _check_cuda(source: str, filename: str, entry: tuple[str, ...], launch_keys: Any) -> list[str]:
    from drill.kernel import nvrtc
    from drill.kernel.launch import LaunchError, parse_launch, validate

    out: list[str] = []
    try:
        validate(parse_launch(source, tuple(launch_keys) if launch_keys else None))
    except LaunchError as exc:
        out.append(f"{filename} {exc}")
    if not nvrtc.available():
        return out  # nothing to compile with here; the judge will say so
    result = nvrtc.compile_cuda(source, filename)
    if not result.ok:
        out.extend(f"{filename} does not compile: {m}" for m in result.errors[:3])
        return out
    names = {r.name for r in result.resources}
    out.extend(f"{filename} has no `extern \"C\" __global__` kernel `{e}`" for e in entry if e not in names)
    return out
