"""Harness for the `layernorm-backward` card: LayerNorm's backward pass (dx, dγ, dβ), in Triton.

Contract with the learner's file:
    def layernorm_backward(dy, x, weight, mean, rstd, dx, dweight, dbias) -> None
x, dy and dx are (rows, cols) float32 contiguous; weight, dweight and dbias have `cols` elements; mean and rstd
have `rows` elements: what the forward saved, y = (x - mean) · rstd · weight + bias. With x̂ = (x - mean) · rstd
and g = dy · weight, row by row:
    dx = rstd · (g - mean_j(g) - x̂ · mean_j(g · x̂))
and over all rows, column by column:
    dweight = Σ_rows dy · x̂        dbias = Σ_rows dy
The launch (kernels, grid, scratch buffers for partial sums) is up to the file.
"""

LANGUAGE = "triton"
ENTRY = ("layernorm_backward",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance):
# a scratch buffer for partial column sums, views of it, and zeroing it
ALLOWED = ("allocation", "views", "fill")


def cases(kit):
    if kit.gpu:
        shapes = [(1, 1), (3, 33), (37, 1000), (129, 1537), (2000, 257), (16, 5003), (301, 8192)]
    else:  # the interpreter runs every program in numpy: small shapes, but enough rows for partial sums
        shapes = [(1, 1), (3, 33), (5, 130), (300, 17), (2, 1000)]
    out = [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]
    # activations far from zero: x - mean must be taken before scaling, or x̂ loses its digits
    out.append({"name": "23x300 mean 10000", "rows": 23, "cols": 300, "shift": 1e4})
    return out


def timing_cases(kit):
    shapes = [(16384, 4096), (65536, 1024), (4096, 8192)]
    return [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]


def bytes_moved(case):
    rows = case["rows"]
    cols = case["cols"]
    # dy and x read, dx written; mean and rstd read; weight read, dweight and dbias written
    return 4 * (3 * rows * cols + 2 * rows + 3 * cols)


def bytes_written(case):
    return 4 * (case["rows"] * case["cols"] + 2 * case["cols"])


def make_inputs(case, kit):
    torch = kit.torch
    rows = case["rows"]
    cols = case["cols"]
    x = kit.randn(rows, cols, shift=case.get("shift", 0.0))
    # what the forward saved, in float32 as torch's LayerNorm saves them
    mean = kit.randn(rows)
    rstd = kit.randn(rows)
    mean.copy_(x.double().mean(dim=1).float())
    rstd.copy_(torch.rsqrt(x.double().var(dim=1, unbiased=False) + 1e-5).float())
    return {
        "dy": kit.randn(rows, cols),
        "x": x,
        "w": kit.randn(cols, scale=0.5, shift=1.0),
        "mean": mean,
        "rstd": rstd,
        "dx": kit.output(rows, cols),
        "dw": kit.output(cols),
        "db": kit.output(cols),
    }


def reference(inputs, kit):
    dy, x, w = inputs["dy"].double(), inputs["x"].double(), inputs["w"].double()
    mean, rstd = inputs["mean"].double()[:, None], inputs["rstd"].double()[:, None]
    xhat = (x - mean) * rstd
    g = dy * w
    dx = rstd * (g - g.mean(dim=1, keepdim=True) - xhat * (g * xhat).mean(dim=1, keepdim=True))
    return {"dx": dx, "dw": (dy * xhat).sum(dim=0), "db": dy.sum(dim=0)}


def launcher(program, inputs, kit):
    names = ("dy", "x", "w", "mean", "rstd", "dx", "dw", "db")
    args = [inputs[name] for name in names]
    return kit.Launch(
        run=lambda: program.module.layernorm_backward(*args),
        result=lambda: {"dx": inputs["dx"], "dw": inputs["dw"], "db": inputs["db"]},
    )


def compare(result, ref, inputs, kit):
    rows = inputs["x"].shape[0]
    # dx: float32 rounding of a few terms of size rstd·|dy·weight| each (dx itself can cancel to 0)
    g = (inputs["dy"].double() * inputs["w"].double()).abs()
    dx_atol = 1e-5 * float((inputs["rstd"].double()[:, None] * g).max())
    check = kit.allclose(result["dx"], ref["dx"], rtol=1e-4, atol=dx_atol, label="dx")
    if not check.ok:
        return check
    # dweight, dbias: sums over every row; float32 rounding grows with the number of terms added in sequence
    # (about sqrt(rows) for a sum in blocks, up to rows for one running sum): allow 2e-5 · sqrt(rows)
    sum_atol = 2e-5 * rows**0.5
    for name in ("dw", "db"):
        check = kit.allclose(result[name], ref[name], rtol=1e-4, atol=sum_atol, label=name)
        if not check.ok:
            return check
    return check


def baseline(inputs, kit):
    torch = kit.torch
    dy = inputs["dy"]
    x = inputs["x"]
    w = inputs["w"]
    mean, rstd = inputs["mean"][:, None], inputs["rstd"][:, None]
    bias = torch.zeros_like(w)
    cols = x.shape[1]

    def layernorm_backward():  # what autograd runs for nn.LayerNorm's backward: one ATen op, three gradients
        return torch.ops.aten.native_layer_norm_backward(dy, x, [cols], mean, rstd, w, bias, [True, True, True])

    return layernorm_backward
