"""All-gather from point-to-point operations, run once in every rank.

This starter is correct and slow: every rank sends its part to rank 0, which
puts them together and sends the whole result to each rank in turn. Rank 0's
link carries n - 1 whole outputs while the others idle. A ring needs only
(n-1)/n of the output through every link: n - 1 steps, each passing on the
part received in the step before.

The judge calls `all_gather(output, input)` in every rank at once: `output` is
a 1-D contiguous tensor of L elements (float32 or bfloat16, the same L on every
rank); `input` is this rank's part, as `output.tensor_split(world)[r]` cuts it
(the first L % world parts are one element longer; read-only). Fill `output`
with every rank's part, in rank order.

Yours: dist.send, dist.recv, dist.isend, dist.irecv, dist.batch_isend_irecv
with dist.P2POp, and any torch arithmetic. Torch's collectives are refused. A
receive's buffer holds NaN until you call wait() on its handle. The judge counts
what each rank sends and receives over the ranks' own connections: each rank
must move at least its own part out and every other part in; a result that came another way (files, shared
memory, sockets of your own) is refused with both figures.
"""

import torch
import torch.distributed as dist


def all_gather(output: torch.Tensor, input: torch.Tensor) -> None:
    rank = dist.get_rank()
    world = dist.get_world_size()
    parts = output.tensor_split(world)
    if rank == 0:
        parts[0].copy_(input)
        for source in range(1, world):  # collect every part, one rank after another
            dist.recv(parts[source], src=source)
        for target in range(1, world):  # then send the whole output to each rank
            dist.send(output, dst=target)
    else:
        dist.send(input, dst=0)
        dist.recv(output, src=0)
