"""Harness for the `matmul` card: C = A @ B in Triton, 16-bit inputs, float32 accumulation.

Contract with the learner's file:
    def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None
a is (M, K), b is (K, N), c is (M, N), all contiguous and of one type
(bfloat16 or float16); c is filled in place. M, N and K are not multiples of
any block size in the checked cases. Tiles, grid order, num_warps and
num_stages are the file's to choose. On a machine without a GPU the judge
runs it under the Triton interpreter on small float16 shapes.

The card is compute-bound: its figure is TFLOPS (2·M·N·K floating-point
operations per launch) against this GPU's measured matmul ceiling.
"""

import math

LANGUAGE = "triton"
ENTRY = ("matmul",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill", "copy")
BOUND = "compute"


def cases(kit):
    if kit.gpu:
        shapes = [
            (1, 1, 1, "float16"),
            (17, 33, 65, "bfloat16"),
            (128, 128, 1000, "bfloat16"),  # K's tail: 1000 is no multiple of a power-of-two block
            (257, 129, 96, "float16"),
            (1000, 1037, 513, "bfloat16"),
            (16, 1000, 4097, "bfloat16"),  # decode-like: one small M, a long K with a tail of 1
            (2049, 31, 300, "float16"),
        ]
    else:  # the interpreter runs every program in numpy, and has no bfloat16
        shapes = [(1, 1, 1, "float16"), (17, 33, 65, "float16"), (40, 24, 100, "float16"), (16, 70, 130, "float16")]
    return [{"name": f"{m}x{n}x{k} {dt}", "m": m, "n": n, "k": k, "dtype": dt} for m, n, k, dt in shapes]


def timing_cases(kit):
    shapes = [(4096, 4096, 4096), (16, 4096, 4096)]
    return [{"name": f"{m}x{n}x{k} bf16", "m": m, "n": n, "k": k, "dtype": "bfloat16"} for m, n, k in shapes]


def flops(case):
    return 2 * case["m"] * case["n"] * case["k"]


def bytes_moved(case):
    m, n, k = case["m"], case["n"], case["k"]
    return 2 * (m * k + k * n + m * n)  # A and B read once, C written once


def bytes_written(case):
    return 2 * case["m"] * case["n"]


def make_inputs(case, kit):
    m, n, k, dt = case["m"], case["n"], case["k"], getattr(kit.torch, case["dtype"])
    a, b = kit.randn(m, k, dtype=dt), kit.randn(k, n, dtype=dt)
    for x in (a, b):
        # at least 0.5 from zero, random sign: a product near zero (1 x 1 x 1 drew one about once in
        # 200 runs) would pass a kernel that writes zeros
        x.copy_(x.sign() * (x.abs() + 0.5))
    return {"a": a, "b": b, "c": kit.output(m, n, dtype=dt)}


def reference(inputs, kit):
    return inputs["a"].double() @ inputs["b"].double()


def launcher(program, inputs, kit):
    a, b, c = inputs["a"], inputs["b"], inputs["c"]
    return kit.Launch(run=lambda: program.module.matmul(a, b, c), result=lambda: c)


def compare(result, ref, inputs, kit):
    # rounding the float32 sum to the output type costs half a unit in the last place of each element
    # (2^-9 of it in bfloat16, 2^-11 in float16): allow four times that, plus the summation order
    k = inputs["a"].shape[1]
    rtol = 2.0**-7 if result.dtype == kit.torch.bfloat16 else 2.0**-9
    return kit.allclose(result, ref, rtol=rtol, atol=1e-3 * math.sqrt(k), label="c")


def baseline(inputs, kit):
    torch = kit.torch
    a, b = inputs["a"], inputs["b"]
    c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    return lambda: torch.mm(a, b, out=c)
