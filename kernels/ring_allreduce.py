"""All-reduce (sum) from point-to-point operations, run once in every rank.

This starter is correct and slow: every rank sends its whole tensor to rank 0,
rank 0 adds them up one after the other and sends the sum back to each rank in
turn. Rank 0's link carries n-1 full tensors in each direction while every
other link idles, and nothing overlaps. A ring moves 2(n-1)/n of a tensor
through every rank's link in each direction, all links at once: cut the tensor
into n chunks, reduce-scatter them around the ring, then all-gather them back
(and keep several pieces in flight).

The judge calls `all_reduce(tensor)` in every rank at once: `tensor` is this
rank's 1-D contiguous tensor (float32 or bfloat16; any length, 1 included, not
always divisible by the number of ranks). When every rank has returned, each
must hold the element-wise sum over all ranks, in place.

Yours: dist.send, dist.recv, dist.isend, dist.irecv, dist.batch_isend_irecv
with dist.P2POp, dist.get_rank(), dist.get_world_size(), and any torch
arithmetic. Not yours: torch's collectives (dist.all_reduce, reduce_scatter_tensor,
all_gather_into_tensor, broadcast, ...): the judge refuses them. A receive's
buffer holds NaN until you call wait() on its handle. The judge counts what
each rank sends and receives over the ranks' own connections: every rank must
move its whole tensor's worth each way, and the ranks together 2(n-1) tensors;
a sum that came another way (files, shared memory, sockets of your own) is
refused with both figures.
"""

import torch
import torch.distributed as dist


def all_reduce(tensor: torch.Tensor) -> None:
    rank = dist.get_rank()
    world = dist.get_world_size()
    if rank == 0:
        incoming = torch.empty_like(tensor)
        for source in range(1, world):  # gather, one rank after another, and add
            dist.recv(incoming, src=source)
            tensor += incoming
        for target in range(1, world):  # broadcast the sum back, one rank after another
            dist.send(tensor, dst=target)
    else:
        dist.send(tensor, dst=0)
        dist.recv(tensor, src=0)
