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

LANGUAGE = "collective"
ENTRY = ("all_gather",)
MIB = 2**20


def cases(world, gpu):
    sizes = [("float32", 1), ("float32", 3), ("float32", 7), ("float32", 1000), ("float32", 65537)]
    sizes += [("bfloat16", 1), ("bfloat16", 1001), ("bfloat16", 65537)]
    if gpu:
        sizes += [("float32", 1000003), ("bfloat16", 1000003)]
    return [{"name": f"{dtype} n={n:,}", "dtype": dtype, "numel": n} for dtype, n in sizes]


def timing_cases(world):
    """The output's size, cut to a multiple of the ranks: NCCL's all_gather_into_tensor needs equal parts."""
    out = []
    for mib, reps in ((256, 20), (16, 40), (1, 100)):
        numel = mib * MIB // 4 // world * world
        out.append({"name": f"{mib} MiB", "dtype": "float32", "numel": numel, "reps": reps, "warmup": 3})
    return out


def bytes_moved(case):
    """S of nccl-tests: the bytes of the whole array (sendcount × n × element size)."""
    return case["numel"] * (2 if case["dtype"] == "bfloat16" else 4)


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
