"""Harness for the `rmsnorm` card: RMSNorm over the last dimension, in Triton.

Contract with the learner's file:
    def rmsnorm(x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float) -> None
out[i, j] = x[i, j] / sqrt(mean_j(x[i, :]^2) + eps) * weight[j]
x and out are (rows, cols) float32 and contiguous; weight has `cols` elements.
The launch (kernels, block size, grid, num_warps) is up to the file.
"""

EPS = 1e-6
LANGUAGE = "triton"
ENTRY = ("rmsnorm",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill", "copy")


def cases(kit):
    if kit.gpu:
        shapes = [(1, 1), (3, 33), (37, 1000), (129, 1537), (16, 5003), (4, 40000)]
    else:
        shapes = [(1, 1), (3, 33), (5, 130), (2, 1000), (2, 9000)]
    out = [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]
    # tiny activations: eps is no longer negligible against the mean square
    out.append({"name": "9x300 tiny values", "rows": 9, "cols": 300, "scale": 1e-3})
    return out


def timing_cases(kit):
    shapes = [(16384, 4096), (65536, 1024), (4096, 16384)]
    return [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]


def bytes_moved(case):
    return 4 * (2 * case["rows"] * case["cols"] + case["cols"])  # x read, out written, weight read once


def bytes_written(case):
    return 4 * case["rows"] * case["cols"]


def make_inputs(case, kit):
    rows, cols = case["rows"], case["cols"]
    return {
        "x": kit.randn(rows, cols, scale=case.get("scale", 1.0)),
        "w": kit.randn(cols, scale=0.5, shift=1.0),
        "out": kit.output(rows, cols),
    }


def reference(inputs, kit):
    x, w = inputs["x"].double(), inputs["w"].double()
    return x * kit.torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * w


def launcher(program, inputs, kit):
    x, w, out = inputs["x"], inputs["w"], inputs["out"]
    return kit.Launch(run=lambda: program.module.rmsnorm(x, w, out, EPS), result=lambda: out)


def compare(result, ref, inputs, kit):
    return kit.allclose(result, ref, rtol=1e-4, atol=1e-5, label="out")


def baseline(inputs, kit):
    torch = kit.torch
    x, w = inputs["x"], inputs["w"]

    def eager():  # what a model written in plain PyTorch runs: several kernels, each a trip to memory
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * w

    return eager
