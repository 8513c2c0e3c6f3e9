"""The launch declaration a CUDA kernel card reads from the learner's file.

A comment line such as

    // drill: block=256 grid=4*sm smem=0

sets the launch. Values may be lists, one entry per pass (`grid=1024,1`); the
last entry repeats. Grid rules: a number; `auto` (one thread per element);
`auto/K` (K elements per thread); `K*sm` (K blocks per multiprocessor).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_DECL = re.compile(r"^\s*//\s*drill:(?P<body>.*)$")
_TOKEN = re.compile(r"^(?P<key>[a-z_]+)=(?P<value>[^\s=]+)$")
MAX_THREADS = 1024


class LaunchError(ValueError):
    """A problem with the launch declaration, at a line of the learner's file."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class LaunchDecl:
    values: dict[str, str] = field(default_factory=dict)
    line: int = 0  # where the declaration is; 0 when the file has none

    def get(self, key: str, default: str) -> str:
        return self.values.get(key, default)

    def per_pass(self, key: str, default: str) -> list[str]:
        """The comma-separated entries of `key`; a bare value is one entry."""
        text = self.get(key, default)
        parts = [p.strip() for p in text.split(",")]
        if any(not p for p in parts):
            raise LaunchError(self.line, f"`{key}={text}` has an empty entry")
        return parts

    def passes(self, *keys: str) -> int:
        """How many passes the listed keys describe (the longest list)."""
        return max([len(self.values.get(k, "").split(",")) if k in self.values else 1 for k in keys] or [1])


def parse_launch(source: str, allowed: tuple[str, ...] | None = None) -> LaunchDecl:
    """Find and parse the `// drill:` line; no line gives an empty declaration."""
    found: LaunchDecl | None = None
    for number, text in enumerate(source.splitlines(), start=1):
        m = _DECL.match(text)
        if not m:
            continue
        if found is not None:
            raise LaunchError(number, f"a second `// drill:` line (the first is line {found.line}); keep one")
        values: dict[str, str] = {}
        for token in m["body"].split():
            t = _TOKEN.match(token)
            if not t:
                raise LaunchError(number, f"`{token}` is not key=value (e.g. block=256 grid=auto)")
            key = t["key"]
            if allowed is not None and key not in allowed:
                raise LaunchError(number, f"unknown launch key `{key}` (this card reads: {', '.join(allowed)})")
            if key in values:
                raise LaunchError(number, f"`{key}` given twice")
            values[key] = t["value"]
        found = LaunchDecl(values, number)
    return found or LaunchDecl()


def validate(decl: LaunchDecl) -> None:
    """Check the values of the keys every card understands, without a GPU (raises LaunchError)."""
    line = decl.line
    for key in decl.values:
        for entry in decl.per_pass(key, ""):
            if key == "block":
                block_dims(entry, line)
            elif key == "grid":
                grid_size(entry, 1, 1, 1, line)
            elif key == "tile":
                parse_dims(entry, line, "tile")
            elif key == "smem":
                smem_bytes(entry, line)


def parse_dims(text: str, line: int = 0, key: str = "block") -> tuple[int, ...]:
    """`256` -> (256,); `32x8` -> (32, 8); at most three positive dimensions."""
    parts = text.lower().split("x")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise LaunchError(line, f"`{key}={text}` must be N, NxM or NxMxK with whole numbers")
    dims = tuple(int(p) for p in parts)
    if any(d == 0 for d in dims):
        raise LaunchError(line, f"`{key}={text}` has a zero dimension")
    return dims


def block_dims(text: str, line: int = 0) -> tuple[int, int, int]:
    """A thread-block shape, padded to three dimensions, within the hardware's 1024 threads."""
    dims = parse_dims(text, line, "block")
    if math.prod(dims) > MAX_THREADS:
        raise LaunchError(line, f"block={text} is {math.prod(dims)} threads; a block holds at most {MAX_THREADS}")
    if dims[-1] > 64 and len(dims) == 3:
        raise LaunchError(line, f"block={text}: the z dimension is at most 64")
    return (dims + (1, 1, 1))[:3]  # type: ignore[return-value]


def grid_size(rule: str, work: int, threads: int, sm_count: int, line: int = 0) -> int:
    """Blocks for `work` elements under a grid rule, given threads per block and the GPU's SM count."""
    text = rule.strip().lower()
    if text.isdigit():
        blocks = int(text)
    elif text == "auto":
        blocks = math.ceil(work / threads)
    elif m := re.fullmatch(r"auto/(\d+)", text):
        per_thread = int(m[1])
        if per_thread == 0:
            raise LaunchError(line, f"grid={rule}: elements per thread must be at least 1")
        blocks = math.ceil(work / (threads * per_thread))
    elif m := re.fullmatch(r"(?:(\d+)\*)?sm(?:\*(\d+))?", text):
        if m[1] and m[2]:
            raise LaunchError(line, f"grid={rule}: write K*sm")
        blocks = int(m[1] or m[2] or 1) * sm_count
    else:
        raise LaunchError(line, f"grid={rule} is not a number, auto, auto/K or K*sm")
    blocks = max(blocks, 1)
    if blocks > 2**31 - 1:
        raise LaunchError(line, f"grid={rule} gives {blocks} blocks, more than the GPU allows in x")
    return blocks


def smem_bytes(text: str, line: int = 0, limit: int = 227 * 1024) -> int:
    """Dynamic shared memory per block in bytes (`4096`, `16k`)."""
    m = re.fullmatch(r"(\d+)(k?)", text.strip().lower())
    if not m:
        raise LaunchError(line, f"smem={text} must be bytes, e.g. 4096 or 16k")
    value = int(m[1]) * (1024 if m[2] else 1)
    if value > limit:
        raise LaunchError(line, f"smem={text} is {value} bytes; a block gets at most {limit}")
    return value
