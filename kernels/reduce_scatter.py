"""Reduce-scatter (sum) from point-to-point operations, run once in every rank.

This starter is correct and slow: every rank sends its whole input to rank 0,
rank 0 adds them up and sends each rank its part of the sum. Rank 0's link
carries n - 1 whole inputs in and n - 1 parts out while the others idle. A
ring needs only (n-1)/n of an input through every link: n - 1 steps, each
sending one part to the next rank and adding the part received from the
previous one.

The judge calls `reduce_scatter(output, input)` in every rank at once: `input`
is this rank's 1-D contiguous tensor of L elements (float32 or bfloat16, the
same L on every rank; read-only); `output` is rank r's part, as
`input.tensor_split(world)[r]` cuts it (the first L % world parts are one
element longer). Fill it with the sum over all ranks of that part.

Yours: dist.send, dist.recv, dist.isend, dist.irecv, dist.batch_isend_irecv
with dist.P2POp, and any torch arithmetic. Torch's collectives are refused. A
receive's buffer holds NaN until you call wait() on its handle. The judge counts
what each rank sends and receives over the ranks' own connections: each rank
must move at least every element outside its part out and every element of its part in; a result that came another way (files, shared
memory, sockets of your own) is refused with both figures.
"""

import torch
import torch.distributed as dist


def reduce_scatter(output: torch.Tensor, input: torch.Tensor) -> None:
    rank = dist.get_rank()
    world = dist.get_world_size()
    if rank == 0:
        total = input.clone()
        incoming = torch.empty_like(input)
        for source in range(1, world):  # gather everything, one rank after another, and add
            dist.recv(incoming, src=source)
            total += incoming
        parts = total.tensor_split(world)
        for target in range(1, world):  # then send each rank its part
            dist.send(parts[target].contiguous(), dst=target)
        output.copy_(parts[0])
    else:
        dist.send(input, dst=0)
        dist.recv(output, src=0)
