"""Harness for the `reduce` card: the sum of a float32 vector.

Contract with the learner's file:
    extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
launched once per pass. Pass 1 reads x (n elements); each later pass reads the
previous pass's output, whose length is that pass's grid size. Every pass's
`out` is zeroed before it runs, so atomicAdd into out[0] works. The result is
out[0] of the last pass. The `// drill:` line sets block, grid and smem, with
one comma-separated entry per pass.
"""

import math

from drill.kernel_shared.launch import block_dims, grid_size, smem_bytes

LANGUAGE = "cuda"
ENTRY = ("reduce_sum",)
LAUNCH_KEYS = ("block", "grid", "smem")
ALLOWED = ()  # the launches are the file's kernels and nothing else (drill.judge.evidence.Allowance)
MAX_PASSES = 4


def cases(kit):
    sizes = [{"name": f"n={n:,}", "n": n} for n in (1, 31, 1025, 1_000_003)]
    # whole numbers: every partial sum is exact in float32, so any order must give the exact total
    return sizes + [{"name": "n=1,000,003 whole numbers", "n": 1_000_003, "whole": True}]


def timing_cases(kit):
    return [{"name": "n=2^28", "n": 1 << 28}]


def bytes_moved(case):
    return 4 * case["n"]  # each element read once; the scalar written is negligible


def bytes_written(case):
    return 0


def make_inputs(case, kit):
    whole = bool(case.get("whole"))
    x = kit.randn(case["n"], scale=8.0 if whole else 1.0, whole=whole)
    return {"x": x, "n": case["n"], "whole": bool(case.get("whole"))}


def reference(inputs, kit):
    return kit.sum64(inputs["x"])  # float64 all the way, no float64 copy of x


def launcher(program, inputs, kit):
    decl = program.decl
    blocks = decl.per_pass("block", "256")
    grids = decl.per_pass("grid", "auto")
    smems = decl.per_pass("smem", "0")
    passes = max(len(blocks), len(grids), len(smems))
    if passes > MAX_PASSES:
        from drill.kernel_shared.launch import LaunchError

        raise LaunchError(decl.line, f"{passes} passes; the card allows at most {MAX_PASSES}")
    plan = []
    n = inputs["n"]
    src = inputs["x"]
    for p in range(passes):
        block = block_dims(blocks[min(p, len(blocks) - 1)], decl.line)
        threads = math.prod(block)
        grid = grid_size(grids[min(p, len(grids) - 1)], n, threads, kit.sm_count, decl.line)
        smem = smem_bytes(smems[min(p, len(smems) - 1)], decl.line)
        out = kit.scratch(grid)
        plan.append((src, out, n, (grid, 1, 1), block, smem))
        src, n = out, grid
    outs = [step[1] for step in plan]

    def prepare():
        for out in outs:
            kit.zero(out)

    def run():
        for src, out, n, grid, block, smem in plan:
            program.launch("reduce_sum", grid, block, kit.args(src, out, kit.int32(n)), smem)

    return kit.Launch(run=run, result=lambda: outs[-1][0], prepare=prepare)


def compare(result, ref, inputs, kit):
    x = inputs["x"]
    n = inputs["n"]
    if inputs["whole"]:
        return kit.allclose(result, ref, rtol=0.0, atol=0.0, label="sum")
    # a float32 sum in any order stays well inside this bound; a dropped element or a stray read does not
    rms = kit.norm64(x) / math.sqrt(n) if n else 1.0
    atol = 4 * 2.0**-23 * max(n, 16) * rms
    return kit.allclose(result, ref, rtol=0.0, atol=atol, label="sum")


def baseline(inputs, kit):  # torch's way, timed once per GPU with torch's kit
    x = inputs["x"]
    return lambda: kit.torch.sum(x)
