"""Kernel cards: where their files are, and what `drill check` verifies.

Every file a kernel card names (starter, solution, writeup, harness) is a
relative name inside its folder: the bundled `kernels/`, `answers/` and
`kernels/harness/`, or the same folders beside the card's deck file. A name
that is absolute, climbs out with `..`, or leads out through a symbolic link
is a deck problem, and such a card is never handed to the judge.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from drill import paths
from drill.cards.model import Card

LANGUAGES = {"cuda": ".cu", "triton": ".py", "collective": ".py"}
HARNESS_FUNCTIONS = (
    "cases",
    "timing_cases",
    "make_inputs",
    "reference",
    "launcher",
    "compare",
    "baseline",
    "bytes_moved",
)
# A collective card's harness also gives the factor from algorithm to bus bandwidth (nccl-tests), and the fewest
# bytes each rank must move (the judge refuses a rank that moved less).
HARNESS_FUNCTIONS_BY_LANGUAGE = {"collective": (*HARNESS_FUNCTIONS, "bus_factor", "traffic_floor")}
# Each file a card names: its key and the folder it lives in (bundled, or beside the deck).
FILE_FOLDERS = {"starter": "kernels", "solution": "answers", "writeup": "answers", "harness": "kernels/harness"}
MAX_NAME_CHARS = 255


class CardFileError(ValueError):
    """A kernel card names a file it may not use (outside its folder, absolute, not a harness)."""


@dataclass(frozen=True)
class KernelFiles:
    starter: Path
    solution: Path
    writeup: Path
    harness: Path


def _bundled_folder(key: str) -> Path:
    return {
        "starter": paths.kernels_dir(),
        "solution": paths.answers_dir(),
        "writeup": paths.answers_dir(),
        "harness": paths.kernels_dir() / "harness",
    }[key]


def name_problem(key: str, name: str) -> str | None:
    """Why `name` cannot be the card's `key` file, judged from the text alone; None when it can."""
    folder = FILE_FOLDERS[key]
    where = f"name a file inside {folder}/"
    shown = repr(name if len(name) <= 80 else name[:77] + "...")
    if not name.strip():
        return f"{key} is empty; {where}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"{key} {shown} contains control characters; {where}"
    if len(name) > MAX_NAME_CHARS:
        return f"{key} name is longer than {MAX_NAME_CHARS} characters; {where}"
    if "\\" in name:
        return f"{key} {shown} contains a backslash; write folders with / and {where}"
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        return f"{key} {shown} is an absolute path; {where}"
    if ".." in PurePosixPath(name).parts:
        return f"{key} {shown} climbs out of its folder with '..'; {where}"
    if key == "harness" and PurePosixPath(name).suffix != ".py":
        return f"harness {shown} must be a Python source file ending in .py"
    return None


def _inside(path: Path, *folders: Path) -> bool:
    """Whether `path`, with every symbolic link followed, lies inside each of `folders` (also resolved)."""
    target = path.resolve()
    return all(target.is_relative_to(folder.resolve()) for folder in folders)


def _resolve(key: str, name: str, card: Card) -> Path:
    """A card's file: under the bundled folder, else under the same folder beside the card's deck.

    Raises CardFileError for a name that is not a plain relative path, or that
    leads out of its folder (or out of the deck's folder) once links are followed.
    """
    problem = name_problem(key, name)
    if problem:
        raise CardFileError(problem)
    folder = FILE_FOLDERS[key]
    bundled = _bundled_folder(key)
    deck_dir = Path(card.path).parent
    beside_dir = deck_dir / folder
    first = bundled / name
    beside = beside_dir / name
    try:
        if first.exists():
            if not _inside(first, bundled):
                raise CardFileError(f"{key} {name!r} leads out of the bundled {folder}/ folder through a link")
            return first
        if not _inside(beside, beside_dir, deck_dir):
            raise CardFileError(
                f"{key} {name!r} leads out of {folder}/ beside the deck through a link; name a file inside it"
            )
    except (OSError, RuntimeError, ValueError) as exc:  # a link loop, a name the system refuses
        if isinstance(exc, CardFileError):
            raise
        raise CardFileError(f"{key} {name!r} cannot be looked up: {exc}") from None
    return beside if beside.exists() else first


def kernel_files(card: Card) -> KernelFiles:
    """The card's four files; raises CardFileError when one of the names may not be used."""
    f = card.fields
    return KernelFiles(**{key: _resolve(key, str(f.get(key, "")), card) for key in FILE_FOLDERS})


def file_problems(card: Card) -> list[str]:
    """Every file name of the card that may not be used (empty when all are fine)."""
    problems = []
    for key in FILE_FOLDERS:
        try:
            _resolve(key, str(card.fields.get(key, "")), card)
        except CardFileError as exc:
            problems.append(str(exc))
    return problems


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
    bad_names = file_problems(card)
    if bad_names:
        return problems + bad_names
    files = kernel_files(card)
    for key, path in (
        ("starter", files.starter),
        ("solution", files.solution),
        ("writeup", files.writeup),
        ("harness", files.harness),
    ):
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
    for name in HARNESS_FUNCTIONS_BY_LANGUAGE.get(str(language), HARNESS_FUNCTIONS):
        if name not in defined:
            problems.append(f"harness {files.harness.name} lacks `def {name}(...)`")

    for key, path in (("starter", files.starter), ("solution", files.solution)):
        source = path.read_text(encoding="utf-8")
        if language == "triton":
            problems.extend(f"{key} {m}" for m in _check_python(source, path.name, tuple(entry)))
        elif language == "collective":
            problems.extend(f"{key} {m}" for m in _check_collective(source, path.name, tuple(entry)))
        else:
            problems.extend(
                f"{key} {m}" for m in _check_cuda(source, path.name, tuple(entry), consts.get("LAUNCH_KEYS"))
            )
    return problems


def _check_python(source: str, filename: str, entry: tuple[str, ...]) -> list[str]:
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        return [f"{filename} line {exc.lineno}: {exc.msg}"]
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return [f"{filename} does not define `{e}`" for e in entry if e not in names]


def _check_collective(source: str, filename: str, entry: tuple[str, ...]) -> list[str]:
    """A collective card's Python: its functions, and no built-in collective (the judge refuses those)."""
    from drill.kernel_shared.collective_source import refused_calls

    problems = _check_python(source, filename, entry)
    if problems:
        return problems
    return [f"{filename} line {r.line}: {r.message}" for r in refused_calls(source, filename)]


def _check_cuda(source: str, filename: str, entry: tuple[str, ...], launch_keys: Any) -> list[str]:
    from drill.kernel_shared import nvrtc
    from drill.kernel_shared.launch import LaunchError, parse_launch, validate

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
    out.extend(f'{filename} has no `extern "C" __global__` kernel `{e}`' for e in entry if e not in names)
    return out
