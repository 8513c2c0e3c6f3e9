"""What the learner's code may call inside a rank process, and how the judge watches it.

Built-in collectives are refused: every way torch offers them (the functions of
torch.distributed and of its functional collectives, the methods of process
groups and backends, the c10d operators) is replaced by one that raises
`Refused`, so a call through an alias or a `getattr` is caught as surely as
`dist.all_reduce(x)` (the source is also read for them before anything runs:
drill.kernel_shared.collective_source). Nothing of torch's collectives is kept: the
judge needs none once the learner's file is loaded (the expected result is
computed in the judge's own process, NCCL's collective is timed before the
learner's file is read), so no closure, attribute or frame leads back to one.

Point-to-point operations stay, and each says what the rank is doing in its
status slot (drill.judge.collective.status_slot), so a hang or a death is reported as
"rank 2, op 5: waiting for irecv from rank 1 (line 21)". In a checked run
(`poison=True`) every receive lands in a buffer of the judge's first; the
learner's buffer holds NaN until `wait()` is called on the handle, when the
received values are copied in. A ring that reads a buffer before its receive
completed reads NaN, on gloo as on NCCL, every time. Timed runs use the plain
operations: no copy is billed to the learner.
"""

from __future__ import annotations

import datetime
import gc
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from drill.judge.collective.status_slot import StatusSlot
from drill.kernel_shared.collective_source import MODULE_COLLECTIVES

# The same, as methods of a process group or backend object.
COLLECTIVE_METHODS = (
    "allreduce",
    "allreduce_coalesced",
    "reduce",
    "broadcast",
    "allgather",
    "allgather_coalesced",
    "allgather_into_tensor_coalesced",
    "all_gather_single",
    "all_gather_single_coalesced",
    "_allgather_base",
    "reduce_scatter",
    "reduce_scatter_single",
    "reduce_scatter_single_coalesced",
    "reduce_scatter_tensor_coalesced",
    "_reduce_scatter_base",
    "alltoall",
    "alltoall_base",
    "all_to_all_single",
    "gather",
    "scatter",
)
# torch.distributed._functional_collectives (what torch.compile traces collectives into).
FUNCTIONAL_COLLECTIVES = (
    "all_reduce",
    "all_reduce_coalesced",
    "all_reduce_inplace",
    "all_gather_tensor",
    "all_gather_tensor_autograd",
    "all_gather_tensor_inplace",
    "all_gather_into_tensor_coalesced",
    "all_gather_inplace",
    "reduce_scatter_tensor",
    "reduce_scatter_tensor_autograd",
    "reduce_scatter_tensor_coalesced",
    "reduce_scatter_tensor_inplace",
    "all_to_all_single",
    "all_to_all_single_autograd",
    "all_to_all_inplace",
    "broadcast",
    "permute_tensor",
)
OPERATOR_NAMESPACES = ("c10d", "_c10d_functional", "_c10d_functional_autograd")
P2P_FUNCTIONS = ("isend", "irecv", "send", "recv", "batch_isend_irecv")


class Refused(RuntimeError):
    """The learner's code called a built-in collective."""


def refusal_words(name: str) -> str:
    return (
        f"{name} is a built-in collective, and this card asks you to build the collective yourself from "
        "point-to-point operations (dist.send, recv, isend, irecv, batch_isend_irecv with P2POp)"
    )


class PointToPoint:
    """torch's own point-to-point operations, saved before the learner's file is loaded: what the watched ones call."""

    def __init__(self) -> None:
        self.isend = c10d.isend
        self.irecv = c10d.irecv
        self.send = c10d.send
        self.recv = c10d.recv
        self.batch_isend_irecv = c10d.batch_isend_irecv

    def named(self, name: str) -> Callable[..., object]:
        """One of P2P_FUNCTIONS by its name, as torch defines it."""
        function: Callable[..., object] = getattr(self, name)
        return function


def _refuser(name: str) -> Callable[..., NoReturn]:
    """A stand-in that raises Refused. It holds nothing but its name: no closure, default or attribute leads back to
    torch's function (which is dropped, so no walk of the heap finds it)."""

    def refused(*args: object, **kwargs: object) -> NoReturn:
        raise Refused(refusal_words(name))

    refused.__name__ = name.rsplit(".", 1)[-1]
    refused.__qualname__ = refused.__name__
    return refused


def _refused_method(name: str) -> Callable[..., NoReturn]:
    def method(self: object, *args: object, **kwargs: object) -> NoReturn:
        raise Refused(refusal_words(f"ProcessGroup.{name}"))

    method.__name__ = name
    method.__qualname__ = name
    return method


def _replace_everywhere(replacements: dict[int, Callable[..., object]]) -> None:
    """Every reference to one of the replaced functions (by identity) turned into its stand-in: module names, and
    whatever else holds one (a table keyed by torch's collectives, a list, a closure cell), so nothing keeps torch's
    function alive and no walk of the heap finds it."""
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if not isinstance(space, dict):
            continue
        for attr, value in list(space.items()):
            stand_in = replacements.get(id(value))
            if stand_in is not None:
                space[attr] = stand_in
    originals = [o for o in gc.get_objects() if id(o) in replacements]
    for holder in gc.get_referrers(*originals):  # one walk of the heap for all of them
        if holder is not originals:
            for original in originals:
                _swap(holder, original, replacements[id(original)])
    originals.clear()


def _swap(holder: object, original: object, stand_in: object) -> None:
    """`original` replaced by `stand_in` inside one container that holds it."""
    if isinstance(holder, dict):
        for key, value in list(holder.items()):
            if value is original:
                holder[key] = stand_in
        if any(key is original for key in holder):
            holder[stand_in] = holder.pop(original)
    elif isinstance(holder, list):
        for i, value in enumerate(holder):
            if value is original:
                holder[i] = stand_in
    elif isinstance(holder, set):
        holder.discard(original)
        holder.add(stand_in)
    elif isinstance(holder, types.CellType) and holder.cell_contents is original:
        holder.cell_contents = stand_in


def _process_group_classes() -> list[type]:
    """ProcessGroup, Backend and every backend class torch's C++ module defines (Gloo, NCCL, MPI, UCC, ...)."""
    import torch._C._distributed_c10d as cpp

    bases = tuple(c for c in (getattr(cpp, "ProcessGroup", None), getattr(cpp, "Backend", None)) if c is not None)
    classes = []
    for value in vars(cpp).values():
        if isinstance(value, type) and bases and issubclass(value, bases):
            classes.append(value)
    return classes


# The c10d operators that move data between the ranks (every collective of a process group goes through one of them
# in C++, whichever Python route called it); send, recv and barrier are left alone.
POINT_TO_POINT_OPERATORS = frozenset({"send", "recv_", "recv_any_source_", "barrier", "monitored_barrier_"})
BACKEND_KEYS = ("CPU", "CUDA", "PrivateUse1", "SparseCPU", "SparseCUDA")
_held: list[int] = []  # addresses only: the registration itself is kept alive outside Python's reach


def _refuse_operators() -> None:
    """Each c10d collective operator's kernels replaced, in the dispatcher, by one that raises.

    The registration lives as long as its library handle; the handle is kept
    alive by one extra reference and dropped from every Python name, so no
    walk of the heap can find it and undo the registration (the handle is not
    an object the garbage collector lists). Deleting the operator's attribute
    from torch.ops, or looking it up afresh, reaches the same dispatcher entry.
    """
    import ctypes
    import warnings

    import torch._C as cpp

    names = [n.split("::", 1)[1] for n in cpp._dispatch_get_all_op_names() if n.startswith("c10d::")]
    library = cpp._dispatch_library("IMPL", "c10d", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        for name in names:
            if name in POINT_TO_POINT_OPERATORS or name == "check_for_nan":
                continue
            table = cpp._dispatch_dump(f"c10d::{name}")
            for key in BACKEND_KEYS:
                if f"\n{key}: registered" in "\n" + table:
                    library.impl(name, key, _refuser(f"torch.ops.c10d.{name}"))
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    _held.append(id(library))
    del library


def refuse_collectives() -> None:
    """Replace every built-in collective the learner could reach with one that raises Refused, keeping none of them.

    Four layers, each enough for the routes above it: torch.distributed's module
    functions (and every other module's name for them), its functional
    collectives, the collective methods of every process-group and backend
    class, and, under all of them, the c10d operators in the dispatcher.
    """
    replaced: dict[int, Callable[..., object]] = {}
    for name in MODULE_COLLECTIVES:
        original = getattr(c10d, name, None)
        if original is not None:
            replaced[id(original)] = _refuser(f"torch.distributed.{name}")
    functional: types.ModuleType | None = None
    try:
        import torch.distributed._functional_collectives as functional
    except ImportError:
        pass
    if functional is not None:
        for name in (*FUNCTIONAL_COLLECTIVES, *MODULE_COLLECTIVES):
            original = getattr(functional, name, None)
            if original is not None:
                replaced[id(original)] = _refuser(f"torch.distributed._functional_collectives.{name}")
    _replace_everywhere(replaced)
    for cls in _process_group_classes():
        for name in COLLECTIVE_METHODS:
            if name in vars(cls):
                try:
                    setattr(cls, name, _refused_method(name))
                except (AttributeError, TypeError):  # a class that takes no new attributes
                    pass
    _refuse_operators()
    for space in OPERATOR_NAMESPACES:  # the Python objects torch.ops has cached already: fresh look-ups from now on
        namespace = getattr(torch.ops, space)
        for name, value in list(vars(namespace).items()):
            if isinstance(value, torch._ops.OpOverloadPacket) and name not in POINT_TO_POINT_OPERATORS:
                delattr(namespace, name)
    gc.collect()


def _describe(tensor: torch.Tensor) -> str:
    return f"{tensor.numel():,} {str(tensor.dtype).removeprefix('torch.')}"


def _source_named(src: int | None, group_src: int | None) -> int | str:
    """The rank a receive names: the global rank, else the rank within the group, else "any"."""
    if src is not None:
        return src
    if group_src is not None:
        return group_src
    return "any"


class Watch:
    """The learner's point-to-point calls: counted, named in the status slot, receives poisoned when asked."""

    def __init__(self, originals: PointToPoint, status: StatusSlot, learner_file: str) -> None:
        self.originals = originals
        self.status = status
        self.learner_file = learner_file
        self.poison = True
        self.where = ""  # which case and run the rank is in
        self.ops = 0
        self.last = ""  # the last operation posted: what a GPU still busy after the call is likely waiting on

    # -- what the status slot says -------------------------------------------------------------
    def begin(self, where: str, *, poison: bool) -> None:
        """A call of the learner's function starts: ops are counted from 1 again."""
        self.where = where
        self.poison = poison
        self.ops = 0
        self.last = ""
        self.status.set(f"{where}: inside your function, before its first send or receive")

    def say(self, doing: str) -> None:
        self.status.set(f"{self.where}: {doing}")

    def line(self) -> str:
        """' (line N)': where in the learner's file the current operation was called."""
        frame = sys._getframe(1)
        for _ in range(30):
            if frame is None:
                break
            if frame.f_code.co_filename == self.learner_file:
                return f" (line {frame.f_lineno})"
            frame = frame.f_back  # type: ignore[assignment]
        return ""

    def label(self, kind: str, tensor: torch.Tensor, peer: object) -> str:
        self.ops += 1
        way = "to" if kind in ("send", "isend") else "from"
        self.last = f"op {self.ops}: {kind} {way} rank {peer} ({_describe(tensor)}){self.line()}"
        return self.last

    # -- the operations as the learner sees them -------------------------------------------------
    def isend(
        self,
        tensor: torch.Tensor,
        dst: int | None = None,
        group: dist.ProcessGroup | None = None,
        tag: int = 0,
        group_dst: int | None = None,
    ) -> Handle:
        label = self.label("isend", tensor, dst if dst is not None else group_dst)
        self.say(f"posting {label}")
        work = self.originals.isend(tensor, dst, group, tag, group_dst)
        self.say(f"posted {label}")
        return Handle(work, self, label, [])

    def irecv(
        self,
        tensor: torch.Tensor,
        src: int | None = None,
        group: dist.ProcessGroup | None = None,
        tag: int = 0,
        group_src: int | None = None,
    ) -> Handle:
        label = self.label("irecv", tensor, _source_named(src, group_src))
        self.say(f"posting {label}")
        landing = self._landing(tensor)
        work = self.originals.irecv(landing[0][0] if landing else tensor, src, group, tag, group_src)
        self._poison(landing)
        self.say(f"posted {label}")
        return Handle(work, self, label, landing)

    def send(
        self,
        tensor: torch.Tensor,
        dst: int | None = None,
        group: dist.ProcessGroup | None = None,
        tag: int = 0,
        group_dst: int | None = None,
    ) -> None:
        label = self.label("send", tensor, dst if dst is not None else group_dst)
        self.say(f"blocked in {label} until it is received")
        with self._plain():
            self.originals.send(tensor, dst, group, tag, group_dst)
        self.say(f"returned from {label}")

    def recv(
        self,
        tensor: torch.Tensor,
        src: int | None = None,
        group: dist.ProcessGroup | None = None,
        tag: int = 0,
        group_src: int | None = None,
    ) -> int:
        label = self.label("recv", tensor, _source_named(src, group_src))
        self.say(f"blocked in {label} until it arrives")
        with self._plain():
            sender = self.originals.recv(tensor, src, group, tag, group_src)
        self.say(f"returned from {label}")
        return sender

    def batch_isend_irecv(self, p2p_op_list: list[dist.P2POp]) -> list[Handle] | list[dist.Work]:
        if not isinstance(p2p_op_list, list) or not all(isinstance(op, dist.P2POp) for op in p2p_op_list):
            return self.originals.batch_isend_irecv(p2p_op_list)  # torch's own words
        raw = []
        labels = []
        landings: list[list[tuple[torch.Tensor, torch.Tensor, list[bool]]]] = []
        for op in p2p_op_list:
            receive = op.op == self.irecv or op.op is self.originals.irecv
            plain = object.__new__(dist.P2POp)
            plain.__dict__.update(op.__dict__)
            plain.op = self.originals.irecv if receive else self.originals.isend
            landing = self._landing(op.tensor) if receive else []
            if landing:
                plain.tensor = landing[0][0]
            raw.append(plain)
            landings.append(landing)
            labels.append(self.label("irecv" if receive else "isend", op.tensor, op.peer))
        batch = f"batch of {len(raw)} ({'; '.join(labels)})"
        self.say(f"posting {batch}")
        with self._plain():
            works = self.originals.batch_isend_irecv(raw)
        for landing in landings:
            self._poison(landing)
        self.say(f"posted {batch}")
        if len(works) == len(raw):  # one handle per operation (gloo)
            return [Handle(w, self, labels[i], landings[i]) for i, w in enumerate(works)]
        every = [pair for landing in landings for pair in landing]  # one handle for the whole batch (NCCL)
        return [Handle(w, self, batch, every) for w in works]

    # -- receives that land only at wait() -------------------------------------------------------
    def _landing(self, tensor: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor, list[bool]]]:
        """[(the judge's buffer the receive really goes to, the learner's buffer, landed?)]; empty when not poisoning."""
        if not self.poison:
            return []
        return [(torch.empty_like(tensor), tensor, [False])]

    @staticmethod
    def _poison(landing: list[tuple[torch.Tensor, torch.Tensor, list[bool]]]) -> None:
        for _, theirs, _ in landing:
            if theirs.is_floating_point():
                theirs.fill_(float("nan"))

    @contextmanager
    def _plain(self) -> Iterator[None]:
        """torch's own isend and irecv in torch.distributed while inside (send, recv and batches call them)."""
        saved = {name: getattr(c10d, name) for name in ("isend", "irecv")}
        for name in saved:
            setattr(c10d, name, self.originals.named(name))
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(c10d, name, value)

    def install(self) -> None:
        """The watched operations in place of torch's (P2POp accepts them: it compares with c10d's names)."""
        for name in P2P_FUNCTIONS:
            method = getattr(self, name)
            setattr(c10d, name, method)
            setattr(dist, name, method)

    def uninstall(self) -> None:
        """torch's own operations back, for the timed calls: nothing of the judge's between the learner and NCCL."""
        for name in P2P_FUNCTIONS:
            setattr(c10d, name, self.originals.named(name))
            setattr(dist, name, self.originals.named(name))


class Handle:
    """What isend, irecv and batch_isend_irecv return: torch's handle, which names the op while it is waited on
    and, for a poisoned receive, copies the received values into the learner's buffer once waited for."""

    def __init__(
        self,
        work: dist.Work | None,
        watch: Watch,
        label: str,
        landing: list[tuple[torch.Tensor, torch.Tensor, list[bool]]],
    ) -> None:
        self._work = work
        self._watch = watch
        self._label = label
        self._landing = landing

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        self._watch.say(f"waiting for {self._label}")
        done = True
        if self._work is not None:
            done = self._work.wait() if timeout is None else self._work.wait(timeout)
        for staged, theirs, landed in self._landing:
            if not landed[0]:
                theirs.copy_(staged)
                landed[0] = True
        self._watch.say(f"waited for {self._label}")
        return done

    def is_completed(self) -> bool:
        return bool(self._work.is_completed()) if self._work is not None else True

    def __getattr__(self, name: str) -> object:
        return getattr(self._work, name)
