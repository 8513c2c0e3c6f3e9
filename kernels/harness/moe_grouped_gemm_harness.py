"""Harness for the `moe-grouped-gemm-kernel` card: one GEMM per expert over tokens already sorted by expert, in Triton.

Contract with the learner's file:
    def grouped_matmul(x, w, offsets, out) -> None
x is (T, K): the routed rows, sorted by expert, contiguous; w is (E, N, K): each expert's weight, one row per
output feature (as a linear layer stores it), contiguous; offsets is (E,) int32 on the device, where each
expert's rows end (expert e owns rows offsets[e-1] .. offsets[e], expert 0 from row 0; offsets[E-1] = T, the
layout torch._grouped_mm takes). out is (T, N), filled in place: out[r] = x[r] @ w[e]ᵀ for the expert e that
owns row r. x, w and out are bfloat16 (float16 under the interpreter), accumulated in float32.

The group sizes are skewed as a router's are: a few experts take thousands of rows, many take tens, some none.
They are drawn from the case's own seed, so the baseline's time (kept per GPU) is for the same sizes as yours;
the values are fresh every run. The offsets stay on the device: reading them on the host is a copy and a wait
the card does not allow.

Compute-bound: scored in TFLOPS (2·T·N·K per launch) against this GPU's measured matmul ceiling.
"""

import math
import random

LANGUAGE = "triton"
ENTRY = ("grouped_matmul",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance)
ALLOWED = ("allocation", "views", "fill")
BOUND = "compute"
EMPTY_SHARE = 8  # one expert in this many gets no rows
ZIPF = 1.0  # the k-th most popular expert gets a share proportional to 1/k^ZIPF


def group_sizes(rows, experts, seed):
    """Rows per expert, skewed (Zipf over a shuffled order of the experts), one in EMPTY_SHARE of them empty.

    Pure Python and seeded, so a case names the same sizes in every process that draws them.
    """
    rng = random.Random(seed)
    order = list(range(experts))
    rng.shuffle(order)
    empty = set(order[: experts // EMPTY_SHARE]) if experts > 1 else set()
    used = [e for e in order if e not in empty]
    weight = {e: 1.0 / (rank + 1) ** ZIPF for rank, e in enumerate(used)}
    total = sum(weight.values())
    sizes = [math.floor(rows * weight.get(e, 0.0) / total) for e in range(experts)]
    for i in range(rows - sum(sizes)):  # the rows the floors left over, to the most popular experts
        sizes[used[i % len(used)]] += 1
    return sizes


def _case(experts, rows, k, n, seed, dtype, label=""):
    name = f"E{experts} T{rows} {k}->{n}" + (f" {label}" if label else "")
    return {"name": name, "experts": experts, "rows": rows, "k": k, "n": n, "seed": seed, "dtype": dtype}


def cases(kit):
    if kit.gpu:
        out = [
            _case(1, 1, 16, 16, 1, "bfloat16"),
            _case(4, 37, 40, 24, 2, "bfloat16"),
            _case(8, 1000, 136, 200, 3, "bfloat16"),
            _case(64, 3000, 520, 176, 4, "bfloat16"),  # many small groups, some empty, K with a tail
            _case(16, 2500, 256, 1000, 5, "bfloat16"),
        ]
    else:  # the interpreter runs every program in numpy, and has no bfloat16
        out = [
            _case(1, 1, 16, 16, 1, "float16"),
            _case(4, 37, 40, 24, 2, "float16"),
            _case(8, 90, 72, 40, 3, "float16"),
            _case(16, 60, 32, 48, 4, "float16"),  # more experts than a few rows each: many of one row or none
        ]
    return out


def timing_cases(kit):
    # fine-grained: DeepSeek-V2-Lite's experts (64 routed, 2048 -> 1408), 4,096 tokens × 6 routed each;
    # coarse: Mixtral 8x7B's (8 experts, 4096 -> 14,336), 4,096 tokens × 2
    return [_case(64, 24576, 2048, 1408, 42, "bfloat16"), _case(8, 8192, 4096, 14336, 43, "bfloat16")]


def sizes_of(case):
    return group_sizes(case["rows"], case["experts"], case["seed"])


def flops(case):
    return 2 * case["rows"] * case["k"] * case["n"]


def bytes_moved(case):
    used = sum(1 for s in sizes_of(case) if s)  # an expert with no rows need not have its weight read
    rows, k, n = case["rows"], case["k"], case["n"]
    return 2 * (rows * k + used * n * k + rows * n) + 4 * case["experts"]


def bytes_written(case):
    return 2 * case["rows"] * case["n"]


def make_inputs(case, kit):
    torch = kit.torch
    dt = getattr(torch, case["dtype"])
    experts, rows, k, n = case["experts"], case["rows"], case["k"], case["n"]
    ends = [sum(sizes_of(case)[: e + 1]) for e in range(experts)]
    offsets = torch.tensor(ends, dtype=torch.int32, device=kit.device)
    return {
        "x": kit.randn(rows, k, dtype=dt),
        "w": kit.randn(experts, n, k, dtype=dt),
        "offsets": offsets,
        "out": kit.output(rows, n, dtype=dt),
    }


def reference(inputs, kit):
    torch = kit.torch
    x = inputs["x"].double()
    w = inputs["w"].double()
    ref = torch.empty(x.shape[0], w.shape[1], dtype=torch.float64, device=x.device)
    start = 0
    for e, end in enumerate(inputs["offsets"].tolist()):
        ref[start:end] = x[start:end] @ w[e].T
        start = end
    return ref


def launcher(program, inputs, kit):
    x = inputs["x"]
    w = inputs["w"]
    offsets = inputs["offsets"]
    out = inputs["out"]
    return kit.Launch(run=lambda: program.module.grouped_matmul(x, w, offsets, out), result=lambda: out)


def compare(result, ref, inputs, kit):
    # rounding the float32 sum to 16 bits costs half a unit in the last place (2^-9 of it in bfloat16, 2^-11
    # in float16): allow four times that, plus the summation order
    k = inputs["x"].shape[1]
    rtol = 2.0**-7 if result.dtype == kit.torch.bfloat16 else 2.0**-9
    return kit.allclose(result, ref, rtol=rtol, atol=1e-3 * math.sqrt(k), label="out")


def baseline(inputs, kit):
    # torch's grouped GEMM (CUTLASS, one launch for every group; torch 2.8 on, sm90), the weights passed as
    # (E, K, N) views of the (E, N, K) storage, as torchtitan's MoE does. Without it, the loop.
    torch = kit.torch
    grouped = getattr(torch, "_grouped_mm", None)
    if grouped is None:
        return loop_baseline(inputs, kit)
    x = inputs["x"]
    w_t = inputs["w"].transpose(-2, -1)
    offsets = inputs["offsets"]
    return lambda: grouped(x, w_t, offs=offsets)


def loop_baseline(inputs, kit):
    """What an MoE layer written in plain PyTorch does: one torch.matmul per expert, over its slice of rows
    (the slice bounds read on the host before the timing, as an implementation that keeps them there would)."""
    torch = kit.torch
    x = inputs["x"]
    w = inputs["w"]
    out = torch.empty(x.shape[0], w.shape[1], dtype=x.dtype, device=x.device)
    ends = inputs["offsets"].tolist()
    bounds = [(e, start, end) for e, (start, end) in enumerate(zip([0] + ends[:-1], ends)) if end > start]

    def loop():
        for e, start, end in bounds:
            torch.matmul(x[start:end], w[e].T, out=out[start:end])
        return out

    return loop
