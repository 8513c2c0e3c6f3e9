"""Harness for the `paged-decode-attention` card: one decode step of attention over a paged KV cache, in Triton.

Contract with the learner's file:
    def paged_decode_attention(q, k_cache, v_cache, block_table, seq_lens, out, scale: float) -> None
q and out are (batch, q_heads, head_dim); k_cache and v_cache are (pages, page_size, kv_heads, head_dim), all
contiguous and of one 16-bit type (bfloat16 on a GPU, float16 under the interpreter). Sequence b owns the pages
block_table[b, 0 .. ceil(seq_lens[b] / page_size) - 1] (int32, in that order; entries past them are -1), and its
token t sits at row t % page_size of page block_table[b, t // page_size]. Grouped-query attention: query head h
reads KV head h // (q_heads // kv_heads). out[b, h] = softmax(scale · q[b, h] · K_bᵀ) · V_b over the seq_lens[b]
tokens of sequence b. The pages of a sequence are scattered through the cache, and the last one is partly
filled: its rows past the sequence's end hold other values.

The card is memory-bound: every cached K and V row of every sequence must be read once per step.
"""

import math

LANGUAGE = "triton"
ENTRY = ("paged_decode_attention",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance):
# scratch buffers for partial results (a context split across programs), views, and zeroing them
ALLOWED = ("allocation", "views", "fill")


def _case(lens, kv_heads, group, d, page, dtype, **extra):
    label = extra.pop("label", "")
    shown = ",".join(str(n) for n in lens) if len(lens) <= 4 else f"{len(lens)} seqs, {sum(lens) // len(lens)} avg"
    name = f"b{len(lens)} kv{kv_heads}x{group} d{d} page{page} len {shown}" + (f" {label}" if label else "")
    return {"name": name, "lens": list(lens), "kv_heads": kv_heads, "group": group, "d": d, "page": page,
            "dtype": dtype, **extra}  # fmt: skip


def cases(kit):
    if kit.gpu:
        out = [
            _case([1], 1, 1, 128, 16, "bfloat16"),
            _case([1, 15, 16, 17], 8, 4, 128, 16, "bfloat16"),
            _case([1000, 3, 257], 2, 8, 64, 32, "bfloat16"),
            _case([4097, 100], 4, 1, 128, 16, "bfloat16"),
            _case([33, 70000], 1, 16, 128, 16, "bfloat16", label="one long context"),
            _case([129, 64], 2, 4, 64, 8, "float16"),
        ]
        big = _case([300, 45], 2, 4, 128, 16, "bfloat16", label="large logits", q_scale=60.0)
    else:  # the interpreter runs every program in numpy, and has no bfloat16
        out = [
            _case([1], 1, 1, 64, 16, "float16"),
            _case([17, 5], 2, 4, 64, 16, "float16"),
            _case([40, 1, 23], 1, 8, 32, 8, "float16"),
            _case([70], 2, 2, 64, 32, "float16"),
        ]
        big = _case([30, 9], 1, 4, 64, 16, "float16", label="large logits", q_scale=60.0)
    # scores of several hundred: exp overflows unless each running maximum is subtracted first
    out.append(big)
    return out


def timing_cases(kit):
    # a serving batch: 64 sequences of 2,048 to 6,062 tokens (3,978 on average), Llama-3-8B's heads
    lens = [2048 + (i * 2477) % 4096 for i in range(64)]
    return [_case(lens, 8, 4, 128, 16, "bfloat16"), _case(lens[:8], 8, 4, 128, 16, "bfloat16", label="small batch")]


def _pages(case):
    return [-(-n // case["page"]) for n in case["lens"]]


def bytes_moved(case):
    tokens = sum(case["lens"])
    batch, heads = len(case["lens"]), case["kv_heads"] * case["group"]
    kv = 2 * tokens * case["kv_heads"] * case["d"] * 2  # every cached K and V row read once
    q_out = 2 * batch * heads * case["d"] * 2
    table = 4 * (sum(_pages(case)) + batch)  # the pages used, and the lengths
    return kv + q_out + table


def bytes_written(case):
    return len(case["lens"]) * case["kv_heads"] * case["group"] * case["d"] * 2


def flops(case):
    return 4 * sum(case["lens"]) * case["kv_heads"] * case["group"] * case["d"]


def make_inputs(case, kit):
    torch = kit.torch
    dt = getattr(torch, case["dtype"])
    batch, kv_heads, d, page = len(case["lens"]), case["kv_heads"], case["d"], case["page"]
    heads = kv_heads * case["group"]
    pages = _pages(case)
    spare = max(2, sum(pages) // 8)  # pages no sequence owns, scattered among the owned ones
    total = sum(pages) + spare
    order = torch.randperm(total, generator=kit.generator, device=kit.device).to(torch.int32)
    table = torch.full((batch, max(pages)), -1, dtype=torch.int32, device=kit.device)
    start = 0
    for b, n in enumerate(pages):
        # in falling order: a kernel that takes a sequence's pages as one contiguous run is always caught
        table[b, :n] = order[start : start + n].sort(descending=True).values
        start += n
    return {
        "q": kit.randn(batch, heads, d, scale=case.get("q_scale", 1.0), dtype=dt),
        "k": kit.randn(total, page, kv_heads, d, dtype=dt),
        "v": kit.randn(total, page, kv_heads, d, dtype=dt),
        "table": table,
        "lens": torch.tensor(case["lens"], dtype=torch.int32, device=kit.device),
        "out": kit.output(batch, heads, d, dtype=dt),
        "scale": 1.0 / math.sqrt(d),
    }


def reference(inputs, kit):
    torch = kit.torch
    q, k, v, table = inputs["q"], inputs["k"], inputs["v"], inputs["table"]
    group = q.shape[1] // k.shape[2]
    out = []
    for b, n in enumerate(inputs["lens"].tolist()):
        pages = table[b, : -(-n // k.shape[1])].long()
        keys = k[pages].double().flatten(0, 1)[:n].repeat_interleave(group, dim=1)  # (n, q_heads, d)
        values = v[pages].double().flatten(0, 1)[:n].repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b].double(), keys) * inputs["scale"]
        out.append(torch.einsum("hn,nhd->hd", torch.softmax(scores, dim=-1), values))
    return torch.stack(out)


def launcher(program, inputs, kit):
    names = ("q", "k", "v", "table", "lens", "out", "scale")
    args = [inputs[name] for name in names]
    return kit.Launch(run=lambda: program.module.paged_decode_attention(*args), result=lambda: inputs["out"])


def compare(result, ref, inputs, kit):
    # the probabilities are rounded to 16 bits before they weight v (as in FlashAttention), and the output once more
    tol = 2e-2 if result.dtype == kit.torch.bfloat16 else 4e-3
    return kit.allclose(result, ref, rtol=tol, atol=tol, label="out")


def baseline(inputs, kit):
    torch = kit.torch
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q, k, v, table, lens, scale = (inputs[name] for name in ("q", "k", "v", "table", "lens", "scale"))
    batch, heads, d = q.shape
    page, kv_heads = k.shape[1], k.shape[2]
    length = table.shape[1] * page
    pages = table.clamp(min=0).long()
    keep = (torch.arange(length, device=q.device)[None, :] < lens[:, None].long())[:, None, None, :]

    def gather_then_sdpa():  # what a model without a paged kernel runs: copy the pages out, then attention
        keys = k[pages].view(batch, length, kv_heads, d).transpose(1, 2)
        values = v[pages].view(batch, length, kv_heads, d).transpose(1, 2)
        return sdpa(q[:, :, None, :], keys, values, attn_mask=keep, scale=scale, enable_gqa=True)

    return gather_then_sdpa
