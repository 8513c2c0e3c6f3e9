"""Harness for the `ring-allreduce` card: an all-reduce (sum) built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def all_reduce(tensor: torch.Tensor) -> None
`tensor` is this rank's 1-D contiguous tensor (float32 or bfloat16, on this
rank's GPU, or on the CPU under gloo); when the call returns on every rank, each
holds the sum over all ranks, in place, as torch.distributed.all_reduce leaves
it. The process group is initialised; torch.distributed's point-to-point
operations (send, recv, isend, irecv, batch_isend_irecv with P2POp) are yours,
its collectives are not.

make_inputs runs in each rank (drill/judge/collective/rank_process.py, with drill/judge/collective/kit.py
as `kit`), drawing its inputs from a seed only that rank is given, and again in
the judge for every rank; reference and compare run only in the judge
(drill/judge/collective/check.py), so no rank ever holds the expected sum.
"""

from drill.kernel_shared import collective_sizes as sizes

LANGUAGE = "collective"
ENTRY = ("all_reduce",)


def cases(world, gpu):
    return sizes.cases(world, gpu)


def timing_cases(world):
    return sizes.timing_cases(world)


def bytes_moved(case):
    """S of nccl-tests: the bytes of the array being reduced."""
    return sizes.bytes_moved(case)


def bus_factor(world):
    """busbw = algbw × 2(n-1)/n for an all-reduce (nccl-tests, doc/PERFORMANCE.md)."""
    return 2 * (world - 1) / world


def make_inputs(case, kit):
    x = kit.randn(case["numel"], kit.dtype(case["dtype"]))
    return {"x": x, "fresh": x.clone()}


def reference(everyone, kit):
    """In the judge: the exact sum of every rank's input (float64) and its tolerance, the same for every rank."""
    total = kit.exact_sum([inputs["fresh"] for inputs in everyone])
    return [total] * kit.world


def launcher(program, inputs, kit):
    x, fresh = inputs["x"], inputs["fresh"]
    return kit.Launch(run=lambda: program.function(x), result=lambda: x, prepare=lambda: x.copy_(fresh))


def compare(result, ref, inputs, kit):
    return kit.within(result, ref["expected"], ref["tolerance"], label="tensor")


def traffic_floor(case, world):
    """Each rank sends and receives its whole tensor at the least; the ranks together 2(n-1) tensors."""
    return sizes.all_reduce_floor(case, world)


def baseline(inputs, kit):
    """NCCL's own all-reduce, timed in the ranks before the learner's file is read."""
    x = inputs["x"]
    return lambda: kit.builtin.all_reduce(x)
