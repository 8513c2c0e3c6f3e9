"""Harness for the `attention` card: causal attention forward (FlashAttention) in Triton.

Contract with the learner's file:
    def attention(q, k, v, out, scale: float) -> None
q, k, v and out are (batch, heads, seq, head_dim) contiguous tensors of one
16-bit type (bfloat16 on a GPU); head_dim is 64 or 128. Row i of out is
softmax(scale · q_i · k_jᵀ over j ≤ i) · v: query i sees keys 0..i only.
out is filled in place. The sequence lengths checked are odd on purpose. On a
machine without a GPU the judge runs it under the Triton interpreter on small
float16 shapes.

The card is compute-bound: 4·head_dim floating-point operations per
(query, key) pair that the causal mask keeps, seq·(seq+1)/2 pairs per head.
"""

import math

LANGUAGE = "triton"
ENTRY = ("attention",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill", "copy")
BOUND = "compute"


def _case(b, h, s, d, dtype, **extra):
    name = f"b{b} h{h} s{s} d{d}" + (f" {extra.pop('label')}" if "label" in extra else "")
    return {"name": name, "b": b, "h": h, "s": s, "d": d, "dtype": dtype, **extra}


def cases(kit):
    if kit.gpu:
        out = [
            _case(1, 1, 1, 64, "bfloat16"),
            _case(1, 2, 17, 64, "bfloat16"),
            _case(2, 3, 129, 128, "bfloat16"),
            _case(1, 2, 1000, 64, "bfloat16"),
            _case(1, 1, 1023, 128, "bfloat16"),
            _case(1, 4, 257, 128, "float16"),
        ]
        big = _case(1, 2, 300, 64, "bfloat16", label="large logits", q_scale=60.0)
    else:  # the interpreter runs every program in numpy, and has no bfloat16
        out = [_case(1, 1, 1, 64, "float16"), _case(1, 2, 17, 64, "float16"), _case(1, 1, 70, 64, "float16")]
        out.append(_case(1, 1, 33, 128, "float16"))
        big = _case(1, 1, 40, 64, "float16", label="large logits", q_scale=60.0)
    # scores of several hundred: exp overflows float32 unless each row's running maximum is subtracted first
    out.append(big)
    return out


def timing_cases(kit):
    return [_case(2, 16, 4096, 128, "bfloat16"), _case(2, 32, 4096, 64, "bfloat16")]


def flops(case):
    pairs = case["s"] * (case["s"] + 1) // 2
    return 4 * case["b"] * case["h"] * pairs * case["d"]


def bytes_moved(case):
    return 4 * 2 * case["b"] * case["h"] * case["s"] * case["d"]  # q, k, v read once, out written once


def bytes_written(case):
    return 2 * case["b"] * case["h"] * case["s"] * case["d"]


def make_inputs(case, kit):
    shape = (case["b"], case["h"], case["s"], case["d"])
    dt = getattr(kit.torch, case["dtype"])
    return {
        "q": kit.randn(*shape, scale=case.get("q_scale", 1.0), dtype=dt),
        "k": kit.randn(*shape, dtype=dt),
        "v": kit.randn(*shape, dtype=dt),
        "out": kit.output(*shape, dtype=dt),
        "scale": 1.0 / math.sqrt(case["d"]),
    }


def reference(inputs, kit):
    torch = kit.torch
    q, k, v = (inputs[name].double() for name in ("q", "k", "v"))
    s = q.shape[-2]
    scores = (q @ k.transpose(-1, -2)) * inputs["scale"]
    future = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


def launcher(program, inputs, kit):
    q, k, v, out, scale = (inputs[name] for name in ("q", "k", "v", "out", "scale"))
    return kit.Launch(run=lambda: program.module.attention(q, k, v, out, scale), result=lambda: out)


def compare(result, ref, inputs, kit):
    # the probabilities are rounded to 16 bits before they weight v, and the output once more
    tol = 2e-2 if result.dtype == kit.torch.bfloat16 else 4e-3
    return kit.allclose(result, ref, rtol=tol, atol=tol, label="out")


def baseline(inputs, kit):
    sdpa = kit.torch.nn.functional.scaled_dot_product_attention
    q, k, v, scale = inputs["q"], inputs["k"], inputs["v"], inputs["scale"]
    return lambda: sdpa(q, k, v, is_causal=True, scale=scale)
