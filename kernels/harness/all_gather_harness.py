"""Harness for the `all-gather` card: every rank ends with every rank's part, built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def all_gather(output: torch.Tensor, input: torch.Tensor) -> None
`output` is a 1-D contiguous tensor of L elements (float32 or bfloat16), the
same on every rank; `input` is this rank's part of it, as
torch.tensor_split(output, world)[r] cuts it (the first L % world parts one
element longer), and is read-only. Fill `output` with every rank's part in rank
order, as torch.distributed.all_gather_into_tensor does for equal parts.

Runs in the rank processes (drill/judge/rank.py) with drill/judge/rank_kit.py as
`kit`; the judge process itself calls only cases, timing_cases, bytes_moved and
bus_factor.
"""

from drill.kernel import collective_sizes as sizes

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


def reference(inputs, kit):
    """Every rank's part in rank order (exact: nothing is added), gathered by torch's own all-gather."""
    torch = kit.torch
    shards = kit.shards(inputs["numel"])
    widest = max(length for _, length in shards)
    mine = torch.zeros(widest, dtype=torch.float64, device=kit.device)
    mine[: inputs["fresh"].numel()] = inputs["fresh"].double()
    everyone = torch.empty(widest * kit.world, dtype=torch.float64, device=kit.device)
    kit.builtin.all_gather_into_tensor(everyone, mine)
    parts = [everyone[r * widest : r * widest + length] for r, (_, length) in enumerate(shards)]
    return torch.cat(parts)


def launcher(program, inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return kit.Launch(run=lambda: program.function(out, x), result=lambda: out)


def compare(result, ref, inputs, kit):
    changed = kit.unchanged(inputs["x"], inputs["fresh"], "input")
    if changed is not None:
        return changed
    return kit.exact(result, ref, label="output")


def baseline(inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return lambda: kit.builtin.all_gather_into_tensor(out, x)
