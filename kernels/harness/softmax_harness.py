"""Harness for the `softmax` card: row-wise softmax of a float32 matrix in Triton.

Contract with the learner's file:
    def softmax(x: torch.Tensor, out: torch.Tensor) -> None
x is (rows, cols), float32, contiguous; out has the same shape and is filled
in place. The function chooses its own kernels, block sizes, grid and
num_warps. On a machine without a GPU the judge runs it under the Triton
interpreter on small shapes (tensors then live on the CPU).
"""

LANGUAGE = "triton"
ENTRY = ("softmax",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill", "copy")


def cases(kit):
    if kit.gpu:
        shapes = [(1, 1), (3, 33), (37, 1000), (129, 1537), (16, 5003), (5, 40000)]
    else:  # the interpreter runs each program in numpy: keep it small
        shapes = [(1, 1), (3, 33), (5, 130), (2, 1000), (2, 40000)]
    out = [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]
    # logits far from zero: exp overflows unless the row maximum is subtracted first
    out.append({"name": "7x777 large logits", "rows": 7, "cols": 777, "scale": 30.0, "shift": 200.0})
    return out


def timing_cases(kit):
    shapes = [(32768, 2048), (4096, 1024), (4096, 4096), (8192, 32768)]
    return [{"name": f"{r}x{c}", "rows": r, "cols": c} for r, c in shapes]


def bytes_moved(case):
    return 2 * 4 * case["rows"] * case["cols"]  # read x once, write out once


def bytes_written(case):
    return 4 * case["rows"] * case["cols"]


def make_inputs(case, kit):
    x = kit.randn(case["rows"], case["cols"], scale=case.get("scale", 1.0), shift=case.get("shift", 0.0))
    return {"x": x, "out": kit.output(case["rows"], case["cols"])}


def reference(inputs, kit):
    return kit.torch.softmax(inputs["x"].double(), dim=-1)


def launcher(program, inputs, kit):
    x, out = inputs["x"], inputs["out"]
    return kit.Launch(run=lambda: program.module.softmax(x, out), result=lambda: out)


def compare(result, ref, inputs, kit):
    return kit.allclose(result, ref, rtol=1e-4, atol=1e-6, label="out")


def baseline(inputs, kit):
    x = inputs["x"]
    return lambda: kit.torch.softmax(x, dim=-1)
