"""What each rank of a collective card moved, counted where the learner's code cannot change the count.

On gloo (the CPU) the ranks talk over TCP connections made when the process
group starts, before the learner's file is read. The judge takes its own
handle on each of those connections (pidfd_getfd: a duplicate of the rank's
socket, held in the judge) and reads the kernel's byte counters on both ends
(TCP_INFO's tcpi_bytes_received): what rank r received is the sum over its
connections, what it sent is what the other ends received. A rank cannot
reset or inflate a kernel counter, nor hide a connection the judge already
holds; a file, shared memory or a socket of its own moves nothing on them.

On NCCL (GPUs) the record is NCCL's own log of every operation it is asked
for (NCCL_DEBUG=INFO, subsystem COLL: "Send: opCount 3 sendbuff 0x.. recvbuff
(nil) count 4096 datatype 7 op 0 root 1 comm 0x.. [nranks=2] stream 0x.."),
written by NCCL in each rank to a file of the judge's: the bytes of every Send
and Recv are counted, and any collective (AllReduce, AllGather, ...) in the
learner's call is named. A CUDA graph replays without a line (the answer
replays its own sends and receives from one), so on NCCL a case's two runs
are counted together, against one run's worth.
"""

from __future__ import annotations

import ctypes
import os
import re
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

from drill.kernel_shared.collective_sizes import TrafficFloor, size_words

PIDFD_GETFD = 438  # the system call's number (the same on x86-64 and arm64)
TCP_INFO_BYTES = 144
BYTES_RECEIVED_AT = 128  # struct tcp_info: tcpi_bytes_received, a u64 (Linux 4.1 and later)
HOW_GLOO = "gloo's connections between the ranks, read by the judge from the kernel's counters"
HOW_NCCL = "NCCL's own record of every send and receive"

# ncclDataType_t: its size in bytes (nccl.h: int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16,
# float8 e4m3, float8 e5m2).
NCCL_TYPE_BYTES = {0: 1, 1: 1, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 1, 11: 1}
NCCL_POINT_TO_POINT = ("Send", "Recv")
_NCCL_LINE = re.compile(
    r"NCCL INFO (?P<op>\w+): opCount (?P<seq>[0-9a-fA-F]+) sendbuff \S+ recvbuff \S+ count (?P<count>\d+) "
    r"datatype (?P<dtype>\d+) op \d+ root (?P<peer>-?\d+) comm \S+ \[nranks=\d+\]"
)
# A kernel NCCL launches for a collective (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllGather_RING_...),
# as a GPU's activity records name it; point-to-point runs as ncclDevKernel_SendRecv / ncclKernel_SendRecv_...
_NCCL_KERNEL = re.compile(r"^nccl(?:Dev)?Kernel_(?P<op>[A-Za-z]+)")


class TrafficUnavailable(Exception):
    """The judge could not count a rank's traffic: no verdict of `correct` can rest on it."""


@dataclass
class Reading:
    """One rank's bytes so far, and the built-in collectives its record shows."""

    sent: int = 0
    received: int = 0
    collectives: list[str] = field(default_factory=list)

    def since(self, before: Reading) -> Reading:
        return Reading(
            self.sent - before.sent,
            self.received - before.received,
            self.collectives[len(before.collectives) :],
        )

    def plus(self, other: Reading) -> Reading:
        return Reading(self.sent + other.sent, self.received + other.received, self.collectives + other.collectives)


# -- gloo: the kernel's counters of the ranks' TCP connections ---------------------------------------
def _take_socket(pidfd: int, fd: int) -> socket.socket | None:
    """A duplicate of another process's descriptor `fd` as a socket in this process, or None if it is not one."""
    libc = ctypes.CDLL(None, use_errno=True)
    got = int(libc.syscall(PIDFD_GETFD, pidfd, fd, 0))
    if got < 0:
        error = ctypes.get_errno()
        raise TrafficUnavailable(f"the judge could not hold the rank's connections ({os.strerror(error)})")
    try:
        return socket.socket(fileno=got)
    except OSError:
        os.close(got)
        return None


def _connections(pid: int) -> list[socket.socket]:
    """The connected TCP sockets of process `pid`, duplicated into the judge."""
    out: list[socket.socket] = []
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError) as exc:
        raise TrafficUnavailable(f"the judge could not reach the rank's process ({exc})") from exc
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except OSError:
                continue
            sock = _take_socket(pidfd, int(name))
            if sock is None:
                continue
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
                try:
                    sock.getpeername()
                    out.append(sock)
                    continue
                except OSError:  # a listening socket
                    pass
            sock.close()
    except OSError as exc:
        raise TrafficUnavailable(f"the judge could not list the rank's connections ({exc})") from exc
    finally:
        os.close(pidfd)
    return out


def _bytes_received(sock: socket.socket) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
    if len(info) < BYTES_RECEIVED_AT + 8:
        raise TrafficUnavailable("this kernel's TCP counters have no byte counts (Linux 4.1 or later needed)")
    value: int = struct.unpack_from("Q", info, BYTES_RECEIVED_AT)[0]
    return value


class GlooConnections:
    """Every rank's connections to the other ranks, held by the judge from the moment the process group is up."""

    how = HOW_GLOO
    per_case = False

    def __init__(self, pids: list[int]) -> None:
        self.world = len(pids)
        held = [_connections(pid) for pid in pids]
        ends = {(s.getsockname(), s.getpeername()): (rank, s) for rank, socks in enumerate(held) for s in socks}
        # (rank, its end, the other rank's end): only connections with a rank at each end are the ranks' own
        self.links: list[tuple[int, socket.socket, socket.socket]] = []
        self._held = [s for socks in held for s in socks]
        for (local, peer), (rank, sock) in ends.items():
            other = ends.get((peer, local))
            if other is not None and other[0] != rank:
                self.links.append((rank, sock, other[1]))
        linked = {rank for rank, _, _ in self.links}
        if self.world > 1 and len(linked) < self.world:
            missing = ", ".join(str(r) for r in range(self.world) if r not in linked)
            raise TrafficUnavailable(f"the judge found no connection of rank {missing} to the other ranks")

    def read(self) -> list[Reading]:
        readings = [Reading() for _ in range(self.world)]
        try:
            for rank, mine, theirs in self.links:
                readings[rank].received += _bytes_received(mine)
                readings[rank].sent += _bytes_received(theirs)
        except OSError as exc:
            raise TrafficUnavailable(f"the judge could not read the ranks' connections ({exc})") from exc
        return readings

    def close(self) -> None:
        for sock in self._held:
            sock.close()
        self._held = []
        self.links = []


# -- NCCL: its own log of every operation ------------------------------------------------------------
@dataclass(frozen=True)
class NcclOperation:
    name: str  # "Send", "Recv", "AllReduce", ...
    count: int
    datatype: int
    peer: int  # the root of a collective; the other rank of a send or receive

    @property
    def bytes(self) -> int:
        return self.count * NCCL_TYPE_BYTES.get(self.datatype, 1)


def nccl_operations(text: str) -> list[NcclOperation]:
    """Every operation in NCCL's INFO log text (subsystem COLL), in order; other lines are passed over."""
    out = []
    for match in _NCCL_LINE.finditer(text):
        out.append(NcclOperation(match["op"], int(match["count"]), int(match["dtype"]), int(match["peer"])))
    return out


def nccl_reading(operations: list[NcclOperation]) -> Reading:
    reading = Reading()
    for op in operations:
        if op.name == "Send":
            reading.sent += op.bytes
        elif op.name == "Recv":
            reading.received += op.bytes
        else:
            reading.collectives.append(f"NCCL's {op.name} ({size_words(op.bytes)})")
    return reading


def nccl_collective_kernel(name: str) -> str | None:
    """'AllReduce' for a kernel NCCL launches for a built-in collective; None for its SendRecv kernel or any other."""
    match = _NCCL_KERNEL.match(name)
    if match is None or match["op"] == "SendRecv":
        return None
    return match["op"]


def nccl_log_path(folder: Path, rank: int) -> Path:
    return folder / f"nccl{rank}.log"


class NcclLogs:
    """Each rank's NCCL log file, in the launch's folder; read from its start every time (operations are counted)."""

    how = HOW_NCCL
    per_case = True

    def __init__(self, folder: Path, world: int) -> None:
        self.paths = [nccl_log_path(folder, rank) for rank in range(world)]

    def read(self) -> list[Reading]:
        out = []
        for path in self.paths:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                text = ""
            out.append(nccl_reading(nccl_operations(text)))
        return out

    def close(self) -> None:
        pass


# -- the verdict's words -----------------------------------------------------------------------------
def shortfall(floor: TrafficFloor, moved: list[Reading], how: str, runs: int = 1) -> str | None:
    """Words for the first rank (or the ranks together) that moved fewer bytes than the collective must, or that ran
    a built-in collective; None when every rank moved enough."""
    for rank, reading in enumerate(moved):
        if reading.collectives:
            return f"rank {rank}: {reading.collectives[0]} ran in your call ({how}): build it from sends and receives"
    for rank, reading in enumerate(moved):
        need_sent = floor.sent[rank] * runs
        need_received = floor.received[rank] * runs
        if reading.sent < need_sent or reading.received < need_received:
            return (
                f"rank {rank} moved too little for {floor.what}: sent {size_words(reading.sent)}, received "
                f"{size_words(reading.received)}, of {size_words(need_sent)} sent and {size_words(need_received)} "
                f"received required ({how}); the result did not come through your sends and receives"
            )
    total = sum(reading.sent for reading in moved)
    if total < floor.total * runs:
        return (
            f"the ranks together sent {size_words(total)}, and {floor.what} needs {size_words(floor.total * runs)} "
            f"at the least ({how}); the result did not come through your sends and receives"
        )
    return None


def traffic_words(floor: TrafficFloor, moved: list[Reading], how: str) -> str:
    """'traffic per rank: sent 1.5 MiB, received 1.5 MiB of 1.5 MiB required (...)', every rank the same, or each."""
    per_rank = [(r.sent, r.received) for r in moved]
    needs = list(zip(floor.sent, floor.received, strict=True))
    if len(set(per_rank)) == 1 and len(set(needs)) == 1:
        sent, received = per_rank[0]
        need = max(needs[0])
        parts = f"sent {size_words(sent)}, received {size_words(received)} of {size_words(need)} required"
    else:
        parts = "; ".join(
            f"rank {rank} sent {size_words(sent)}, received {size_words(received)} "
            f"of {size_words(need_sent)} and {size_words(need_received)} required"
            for rank, ((sent, received), (need_sent, need_received)) in enumerate(zip(per_rank, needs, strict=True))
        )
    return f"traffic per rank for {floor.what}: {parts}; {size_words(floor.total)} in all at the least ({how})"
