"""All-reduce (sum) as a pipelined ring, run once in every rank; the write-up beside this file says why.

The tensor is cut into one chunk per rank. A reduce-scatter walks the chunks
around the ring (n - 1 steps: send one chunk to the next rank, receive another
from the previous one and add it in), then an all-gather walks the finished
chunks around once more (n - 1 steps, no additions). Every rank sends and
receives at every step, so each link carries 2(n-1)/n of the tensor, the least
any all-reduce can.

What makes it fast:
- few, large operations: each send or receive costs tens of microseconds
  before a byte moves (the host's Python and torch, NCCL's launch and
  handshake), so a chunk is cut into pieces only as far as overlap pays: the
  pieces of PIECE_BYTES keep the additions of one piece under the transfer of
  the next;
- the plan of every step (its views, its P2POp lists, its receive buffers) is
  made once per tensor and reused by the following calls;
- with three ranks or more, two rings at once, one each way round over half
  of the tensor each, so every rank sends to both neighbours (NCCL opens
  several channels for the same reason); with two ranks one ring already uses
  both directions of the only link;
- on a GPU (GRAPHS), the whole sequence is captured once per tensor in a CUDA
  graph and replayed by the later calls: the host's cost per operation goes,
  which is most of the time of a small all-reduce (NCCL's operations may be
  captured; the graph reads and writes the same tensor every time).
"""

from collections import OrderedDict, deque

import torch
import torch.distributed as dist

PIECE_BYTES = 128 * 2**20  # the size a chunk is cut into; each piece is one send and one receive per step
IN_FLIGHT = 2  # rounds posted ahead of the one being finished
TWO_RINGS_FROM_BYTES = 16 * 2**20  # with three ranks or more, from this size: two rings, one each way
GRAPHS = True  # on a GPU, replay the sequence from a CUDA graph after the first call with a tensor
PLANS_KEPT = 4


def all_reduce(tensor: torch.Tensor) -> None:
    if dist.get_world_size() == 1 or tensor.numel() == 0:
        return
    plan = _plan_for(tensor)
    if not (GRAPHS and tensor.is_cuda):
        plan.run()
        return
    if plan.graph is None:
        plan.run()  # this call's result, eagerly; the communicators exist from now on
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            plan.run()  # recorded, not run
        plan.graph = graph
        return
    plan.graph.replay()


_plans: OrderedDict = OrderedDict()


def _plan_for(tensor: torch.Tensor) -> "_Plan":
    # the plan holds views of this tensor, which keeps its memory: no other tensor can come at this address
    key = (tensor.data_ptr(), tensor.numel(), tensor.dtype, tensor.device, dist.isend, dist.irecv)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _Plan(tensor.view(-1))
        while len(_plans) > PLANS_KEPT:
            _plans.popitem(last=False)
    _plans.move_to_end(key)
    return plan


class _Plan:
    """Every round of the ring for one tensor: the P2POps to post and the additions to make once received."""

    def __init__(self, flat: torch.Tensor) -> None:
        world = dist.get_world_size()
        rank = dist.get_rank()
        size = flat.numel() * flat.element_size()
        two = world > 2 and size >= TWO_RINGS_FROM_BYTES
        halves = flat.tensor_split(2) if two else (flat,)
        rings = [_Ring(h.tensor_split(world), rank, world, 1 if i == 0 else -1) for i, h in enumerate(halves)]
        # the same count on every rank: they must post matching operations
        self.pieces = max(ring.pieces_needed() for ring in rings)
        self.rounds = []
        for j in range(2 * (world - 1) * self.pieces):  # reduce-scatter steps, then all-gather steps
            ops: list = []
            adds: list = []
            for ring in rings:
                ring.post(j, self.pieces, ops, adds)
            self.rounds.append((ops, adds))
        self.graph = None

    def run(self) -> None:
        pending: deque = deque()
        for j, (ops, adds) in enumerate(self.rounds):
            # a round sends what the round one step (`pieces` rounds) before it received; so many in flight at most
            while pending and (pending[0][0] <= j - self.pieces or len(pending) > IN_FLIGHT):
                _finish(pending.popleft())
            pending.append((j, dist.batch_isend_irecv(ops) if ops else [], adds))
        while pending:
            _finish(pending.popleft())


def _finish(entry) -> None:
    _, works, adds = entry
    for work in works:
        work.wait()  # only now may the received piece be read
    for target, received in adds:
        target.add_(received)


class _Ring:
    """One ring over one chunk per rank: rank r sends to r + d and receives from r - d.

    Reduce-scatter step s: send chunk r - d(s+1), receive chunk r - d(s+2) and add it in; after n - 1 steps the
    rank holds chunk r summed over every rank. All-gather step s: send chunk r - d·s, receive chunk r - d(s+1).
    """

    def __init__(self, chunks: tuple, rank: int, world: int, direction: int) -> None:
        self.chunks = chunks
        self.rank = rank
        self.world = world
        self.d = direction
        self.next = (rank + direction) % world
        self.prev = (rank - direction) % world
        self.buffers: list = []
        self.split: dict = {}

    def pieces_needed(self) -> int:
        biggest = max(c.numel() for c in self.chunks) * self.chunks[0].element_size()
        return max(1, -(-biggest // PIECE_BYTES))

    def piece(self, chunk: int, p: int, pieces: int) -> torch.Tensor:
        index = chunk % self.world
        if index not in self.split:  # each chunk cut once, not once per piece
            self.split[index] = self.chunks[index].tensor_split(pieces)
        return self.split[index][p]

    def buffer(self, j: int, numel: int, pieces: int) -> torch.Tensor:
        """Receive buffer of round j: IN_FLIGHT + 2 of them in turn, so none is written while it is still read."""
        if not self.buffers:
            most = -(-max(c.numel() for c in self.chunks) // pieces)
            self.buffers = [self.chunks[0].new_empty(max(1, most)) for _ in range(IN_FLIGHT + 2)]
        return self.buffers[j % len(self.buffers)][:numel]

    def post(self, j: int, pieces: int, ops: list, adds: list) -> None:
        """Round j's send and receive (and, in the reduce-scatter, the add it needs once received)."""
        step, p = divmod(j, pieces)
        r, d, n = self.rank, self.d, self.world
        if step < n - 1:  # reduce-scatter
            outgoing = self.piece(r - d * (step + 1), p, pieces)
            target = self.piece(r - d * (step + 2), p, pieces)
            received = self.buffer(j, target.numel(), pieces)
            if target.numel():
                adds.append((target, received))
        else:  # all-gather: the summed chunks passed on, received straight into place
            step -= n - 1
            outgoing = self.piece(r - d * step, p, pieces)
            target = self.piece(r - d * (step + 1), p, pieces)
            received = target
        if outgoing.numel():
            ops.append(dist.P2POp(dist.isend, outgoing, self.next))
        if target.numel():
            ops.append(dist.P2POp(dist.irecv, received, self.prev))
