"""Harness for the `reduce-scatter` card: each rank ends with its part of the sum, built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def reduce_scatter(output: torch.Tensor, input: torch.Tensor) -> None
`input` is this rank's 1-D contiguous tensor of L elements (float32 or
bfloat16), the same length on every rank; it is read-only. `output` is rank r's
part of it, as torch.tensor_split(input, world)[r] cuts it (the first L % world
parts one element longer): fill it with the sum over the ranks of that part of
their inputs, as torch.distributed.reduce_scatter_tensor does for equal parts.

make_inputs runs in each rank (drill/judge/collective/rank_process.py, with drill/judge/collective/kit.py
as `kit`), drawing its inputs from a seed only that rank is given, and again in
the judge for every rank; reference and compare run only in the judge
(drill/judge/collective/check.py), so no rank ever holds the expected sum.
"""

from drill.kernel_shared import collective_sizes as sizes

LANGUAGE = "collective"
ENTRY = ("reduce_scatter",)


def cases(world, gpu):
    return sizes.cases(world, gpu)


def timing_cases(world):
    """The input's size, cut to a multiple of the ranks: NCCL's reduce_scatter_tensor needs equal parts."""
    return sizes.timing_cases(world, equal_parts=True)


def bytes_moved(case):
    """S of nccl-tests: the bytes of the whole array (recvcount × n × element size)."""
    return sizes.bytes_moved(case)


def bus_factor(world):
    """busbw = algbw × (n-1)/n for a reduce-scatter (nccl-tests, doc/PERFORMANCE.md)."""
    return (world - 1) / world


def make_inputs(case, kit):
    dtype = kit.dtype(case["dtype"])
    x = kit.randn(case["numel"], dtype)
    start, length = kit.shards(case["numel"])[kit.rank]
    return {"x": x, "fresh": x.clone(), "out": kit.output(length, dtype), "start": start, "length": length}


def reference(everyone, kit):
    """In the judge: each rank's part of the exact sum over the ranks (float64) and its tolerance."""
    whole = kit.exact_sum([inputs["fresh"] for inputs in everyone])
    parts = []
    for start, length in kit.shards(whole["expected"].numel()):
        part = slice(start, start + length)
        parts.append({"expected": whole["expected"][part], "tolerance": whole["tolerance"][part]})
    return parts


def launcher(program, inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return kit.Launch(run=lambda: program.function(out, x), result=lambda: out)


def compare(result, ref, inputs, kit):
    return kit.within(result, ref["expected"], ref["tolerance"], label="output")


def read_only(inputs, kit):
    """In the rank, after each run: the input is the learner's to read, not to write."""
    return kit.unchanged(inputs["x"], inputs["fresh"], "input")


def traffic_floor(case, world):
    """Each rank sends every element outside its part at the least and receives every element of its part."""
    return sizes.reduce_scatter_floor(case, world)


def baseline(inputs, kit):
    """NCCL's own reduce-scatter, timed in the ranks before the learner's file is read."""
    x, out = inputs["x"], inputs["out"]
    return lambda: kit.builtin.reduce_scatter_tensor(out, x)
