"""Harness for the `transpose` card: out = inᵀ for a float32 matrix.

Contract with the learner's file:
    extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
`in` is rows x cols and `out` is cols x rows, both row-major and contiguous.
The `// drill:` line sets block=XxY and tile=WxH: the grid is
ceil(cols / W) x ceil(rows / H) blocks, so each block owns one W x H tile of
`in`. smem=BYTES adds dynamic shared memory.
"""

import math

from drill.kernel_shared.launch import LaunchError, block_dims, parse_dims, smem_bytes

LANGUAGE = "cuda"
ENTRY = ("transpose",)
LAUNCH_KEYS = ("block", "tile", "smem")
ALLOWED = ()  # the launches are the file's kernels and nothing else (drill.judge.evidence.Allowance)


def cases(kit):
    # odd sizes for the edges; 132 x 260 has widths divisible by 4 but partial tiles (vector loads at an edge)
    shapes = [(1, 1), (33, 65), (1000, 1037), (2049, 31), (7, 3001), (132, 260)]
    return [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]


def timing_cases(kit):
    return [{"name": "16384x16384", "rows": 16384, "cols": 16384}]


def bytes_moved(case):
    return 2 * 4 * case["rows"] * case["cols"]  # read once, write once


def bytes_written(case):
    return 4 * case["rows"] * case["cols"]


def make_inputs(case, kit):
    rows, cols = case["rows"], case["cols"]
    return {"x": kit.randn(rows, cols), "out": kit.output(cols, rows), "rows": rows, "cols": cols}


def reference(inputs, kit):
    return kit.float64(inputs["x"]).T


def launcher(program, inputs, kit):
    decl = program.decl
    if "," in decl.get("block", "") or "," in decl.get("tile", ""):
        raise LaunchError(decl.line, "the transpose runs in one pass: give one block and one tile")
    block = block_dims(decl.get("block", "32x8"), decl.line)
    tile = parse_dims(decl.get("tile", "x".join(str(d) for d in block[:2])), decl.line, "tile")
    if len(tile) != 2:
        raise LaunchError(decl.line, f"tile={decl.get('tile', '')} must be WxH")
    smem = smem_bytes(decl.get("smem", "0"), decl.line)
    rows, cols = inputs["rows"], inputs["cols"]
    grid = (math.ceil(cols / tile[0]), math.ceil(rows / tile[1]), 1)
    if grid[1] > 65535:
        raise LaunchError(decl.line, f"tile height {tile[1]} gives {grid[1]} blocks in y; the GPU allows 65,535")
    args = kit.args(inputs["x"], inputs["out"], kit.int32(rows), kit.int32(cols))

    def run():
        program.launch("transpose", grid, block, args, smem)

    return kit.Launch(run=run, result=lambda: inputs["out"])


def compare(result, ref, inputs, kit):
    return kit.exact(result, ref, label="out")  # a transpose moves values: it must be exact


def baseline(inputs, kit):  # torch's way, timed once per GPU with torch's kit
    x = inputs["x"]
    return lambda: x.t().contiguous()
