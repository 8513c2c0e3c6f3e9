"""Harness for the `fp8-block-gemm` card: C = A @ Bᵀ from FP8 (e4m3) operands with 128-wide block scales, in Triton.

Contract with the learner's file:
    def fp8_block_matmul(a, b, a_scale, b_scale, c) -> None
a is (M, K) and b is (N, K), both float8_e4m3fn and contiguous (b as a linear layer stores its weight: one row
per output feature). a_scale is (M, ⌈K/128⌉) float32: one scale per row for each 128-wide slice of K (1 × 128
tiles of the activations). b_scale is (⌈N/128⌉, ⌈K/128⌉) float32: one scale per 128 × 128 block of the weight.
c is (M, N) bfloat16 (float16 under the interpreter), filled in place with

    c[m, n] = Σ_kb a_scale[m, kb] · b_scale[n // 128, kb] · Σ_{k in kb} a[m, k] · b[n, k]

the scaling DeepSeek-V3 trains with. The scales differ from block to block by up to 2^12 (2^8 under the
interpreter), so a kernel that
applies one scale to the whole of K, or a block's scale to its neighbour, is wrong.

Scored in TFLOPS against this GPU's FP8 matmul ceiling (COMPUTE_CEILING: the fastest torch._scaled_mm the
judge measures), not the bfloat16 torch.matmul's, which an FP8 kernel passes by design (2× the tensor-core
rate) and above which a figure would be treated as impossible.
"""

import math

LANGUAGE = "triton"
ENTRY = ("fp8_block_matmul",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill")
BOUND = "compute"
COMPUTE_CEILING = "fp8_tflops"  # drill.judge.calibration.FP8_CEILING
BLOCK = 128  # the scale block: 1 × 128 of A, 128 × 128 of B
GUARD = 256  # elements past each operand, NaN
E4M3_MAX = 448.0  # the largest finite float8_e4m3fn
# block magnitudes drawn from 2^-spread .. 2^spread; under the interpreter the result is float16, whose range
# (65,504) a spread of 6 can exceed at K = 300
SPREAD = 6
INTERPRETED_SPREAD = 4


def _case(m, n, k, spread=SPREAD):
    return {"name": f"{m}x{n}x{k}", "m": m, "n": n, "k": k, "spread": spread}


def cases(kit):
    if kit.gpu:
        shapes = [(1, 1, 1), (17, 33, 65), (128, 128, 1000), (257, 129, 384), (1000, 1037, 513), (16, 1000, 4097)]
        shapes.append((2049, 300, 256))
    else:  # the interpreter runs every program in numpy: small shapes
        shapes = [(1, 1, 1), (17, 33, 65), (40, 130, 300), (5, 257, 200)]
    return [_case(m, n, k, SPREAD if kit.gpu else INTERPRETED_SPREAD) for m, n, k in shapes]


def timing_cases(kit):
    return [_case(4096, 4096, 4096), _case(8192, 7168, 2048), _case(128, 7168, 2048)]


def flops(case):
    return 2 * case["m"] * case["n"] * case["k"]


def blocks(n):
    return math.ceil(n / BLOCK)


def bytes_moved(case):
    m, n, k = case["m"], case["n"], case["k"]
    scales = 4 * (m * blocks(k) + blocks(n) * blocks(k))
    return m * k + n * k + scales + 2 * m * n  # one byte an operand element, two a result element


def bytes_written(case):
    return 2 * case["m"] * case["n"]


def _quantised(kit, rows, cols, row_block, spread):
    """FP8 values and their float32 scales: values drawn at a magnitude of their own for each block
    (`row_block` rows × 128 columns), each block scaled so its largest value is E4M3_MAX."""
    torch = kit.torch
    rb = math.ceil(rows / row_block)
    cb = blocks(cols)
    magnitude = torch.exp2(torch.randint(-spread, spread + 1, (rb, cb), generator=kit.generator, device=kit.device))
    per_element_magnitude = magnitude.repeat_interleave(row_block, 0)[:rows].repeat_interleave(BLOCK, 1)[:, :cols]
    x = kit.randn(rows, cols, guard=None) * per_element_magnitude
    padded = torch.zeros(rb * row_block, cb * BLOCK, device=kit.device)
    padded[:rows, :cols] = x.abs()
    amax = padded.view(rb, row_block, cb, BLOCK).amax(dim=(1, 3)).clamp_min(1e-12)
    scale = (amax / E4M3_MAX).float()
    per_element = scale.repeat_interleave(row_block, 0)[:rows].repeat_interleave(BLOCK, 1)[:, :cols]
    buf = torch.empty(rows * cols + GUARD, dtype=torch.float8_e4m3fn, device=kit.device)
    buf[rows * cols :] = float("nan")
    q = buf[: rows * cols].view(rows, cols)
    q.copy_((x / per_element).clamp(-E4M3_MAX, E4M3_MAX))
    scales = torch.empty(scale.numel() + GUARD, device=kit.device)
    scales[scale.numel() :] = float("nan")
    kept = scales[: scale.numel()].view(scale.shape)
    kept.copy_(scale)
    return q, kept


def make_inputs(case, kit):
    m, n, k = case["m"], case["n"], case["k"]
    a, a_scale = _quantised(kit, m, k, 1, case["spread"])
    b, b_scale = _quantised(kit, n, k, BLOCK, case["spread"])
    out = kit.torch.bfloat16 if kit.gpu else kit.torch.float16  # the interpreter has no bfloat16
    return {"a": a, "b": b, "a_scale": a_scale, "b_scale": b_scale, "c": kit.output(m, n, dtype=out)}


def dequantised(inputs, kit):
    """A and B in float64, each element times its block's scale: what the FP8 operands stand for."""
    a_scale = inputs["a_scale"].double().repeat_interleave(BLOCK, 1)
    b_scale = inputs["b_scale"].double().repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)
    a = inputs["a"].double()
    b = inputs["b"].double()
    m, k = a.shape
    n = b.shape[0]
    return a * a_scale[:m, :k], b * b_scale[:n, :k]


def reference(inputs, kit):
    a, b = dequantised(inputs, kit)
    # the size of the terms each output sums, |A| @ |B|ᵀ: the scale of the error an exact sum rounded in float32
    # and a float32 accumulator over 128 products can make, whatever the cancellation
    return {"c": a @ b.T, "terms": a.abs() @ b.abs().T}


def launcher(program, inputs, kit):
    a = inputs["a"]
    b = inputs["b"]
    a_scale = inputs["a_scale"]
    b_scale = inputs["b_scale"]
    c = inputs["c"]
    return kit.Launch(run=lambda: program.module.fp8_block_matmul(a, b, a_scale, b_scale, c), result=lambda: c)


def compare(result, ref, inputs, kit):
    # the bound: the result rounded once to 16 bits (2^-9 of it in bfloat16: allow 2^-8), plus 2^-11 of the
    # terms' size for the accumulation (Hopper's FP8 tensor cores keep about 14 bits inside one 128-wide block;
    # the block's sum is then scaled and added in float32). One scale for all of K, or a neighbour's, is off by
    # up to 2^12.
    torch = kit.torch
    got = result.double()
    want = ref["c"]
    bound = 2.0**-8 * want.abs() + 2.0**-11 * ref["terms"] + 1e-30
    excess = (got - want).abs() / bound
    bad = ~(excess <= 1.0)  # NaN never passes
    if bool(bad.any()):
        index = int(torch.nonzero(bad.flatten())[0, 0])
        m, n = divmod(index, result.shape[1])
        return kit.Check(
            False,
            f"c[{m}, {n}] = {float(got[m, n]):.6g}, expected {float(want[m, n]):.6g} (bound "
            f"{float(bound[m, n]):.3g}: 2^-8 of the value + 2^-11 of Σ|a·b|); {int(bad.sum())} element(s) out of bound",
        )
    return kit.Check(True, "")


def baseline(inputs, kit):
    # cuBLAS's FP8 GEMM with one scale per row of A and one per row of B (row-wise scaling), bf16 out: the
    # fastest scaled FP8 matmul torch has. It applies 1 scale a row where the card applies one a 128-block.
    torch = kit.torch
    a = inputs["a"]
    b = inputs["b"]
    scale_a = inputs["a_scale"].amax(dim=1, keepdim=True).float().contiguous()
    scale_b = inputs["b_scale"].amax(dim=1).repeat_interleave(BLOCK)[: b.shape[0]][None, :].float().contiguous()
    return lambda: torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
