"""Harness for the `ring-allreduce` card: an all-reduce (sum) built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def all_reduce(tensor: torch.Tensor) -> None
`tensor` is this rank's 1-D contiguous tensor (float32 or bfloat16, on this
rank's GPU, or on the CPU under gloo); when the call returns on every rank, each
holds the sum over all ranks, in place, as torch.distributed.all_reduce leaves
it. The process group is initialised; torch.distributed's point-to-point
operations (send, recv, isend, irecv, batch_isend_irecv with P2POp) are yours,
its collectives are not.

Runs in the rank processes (drill/judge/rank.py) with drill/judge/rank_kit.py as
`kit`; the judge process itself calls only cases, timing_cases, bytes_moved and
bus_factor.
"""

from drill.kernel import collective_sizes as sizes

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


def reference(inputs, kit):
    """The exact sum over the ranks (float64, by torch's own all-reduce) and the sum of magnitudes for the tolerance."""
    return kit.exact_sum(inputs["fresh"])


def launcher(program, inputs, kit):
    x, fresh = inputs["x"], inputs["fresh"]
    return kit.Launch(run=lambda: program.function(x), result=lambda: x, prepare=lambda: x.copy_(fresh))


def compare(result, ref, inputs, kit):
    return kit.within(result, ref["sum"], ref["tolerance"], label="tensor")


def baseline(inputs, kit):
    x = inputs["x"]
    return lambda: kit.builtin.all_reduce(x)
