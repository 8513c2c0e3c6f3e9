"""What ran during the learner's calls, and whether it was the learner's own work: the words and rules both the
CPU record (ATen ops, drill.judge.evidence_cpu) and the GPU record (kernels, drill.judge.evidence_gpu) use.

Imported only by the judge child; imports neither torch nor triton.

A verdict is correct only when the judge saw that the learner's code did the work. Each checked and timed call
is watched: every kernel (GPU) or ATen op outside a Triton launch (CPU) must be the learner's own, or of a kind
the card allows besides (`Allowance`: allocation, views, fills, copies), and at least one kernel of the learner's
file must have run. Anything else is named: "not your kernel: at::native::cunn_SoftMaxForward ran".
"""

from __future__ import annotations

import re
import types
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from drill.kernel_shared.protocol import EvidenceEvent


class Allowance(str, Enum):
    """A kind of work a card allows besides the learner's kernels (the harness's `ALLOWED`)."""

    ALLOCATION = "allocation"  # torch.empty and its kin: no work on the data
    VIEWS = "views"  # view, reshape, transpose, slicing: new shapes over the same memory
    FILL = "fill"  # torch.zeros, fill_, zero_, a memset: scratch buffers set to a constant
    COPY = "copy"  # .contiguous(), clone, copy_ on the device: data moved, nothing computed


# What a harness without `ALLOWED` allows: no work of any kind on the data but the learner's kernels.
DEFAULT_ALLOWED = (Allowance.ALLOCATION, Allowance.VIEWS, Allowance.FILL)

ALLOWANCE_WORDS = {
    Allowance.ALLOCATION: "allocation",
    Allowance.VIEWS: "views",
    Allowance.FILL: "fills and memsets",
    Allowance.COPY: "copies on the device",
}

# ATen ops (overload packets, as `str(func.overloadpacket)` names them) of each allowed kind, on the CPU.
CPU_OPS: dict[Allowance, frozenset[str]] = {
    Allowance.ALLOCATION: frozenset(
        f"aten.{name}" for name in ("empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided")
    ),
    Allowance.VIEWS: frozenset(
        f"aten.{name}"
        for name in (
            "view",
            "_unsafe_view",
            "_reshape_alias",
            "reshape",
            "as_strided",
            "t",
            "transpose",
            "permute",
            "expand",
            "slice",
            "select",
            "unsqueeze",
            "squeeze",
            "detach",
            "alias",
            "view_as",
            "flatten",
            "unflatten",
            "split",
            "split_with_sizes",
            "chunk",
            "narrow",
            "unbind",
            "movedim",
            "sym_size",
            "sym_stride",
            "sym_numel",
            "sym_storage_offset",
            "is_contiguous",
            "contiguous",
            "is_same_size",
        )
    ),  # fmt: skip
    Allowance.FILL: frozenset(
        f"aten.{name}"
        for name in (
            "fill_",
            "zero_",
            "zeros",
            "zeros_like",
            "ones",
            "ones_like",
            "full",
            "full_like",
            "new_zeros",
            "new_ones",
            "new_full",
            "fill",
            "zero",
        )
    ),  # fmt: skip
    Allowance.COPY: frozenset(f"aten.{name}" for name in ("copy_", "clone", "copy")),
}

# On a GPU: a fill or a copy torch launched as a kernel (mangled names keep these words), and plain memsets.
_FILL_KERNEL = re.compile(r"FillFunctor|fill_kernel")
_COPY_KERNEL = re.compile(r"direct_copy_kernel|copy_kernel")

# Names a kernel of the learner's file may not have, because libraries' kernels have them: a function named so
# in the file would make torch's, cuBLAS's or Inductor's kernel of that name look like the learner's.
LIBRARY_NAME = re.compile(
    r"^_Z"  # any C++ kernel (ATen, cuBLAS, cuDNN, CUTLASS, FlashAttention, NCCL): a mangled name
    r"|^nvjet|xmma|cutlass|cudnn|cublas|nccl|flash|^(sm\d+|ampere|turing|volta|hopper|blackwell)_"
    r"|^triton_(poi|per|red|tem|for|mm|bmm)_",  # torch.compile's generated Triton kernels
    re.IGNORECASE,
)

# CUpti_ActivityMemcpyKind: the copies that stay on the device
DEVICE_COPY_KINDS = frozenset({8, 10})  # device to device, peer to peer
COPY_KIND_WORDS = {1: "host to device", 2: "device to host", 8: "device to device", 10: "peer to peer"}


def parse_allowed(values: Iterable[str] | None) -> tuple[Allowance, ...]:
    """A harness's `ALLOWED` (strings) as allowances; DEFAULT_ALLOWED when it has none. Unknown words raise."""
    if values is None:
        return DEFAULT_ALLOWED
    return tuple(Allowance(str(v)) for v in values)


def allowance_words(allowed: Sequence[Allowance]) -> str:
    """What a card allows besides the learner's kernels, in words ("" for nothing)."""
    return ", ".join(ALLOWANCE_WORDS[a] for a in allowed)


def function_names(code: types.CodeType) -> set[str]:
    """The names of every function defined in the compiled file `code`, nested ones too."""
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                names.add(const.co_name)
                stack.append(const)
    return names


def learner_kernel_names(source: str, filename: str) -> frozenset[str]:
    """The kernel names a Triton file can launch as its own: its functions' names, less those a library's
    kernels have (LIBRARY_NAME)."""
    try:
        code = compile(source, filename, "exec")
    except SyntaxError:
        return frozenset()
    return frozenset(n for n in function_names(code) if not LIBRARY_NAME.search(n))


# -- readable names -------------------------------------------------------------------------------
_demangler: object | None = None


def demangle(name: str) -> str:
    """A C++ kernel name as C++ writes it (libstdc++'s demangler, where it loads), else as it is."""
    global _demangler
    if not name.startswith("_Z"):
        return name
    import ctypes

    if _demangler is None:
        try:
            lib = ctypes.CDLL("libstdc++.so.6")
            fn = lib.__cxa_demangle
            fn.restype = ctypes.c_void_p
            fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
            free = ctypes.CDLL(None).free
            free.argtypes = [ctypes.c_void_p]
            _demangler = (fn, free)
        except (OSError, AttributeError):
            _demangler = False
    if not _demangler:
        return name
    fn, free = _demangler  # type: ignore[misc]
    status = ctypes.c_int(1)
    out = fn(name.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not out:
        return name
    try:
        return str(ctypes.string_at(out).decode(errors="replace"))
    finally:
        free(out)


def short_kernel_name(name: str, most: int = 70) -> str:
    """A kernel's name for a sentence: demangled, without its parameter list, its template arguments cut short."""
    text = demangle(name)
    depth = 0
    for index, char in enumerate(text):  # the parameter list starts at the first "(" outside template brackets
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(0, depth - 1)
        elif char == "(" and depth == 0 and index > 0 and not text.startswith("(anonymous namespace)", index):
            text = text[:index]
            break
    text = text.removeprefix("void ")
    return text if len(text) <= most else text[: most - 1] + "…"


# -- what one watched call did --------------------------------------------------------------------
@dataclass
class Seen:
    """What ran during the watched calls: the learner's kernels, the allowed work, and what was not theirs.

    Names are counted; `foreign` keeps, per name, the first place it was seen (the learner's line on a CPU).
    """

    where: str  # "gpu": kernels from the judge's activity records; "cpu": ATen ops and Triton launches
    calls: int = 0
    mine: Counter[str] = field(default_factory=Counter)  # the learner's kernels (launches)
    allowed: Counter[str] = field(default_factory=Counter)  # allowed work, by what it was
    foreign: Counter[str] = field(default_factory=Counter)  # what was not the learner's
    places: dict[str, str] = field(default_factory=dict)  # foreign name -> where it came from
    idle_calls: int = 0  # calls in which no kernel of the learner's ran
    unseen: str = ""  # why what ran could not be seen (no evidence: the verdict cannot be "correct")

    def add(self, other: Seen) -> None:
        self.calls += other.calls
        self.mine.update(other.mine)
        self.allowed.update(other.allowed)
        self.foreign.update(other.foreign)
        for name, place in other.places.items():
            self.places.setdefault(name, place)
        self.idle_calls += other.idle_calls
        self.unseen = self.unseen or other.unseen

    @property
    def ok(self) -> bool | None:
        """True: every call ran a kernel of the learner's and nothing but allowed work; None: not seen."""
        if self.unseen or not self.calls:
            return None
        return not self.foreign and not self.idle_calls

    def refusal(self) -> str:
        """Why the work was not the learner's, in words; "" when it was."""
        parts = []
        if self.idle_calls:
            kind = "Triton kernel" if self.where == "cpu" else "kernel"
            parts.append(f"no {kind} from your file ran in {self.idle_calls} of {self.calls} calls")
        if self.foreign:
            name = next(iter(self.foreign))
            place = self.places.get(name, "")
            text = f"not your kernel: {'torch ran ' * (self.where == 'cpu')}{name}"
            text += f" ({place})" if place else ""
            text += " ran" * (self.where == "gpu")
            others = [n for n in self.foreign if n != name]
            if others:
                text += f", and {len(others)} more: {'; '.join(others[:2])}" + ("; …" if len(others) > 2 else "")
            parts.append(text)
        return "; ".join(parts)

    def words(self, phase: str = "checked") -> str:
        """The evidence the verdict rests on, in one line: what ran in the `phase` ("checked", "timed") calls."""
        calls = f"{self.calls} {phase} call{'s' * (self.calls != 1)}"
        if self.unseen:
            return f"what ran in the {calls} was not seen: {self.unseen}"
        launches = sum(self.mine.values())
        if self.where == "gpu":
            text = f"kernels seen in {calls}: "
            text += f"{launches} from your file ({_counted(self.mine)})" if self.mine else "none from your file"
        else:
            text = f"ops seen on the CPU in {calls}: "
            text += (
                f"{launches} launch{'es' * (launches != 1)} of your file's Triton kernels ({_counted(self.mine)})"
                if self.mine
                else "no launch of a Triton kernel from your file"
            )
        if self.foreign:
            text += f"; not yours: {_counted(self.foreign)}"
        if self.allowed:
            text += f"; allowed besides: {_counted(self.allowed)}"
        elif not self.foreign:
            text += ", nothing else"
        return text

    def event(self, phase: str, allowed: Sequence[Allowance]) -> EvidenceEvent:
        return {
            "event": "evidence",
            "phase": phase,
            "where": self.where,
            "ok": self.ok,
            "words": self.words("checked" if phase == "check" else "timed"),
            "refused": self.refusal(),
            "allows": allowance_words(allowed),
            "calls": self.calls,
            "mine": dict(self.mine),
            "allowed": dict(self.allowed),
            "foreign": dict(self.foreign),
        }


def _counted(counts: Counter[str], most: int = 4) -> str:
    items = list(counts.items())
    shown = "; ".join(f"{name} ×{n}" if n != 1 else name for name, n in items[:most])  # names hold commas
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


# -- the GPU's records, sorted ------------------------------------------------------------------------
class WorkKind(str, Enum):
    KERNEL = "kernel"
    MEMSET = "memset"
    MEMCPY = "copy"


@dataclass(frozen=True)
class Work:
    """One piece of GPU work in the judge's activity records: a kernel (its name), a memset or a copy."""

    kind: WorkKind
    name: str = ""
    copy_kind: int = 0  # a copy's CUpti_ActivityMemcpyKind


def sort_gpu_work(work: Iterable[Work], learner: frozenset[str], allowed: Sequence[Allowance]) -> Seen:
    """The GPU work of one watched call, sorted into the learner's kernels, allowed work and the rest.

    A kernel is the learner's when its name is one of `learner` (the functions of a Triton file, the kernels of
    a CUDA file's module); a fill or device copy of torch's, a memset and a device-to-device copy when the card
    allows that kind; anything else is named. A copy to or from the host is never allowed: the work must stay on
    the GPU.
    """
    seen = Seen("gpu", calls=1)
    for item in work:
        if item.kind == WorkKind.KERNEL:
            if item.name in learner:
                seen.mine[item.name] += 1
            elif Allowance.FILL in allowed and _FILL_KERNEL.search(item.name):
                seen.allowed["fill kernel"] += 1
            elif Allowance.COPY in allowed and _COPY_KERNEL.search(item.name) and item.name.startswith("_Z"):
                seen.allowed["copy kernel"] += 1
            else:
                seen.foreign[short_kernel_name(item.name)] += 1
        elif item.kind == WorkKind.MEMSET:
            if Allowance.FILL in allowed:
                seen.allowed["memset"] += 1
            else:
                seen.foreign["a memset"] += 1
        elif item.copy_kind in DEVICE_COPY_KINDS and Allowance.COPY in allowed:
            seen.allowed["device copy"] += 1
        else:
            seen.foreign[f"a copy {COPY_KIND_WORDS.get(item.copy_kind, f'of kind {item.copy_kind}')}"] += 1
    if not seen.mine:
        seen.idle_calls = 1
    return seen


def cpu_op_allowed(op: str, allowed: Sequence[Allowance]) -> bool:
    """Whether the ATen op `op` ("aten.empty") is of a kind the card allows."""
    return any(op in CPU_OPS[a] for a in allowed)
