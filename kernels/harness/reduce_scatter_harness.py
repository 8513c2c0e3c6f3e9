"""Harness for the `reduce-scatter` card: each rank ends with its part of the sum, built from point-to-point operations.

Contract with the learner's file (run once in every rank, one rank per GPU):
    def reduce_scatter(output: torch.Tensor, input: torch.Tensor) -> None
`input` is this rank's 1-D contiguous tensor of L elements (float32 or
bfloat16), the same length on every rank; it is read-only. `output` is rank r's
part of it, as torch.tensor_split(input, world)[r] cuts it (the first L % world
parts one element longer): fill it with the sum over the ranks of that part of
their inputs, as torch.distributed.reduce_scatter_tensor does for equal parts.

Runs in the rank processes (drill/judge/rank.py) with drill/judge/rank_kit.py as
`kit`; the judge process itself calls only cases, timing_cases, bytes_moved and
bus_factor.
"""

LANGUAGE = "collective"
ENTRY = ("reduce_scatter",)
MIB = 2**20


def cases(world, gpu):
    sizes = [("float32", 1), ("float32", 3), ("float32", 7), ("float32", 1000), ("float32", 65537)]
    sizes += [("bfloat16", 1), ("bfloat16", 1001), ("bfloat16", 65537)]
    if gpu:
        sizes += [("float32", 1000003), ("bfloat16", 1000003)]
    return [{"name": f"{dtype} n={n:,}", "dtype": dtype, "numel": n} for dtype, n in sizes]


def timing_cases(world):
    """The input's size, cut to a multiple of the ranks: NCCL's reduce_scatter_tensor needs equal parts."""
    out = []
    for mib, reps in ((256, 20), (16, 40), (1, 100)):
        numel = mib * MIB // 4 // world * world
        out.append({"name": f"{mib} MiB", "dtype": "float32", "numel": numel, "reps": reps, "warmup": 3})
    return out


def bytes_moved(case):
    """S of nccl-tests: the bytes of the whole array (recvcount × n × element size)."""
    return case["numel"] * (2 if case["dtype"] == "bfloat16" else 4)


def bus_factor(world):
    """busbw = algbw × (n-1)/n for a reduce-scatter (nccl-tests, doc/PERFORMANCE.md)."""
    return (world - 1) / world


def make_inputs(case, kit):
    dtype = kit.dtype(case["dtype"])
    x = kit.randn(case["numel"], dtype)
    start, length = kit.shards(case["numel"])[kit.rank]
    return {"x": x, "fresh": x.clone(), "out": kit.output(length, dtype), "start": start, "length": length}


def reference(inputs, kit):
    fresh = inputs["fresh"]
    total = fresh.double()
    kit.builtin.all_reduce(total)
    scale = fresh.double().abs()
    kit.builtin.all_reduce(scale)
    part = slice(inputs["start"], inputs["start"] + inputs["length"])
    return {"sum": total[part], "tolerance": kit.sum_tolerance(scale[part], fresh.dtype)}


def launcher(program, inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return kit.Launch(run=lambda: program.function(out, x), result=lambda: out)


def compare(result, ref, inputs, kit):
    changed = kit.unchanged(inputs["x"], inputs["fresh"], "input")
    if changed is not None:
        return changed
    return kit.within(result, ref["sum"], ref["tolerance"], label="output")


def baseline(inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return lambda: kit.builtin.reduce_scatter_tensor(out, x)
