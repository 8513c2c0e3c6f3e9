"""Harness for the `all-gather` card: every rank ends with every rank's part, built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def all_gather(output: torch.Tensor, input: torch.Tensor) -> None
`output` is a 1-D contiguous tensor of L elements (float32 or bfloat16), the
same on every rank; `input` is this rank's part of it, as
torch.tensor_split(output, world)[r] cuts it (the first L % world parts one
element longer), and is read-only. Fill `output` with every rank's part in rank
order, as torch.distributed.all_gather_into_tensor does for equal parts.

make_inputs runs in each rank (drill/judge/collective/rank_process.py, with drill/judge/collective/kit.py
as `kit`), drawing its part from a seed only that rank is given, and again in
the judge for every rank; reference and compare run only in the judge
(drill/judge/collective/check.py), so no rank ever holds the other parts.
"""

from drill.kernel_shared import collective_sizes as sizes

LANGUAGE = "collective"
ENTRY = ("all_gather",)


def cases(world, gpu):
    return sizes.cases(world, gpu)


def timing_cases(world):
    """The output's size, cut to a multiple of the ranks: NCCL's all_gather_into_tensor needs equal parts."""
    return sizes.timing_cases(world, equal_parts=True)


def bytes_moved(case):
    """S of nccl-tests: the bytes of the whole array (sendcount × n × element size)."""
    return sizes.bytes_moved(case)


def bus_factor(world):
    """busbw = algbw × (n-1)/n for an all-gather (nccl-tests, doc/PERFORMANCE.md)."""
    return (world - 1) / world


def make_inputs(case, kit):
    dtype = kit.dtype(case["dtype"])
    _, length = kit.shards(case["numel"])[kit.rank]
    x = kit.randn(length, dtype)
    return {"x": x, "fresh": x.clone(), "out": kit.output(case["numel"], dtype), "numel": case["numel"]}


def reference(everyone, kit):
    """In the judge: every rank's part in rank order (exact: nothing is added), the same for every rank."""
    torch = kit.torch
    whole = torch.cat([inputs["fresh"].double() for inputs in everyone])
    return [{"expected": whole, "tolerance": torch.zeros_like(whole)}] * kit.world


def launcher(program, inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return kit.Launch(run=lambda: program.function(out, x), result=lambda: out)


def compare(result, ref, inputs, kit):
    return kit.within(result, ref["expected"], ref["tolerance"], label="output")


def read_only(inputs, kit):
    """In the rank, after each run: the input is the learner's to read, not to write."""
    return kit.unchanged(inputs["x"], inputs["fresh"], "input")


def traffic_floor(case, world):
    """Each rank sends its part at the least and receives every other part."""
    return sizes.all_gather_floor(case, world)


def baseline(inputs, kit):
    """NCCL's own all-gather, timed in the ranks before the learner's file is read."""
    x, out = inputs["x"], inputs["out"]
    return lambda: kit.builtin.all_gather_into_tensor(out, x)
