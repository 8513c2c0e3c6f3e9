"""CUDA C++ to cubin with NVRTC through ctypes: compiler messages with line numbers and ptxas's resource report.

Works on any machine with `libnvrtc` (the PyPI package `nvidia-cuda-nvrtc-cu12`
ships one): no GPU and no CUDA toolkit are needed to compile.
"""

from __future__ import annotations

import ctypes
import glob
import itertools
import os
import re
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from drill.kernel_shared.protocol import CompilerMessageFields, KernelResourceFields

DEFAULT_ARCH = "sm_90"

_NVRTC_SUCCESS = 0
_NVRTC_COMPILATION = 6


@dataclass(frozen=True)
class CompilerMessage:
    """One diagnostic from the compiler, at a line of the learner's file (0 when it names none)."""

    line: int
    column: int
    severity: str  # error | warning | note
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "no line"
        return f"{where}: {self.severity}: {self.message}"

    def to_json(self) -> CompilerMessageFields:
        return {"line": self.line, "column": self.column, "severity": self.severity, "message": self.message}


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reported for one `__global__` function."""

    name: str
    registers: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    constant_bytes: int = 0
    barriers: int = 0
    report: str = "ptxas"  # "cubin": read from the binary; spill counts unknown

    def to_json(self) -> KernelResourceFields:
        return {
            "name": self.name,
            "registers": self.registers,
            "shared_bytes": self.shared_bytes,
            "stack_bytes": self.stack_bytes,
            "spill_store_bytes": self.spill_store_bytes,
            "spill_load_bytes": self.spill_load_bytes,
            "constant_bytes": self.constant_bytes,
            "barriers": self.barriers,
            "report": self.report,
        }

    def summary(self) -> str:
        text = f"{self.name}: {self.registers} registers, {self.shared_bytes} B shared, {self.stack_bytes} B stack"
        if self.spill_store_bytes or self.spill_load_bytes:
            text += f", SPILLS {self.spill_store_bytes} B stored / {self.spill_load_bytes} B loaded"
        if self.report == "cubin":
            text += " (from the binary: spills not reported)"
        return text


@dataclass
class CompileResult:
    ok: bool
    log: str
    arch: str
    seconds: float
    cubin: bytes = b""
    messages: list[CompilerMessage] = field(default_factory=list)
    resources: list[KernelResources] = field(default_factory=list)

    @property
    def errors(self) -> list[CompilerMessage]:
        return [m for m in self.messages if m.severity == "error"]


class NvrtcUnavailable(RuntimeError):
    """No libnvrtc could be loaded."""


def _candidates() -> list[str]:
    """Places to try, in order, before the system-wide search (see _system_library)."""
    found: list[str] = []
    if os.environ.get("DRILL_NVRTC"):
        found.append(os.environ["DRILL_NVRTC"])
    roots = [Path(p) for p in sys.path if p and os.path.isdir(p)]
    for root in roots:
        for pattern in (
            "nvidia/cuda_nvrtc/lib/libnvrtc.so*",
            "nvidia/cu13/lib/libnvrtc.so*",
            "nvidia/cu12/lib/libnvrtc.so*",
            "nvidia/cuda_nvrtc/bin/nvrtc64*.dll",
        ):
            found.extend(sorted(glob.glob(str(root / pattern)), reverse=True))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            found.extend(sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")), reverse=True))
    return _usable(found)


def first_candidate_files() -> list[str]:
    """The library `load_library` tries first, with the builtins library beside it, loading neither (a judge
    reads them ahead: drill.judge.readahead); [] when none is in the usual places."""
    found = _candidates()
    if not found:
        return []
    folder = os.path.dirname(found[0])
    return [found[0], *sorted(glob.glob(os.path.join(folder, "libnvrtc-builtins*")))]


def _system_library() -> list[str]:
    """The loader's own search, last: on Linux it runs ldconfig, gcc and ld (a tenth of a second or more)."""
    import ctypes.util

    name = ctypes.util.find_library("nvrtc")
    return _usable([name]) if name else []


def _usable(paths: list[str]) -> list[str]:
    # builtins libraries sit beside the real one and cannot compile anything
    return [f for f in dict.fromkeys(paths) if "builtins" not in os.path.basename(f)]


_builds = itertools.count(1)
_lib: ctypes.CDLL | None = None
_lib_path: str | None = None
_lock = threading.Lock()


def load_library() -> ctypes.CDLL:
    """Load libnvrtc once; raise NvrtcUnavailable with the places tried."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        tried: list[str] = []
        for places in (_candidates, _system_library):
            for path in places():
                if path in tried:
                    continue
                tried.append(path)
                try:
                    lib = ctypes.CDLL(path)
                    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
                except (OSError, AttributeError):
                    continue
                _lib = lib
                _lib_path = path
                return lib
        raise NvrtcUnavailable(
            "libnvrtc not found (install the PyPI package nvidia-cuda-nvrtc-cu12, or set DRILL_NVRTC); tried: "
            + (", ".join(tried) or "nothing")
        )


def available() -> bool:
    try:
        load_library()
    except NvrtcUnavailable:
        return False
    return True


def version() -> tuple[int, int]:
    lib = load_library()
    major = ctypes.c_int()
    minor = ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def library_path() -> str | None:
    return _lib_path if available() else None


class Ahead:
    """A build started before anyone asks for it (a new judge compiles its first job while torch imports);
    `compile_cuda` with the same source, file name and arch waits for it instead of compiling again."""

    def __init__(self, key: tuple[str, str, str]) -> None:
        self.key = key
        self.done = threading.Event()
        self.result: CompileResult | None = None

    def run(self) -> None:
        """Compile, in the calling thread (NVRTC lets go of the GIL meanwhile)."""
        try:
            source, filename, arch = self.key
            self.result = _compile(source, filename, arch, ())
        except Exception:  # the awaited call compiles again and reports it there
            self.result = None
        finally:
            self.done.set()


_ahead: dict[tuple[str, str, str], Ahead] = {}
_ahead_lock = threading.Lock()


def reserve(source: str, filename: str, *, arch: str) -> Ahead | None:
    """Claim the build of `source` for a caller that will `run()` it; None when one is already claimed."""
    key = (source, filename, arch)
    with _ahead_lock:
        if key in _ahead:
            return None
        _ahead[key] = Ahead(key)
        return _ahead[key]


def compile_cuda(
    source: str,
    filename: str = "kernel.cu",
    *,
    arch: str = DEFAULT_ARCH,
    options: tuple[str, ...] = (),
) -> CompileResult:
    """Compile `source` to a cubin for `arch` with `--ptxas-options=-v`.

    The source is compiled as given, under `filename`, so every line number in
    the log is a line of the learner's file. A build reserved ahead with the
    same arguments is awaited and handed over (once) instead.
    """
    if not options:
        with _ahead_lock:
            ahead = _ahead.pop((source, filename, arch), None)
        if ahead is not None:
            ahead.done.wait()
            if ahead.result is not None:
                return ahead.result
    return _compile(source, filename, arch, options)


# One build at a time in a process: two threads in NVRTC at once (a judge's builds ahead) crashed a process.
_one_build = threading.Lock()


def _compile(source: str, filename: str, arch: str, options: tuple[str, ...]) -> CompileResult:
    with _one_build:
        return _compile_now(source, filename, arch, options)


def _compile_now(source: str, filename: str, arch: str, options: tuple[str, ...]) -> CompileResult:
    lib = load_library()
    start = time.perf_counter()
    shown = os.path.basename(filename)
    # NVRTC 12.9+ may cache builds: a build answered from the cache carries no ptxas report.
    # A name unique to this build keeps every build fresh; the log is given back under `shown`.
    stem, dot, ext = shown.rpartition(".")
    unique = f"{stem or ext}.drill{os.getpid()}x{next(_builds)}{dot}{ext if stem else ''}"
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode("utf-8"), unique.encode("utf-8"), 0, None, None)
    if rc != _NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtcCreateProgram failed: {lib.nvrtcGetErrorString(rc).decode()}")
    try:
        opts = [f"-arch={arch}", "--ptxas-options=-v", "-lineinfo", "-std=c++17", *options]
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode("utf-8", "replace").replace(unique, shown)
        cubin = b""
        if rc == _NVRTC_SUCCESS:
            lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
            cbuf = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetCUBIN(prog, cbuf)
            cubin = cbuf.raw
        elif rc != _NVRTC_COMPILATION:
            log = (log + "\n" if log else "") + f"NVRTC: {lib.nvrtcGetErrorString(rc).decode()}"
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    seconds = time.perf_counter() - start
    messages = parse_messages(log, shown)
    ok = rc == _NVRTC_SUCCESS
    if not ok and not any(m.severity == "error" for m in messages):
        messages.append(
            CompilerMessage(0, 0, "error", log.strip().splitlines()[-1] if log.strip() else "compilation failed")
        )
    resources: list[KernelResources] = []
    if ok:
        resources = parse_resources(log) or cubin_kernels(cubin)
    return CompileResult(ok, log, arch, seconds, cubin, messages, resources)


_MESSAGE = re.compile(
    r"^(?P<file>[^\s(][^()\n]*?)\((?P<line>\d+)\): (?P<sev>error|warning|remark|note)(?: #[\w-]+)?: (?P<msg>.*)$"
)
_CARET = re.compile(r"^\s*\^\s*$")


def parse_messages(log: str, filename: str) -> list[CompilerMessage]:
    """Pick `file(line): error: text` diagnostics out of an NVRTC log.

    The column comes from the caret line NVRTC prints under the source line.
    """
    lines = log.splitlines()
    out: list[CompilerMessage] = []
    for i, text in enumerate(lines):
        m = _MESSAGE.match(text.strip())
        if not m:
            continue
        column = 0
        if i + 2 < len(lines) and _CARET.match(lines[i + 2]):
            # NVRTC echoes the source line and a caret line, each behind two spaces
            column = max(1, lines[i + 2].index("^") - 1)
        severity = "warning" if m["sev"] == "remark" else m["sev"]
        line = int(m["line"]) if os.path.basename(m["file"]) == filename else 0
        message = m["msg"].strip()
        if not line:
            message = f"{m['file']}({m['line']}): {message}"
        out.append(CompilerMessage(line, column, severity, message))
    return out


_FUNC = re.compile(r"ptxas info\s*: (?:Compiling entry function|Function properties for) '?(?P<name>[\w$]+)'?")
_FRAME = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers")
_SMEM = re.compile(r"(?P<smem>\d+) bytes smem")
_CMEM = re.compile(r"(?P<cmem>\d+) bytes cmem\[0\]")
_BARRIERS = re.compile(r"used (?P<bar>\d+) barriers")


def parse_resources(log: str) -> list[KernelResources]:
    """Per-kernel registers, shared memory, stack and spills from ptxas's `-v` report."""
    found: dict[str, dict[str, int]] = {}
    order: list[str] = []
    current: str | None = None
    for raw in log.splitlines():
        text = raw.strip()
        m = _FUNC.search(text)
        if m:
            current = m["name"]
            if current not in found:
                found[current] = {}
                order.append(current)
            continue
        if current is None:
            continue
        entry = found[current]
        if f := _FRAME.search(text):
            entry.update(stack_bytes=int(f["stack"]), spill_store_bytes=int(f["st"]), spill_load_bytes=int(f["ld"]))
        if u := _USED.search(text):
            entry["registers"] = int(u["regs"])
            if s := _SMEM.search(text):
                entry["shared_bytes"] = int(s["smem"])
            if c := _CMEM.search(text):
                entry["constant_bytes"] = int(c["cmem"])
            if b := _BARRIERS.search(text):
                entry["barriers"] = int(b["bar"])
    return [KernelResources(name, **cast("dict[str, Any]", found[name])) for name in order if found[name]]


def cubin_kernels(cubin: bytes) -> list[KernelResources]:
    """Kernels in a cubin (an ELF file) with registers, static shared memory and stack, read from its sections.

    The fallback when the compiler log carries no ptxas report. A kernel's code
    is section `.text.<name>` (its sh_info is the kernel's symbol index); the
    `.nv.info` section holds per-symbol attributes (register count 0x2f,
    frame size 0x11); static shared memory is the size of `.nv.shared.<name>`
    less the 1 KB the driver reserves per block on sm_80 and later.
    """
    if len(cubin) < 64 or cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return []
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        if base + 64 > len(cubin):
            return []
        name, _type, _flags, _addr, offset, size, _link, info = struct.unpack_from("<IIQQQQII", cubin, base)
        sections.append((name, offset, size, info))
    if shstrndx >= len(sections):
        return []
    str_offset = sections[shstrndx][1]

    def name_of(index: int) -> str:
        start = str_offset + index
        return cubin[start : cubin.index(b"\0", start)].decode("ascii", "replace")

    named = [(name_of(n), off, size, info) for n, off, size, info in sections]
    kernels = {info: name[len(".text.") :] for name, _o, _s, info in named if name.startswith(".text.")}
    shared = {name[len(".nv.shared.") :]: size for name, _o, size, _i in named if name.startswith(".nv.shared.")}
    attrs: dict[int, dict[str, int]] = {sym: {} for sym in kernels}
    for name, off, size, _info in named:
        if name != ".nv.info":
            continue
        data = cubin[off : off + size]
        i = 0
        while i + 4 <= len(data):
            fmt = data[i]
            attr = data[i + 1]
            if fmt == 4:  # attribute with a payload: u16 length, then the bytes
                length = struct.unpack_from("<H", data, i + 2)[0]
                if length == 8 and attr in (0x2F, 0x11):
                    sym, value = struct.unpack_from("<II", data, i + 4)
                    if sym in attrs:
                        attrs[sym]["registers" if attr == 0x2F else "stack_bytes"] = value
                i += 4 + length
            elif fmt == 1:
                i += 2
            else:
                i += 4
    out = []
    for sym, kname in kernels.items():
        smem = shared.get(kname, 0)
        out.append(
            KernelResources(kname, shared_bytes=smem - 1024 if smem >= 1024 else smem, report="cubin", **attrs[sym])
        )
    return out
