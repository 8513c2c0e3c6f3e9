"""Reduce-scatter (sum) as a pipelined ring, run once in every rank; see ring_allreduce.md beside this file.

The first half of an all-reduce's ring: n - 1 steps, each sending one part to
the next rank and adding the part received from the previous one into a
running sum, so each link carries (n-1)/n of the input and the last step's sum
lands in the rank's own part. Parts are cut into pieces kept in flight, and
two rings run at once in opposite directions (each over one half of every
part); the input is only read, the running sums live in a buffer of the call's
own.
"""

from collections import deque

import torch
import torch.distributed as dist

PIECE_BYTES = 64 * 2**20  # a piece in flight: each costs tens of microseconds before a byte moves
IN_FLIGHT = 2  # rounds posted ahead of the one being finished
TWO_RINGS_FROM_BYTES = 16 * 2**20  # with three ranks or more, from this size: two rings, one each way


def reduce_scatter(output: torch.Tensor, input: torch.Tensor) -> None:
    world = dist.get_world_size()
    rank = dist.get_rank()
    if world == 1:
        output.copy_(input)
        return
    sums = torch.empty_like(input)  # running sums of the parts on their way round
    parts = [(i, s, o) for i, s, o in zip(input.tensor_split(world), sums.tensor_split(world), _own(output, world))]
    two = world > 2 and input.numel() * input.element_size() >= TWO_RINGS_FROM_BYTES
    rings = []
    for half in range(2 if two else 1):
        cut = [tuple(_half(t, half) if two else t for t in part) for part in parts]
        rings.append(_Ring(cut, rank, world, 1 if half == 0 else -1))
    pieces = max(ring.pieces_needed() for ring in rings)  # the same on every rank: they must post matching ops
    for ring in rings:
        ring.cut(pieces)
    pending: deque = deque()
    for j in range((world - 1) * pieces):
        while pending and (pending[0][0] <= j - pieces or len(pending) > IN_FLIGHT):
            _finish(pending.popleft())
        ops: list = []
        adds: list = []
        for ring in rings:
            ring.post(j, ops, adds)
        works = dist.batch_isend_irecv(ops) if ops else []
        pending.append((j, works, adds))
    while pending:
        _finish(pending.popleft())


def _own(output: torch.Tensor, world: int) -> list:
    """Where each part's final sum goes: this rank's output for its own part, nowhere for the others."""
    rank = dist.get_rank()
    return [output if r == rank else None for r in range(world)]


def _half(tensor, half: int):
    return None if tensor is None else tensor.tensor_split(2)[half]


def _finish(entry) -> None:
    _, works, adds = entry
    for work in works:
        work.wait()  # only now may the received piece be read
    for mine, received, into in adds:
        torch.add(mine, received, out=into)


class _Ring:
    """Rank r sends to r + d and receives from r - d; at step s it sends part r - d(s+1) (its input at the first
    step, a running sum after) and receives part r - d(s+2), which the last step makes part r."""

    def __init__(self, parts: list, rank: int, world: int, direction: int) -> None:
        self.parts = parts  # per rank's part: (input, running sum, output or None)
        self.rank = rank
        self.world = world
        self.d = direction
        self.next = (rank + direction) % world
        self.prev = (rank - direction) % world
        self.pieces = 1
        self.buffers: list = []

    def pieces_needed(self) -> int:
        biggest = max(p[0].numel() for p in self.parts) * self.parts[0][0].element_size()
        return max(1, -(-biggest // PIECE_BYTES))

    def cut(self, pieces: int) -> None:
        self.pieces = pieces
        most = -(-max(p[0].numel() for p in self.parts) // pieces)
        self.buffers = [self.parts[0][0].new_empty(max(1, most)) for _ in range(IN_FLIGHT + 2)]

    def piece(self, tensor: torch.Tensor, p: int) -> torch.Tensor:
        return tensor.tensor_split(self.pieces)[p]

    def post(self, j: int, ops: list, adds: list) -> None:
        step, p = divmod(j, self.pieces)
        r, d, n = self.rank, self.d, self.world
        send_input, send_sum, _ = self.parts[(r - d * (step + 1)) % n]
        outgoing = self.piece(send_input if step == 0 else send_sum, p)
        mine, running, final = self.parts[(r - d * (step + 2)) % n]
        into = self.piece(final if step == n - 2 else running, p)
        received = self.buffers[j % len(self.buffers)][: into.numel()]
        if outgoing.numel():
            ops.append(dist.P2POp(dist.isend, outgoing, self.next))
        if into.numel():
            ops.append(dist.P2POp(dist.irecv, received, self.prev))
            adds.append((self.piece(mine, p), received, into))
