"""All-gather as a pipelined ring, run once in every rank; see ring_allreduce.md beside this file.

The second half of an all-reduce's ring: the rank's own part goes into place,
then n - 1 steps each pass on the part received in the step before, straight
into its place in the output, so each link carries (n-1)/n of the output.
Parts are cut into a few large pieces kept in flight, and with three ranks or
more two rings run at once in opposite directions (each over one half of every part).
"""

from collections import deque

import torch
import torch.distributed as dist

PIECE_BYTES = 64 * 2**20  # a piece in flight: each costs tens of microseconds before a byte moves
IN_FLIGHT = 2  # rounds posted ahead of the one being finished
TWO_RINGS_FROM_BYTES = 16 * 2**20  # with three ranks or more, from this size: two rings, one each way


def all_gather(output: torch.Tensor, input: torch.Tensor) -> None:
    world = dist.get_world_size()
    rank = dist.get_rank()
    parts = list(output.tensor_split(world))
    parts[rank].copy_(input)
    if world == 1:
        return
    two = world > 2 and output.numel() * output.element_size() >= TWO_RINGS_FROM_BYTES
    rings = []
    for half in range(2 if two else 1):
        cut = [part.tensor_split(2)[half] if two else part for part in parts]
        rings.append(_Ring(cut, rank, world, 1 if half == 0 else -1))
    pieces = max(ring.pieces_needed() for ring in rings)  # the same on every rank: they must post matching ops
    for ring in rings:
        ring.pieces = pieces
    pending: deque = deque()
    for j in range((world - 1) * pieces):
        while pending and (pending[0][0] <= j - pieces or len(pending) > IN_FLIGHT):
            _finish(pending.popleft())
        ops: list = []
        for ring in rings:
            ring.post(j, ops)
        pending.append((j, dist.batch_isend_irecv(ops) if ops else []))
    while pending:
        _finish(pending.popleft())


def _finish(entry) -> None:
    for work in entry[1]:
        work.wait()  # the piece is in place only now, and only now may it be sent on


class _Ring:
    """Rank r sends to r + d and receives from r - d; at step s it sends part r - d·s and receives part r - d(s+1)."""

    def __init__(self, parts: list, rank: int, world: int, direction: int) -> None:
        self.parts = parts
        self.rank = rank
        self.world = world
        self.d = direction
        self.next = (rank + direction) % world
        self.prev = (rank - direction) % world
        self.pieces = 1

    def pieces_needed(self) -> int:
        biggest = max(p.numel() for p in self.parts) * self.parts[0].element_size()
        return max(1, -(-biggest // PIECE_BYTES))

    def piece(self, part: int, p: int) -> torch.Tensor:
        return self.parts[part % self.world].tensor_split(self.pieces)[p]

    def post(self, j: int, ops: list) -> None:
        step, p = divmod(j, self.pieces)
        r, d = self.rank, self.d
        outgoing = self.piece(r - d * step, p)
        target = self.piece(r - d * (step + 1), p)
        if outgoing.numel():
            ops.append(dist.P2POp(dist.isend, outgoing, self.next))
        if target.numel():
            ops.append(dist.P2POp(dist.irecv, target, self.prev))
