"""Causal attention forward in Triton, the FlashAttention way: the scores never leave the chip.

One program owns BLOCK_M queries of one (batch, head). It walks the keys in
blocks of BLOCK_N, and for each block computes the scores q·kᵀ on the tensor
cores, folds them into a running softmax and adds p·v into a float32
accumulator. The running softmax keeps, per query row, the largest score so
far (m) and the sum of exp(score − m) so far (l); when a new block raises m,
what was accumulated is rescaled by exp(m_old − m_new), so the result is exact
without ever holding a whole row of scores. At the end, out = acc / l.

Causality halves the work: the key blocks wholly before the query block are
used without any mask (the first loop), the blocks on the diagonal are
masked (the second loop), and the blocks wholly after it are never loaded.
exp is computed as exp2 with log2(e) folded into the scale, which is one
multiply cheaper per score. Sequence lengths that are no multiple of a block
are handled by masks on the diagonal loop only: every key before the query
block exists.
"""

import torch
import triton
import triton.language as tl


def _config(bm, bn, stages, warps):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=stages, num_warps=warps)


CONFIGS = {
    64: [_config(128, 64, 3, 4), _config(128, 128, 3, 8), _config(128, 64, 4, 8), _config(64, 64, 4, 4)],
    128: [_config(128, 64, 3, 8), _config(128, 128, 2, 8), _config(128, 64, 2, 4), _config(64, 64, 3, 4)],
}


TUNE_FROM = 2048  # sequences at least this long are worth trying block sizes for


def _configs_for(configs, named_args, **kwargs):
    dim = kwargs.get("HEAD_DIM", named_args.get("HEAD_DIM"))  # a constexpr given by name arrives in kwargs
    return CONFIGS.get(dim, configs)


@triton.jit
def _fold(q, k_ptrs, v_ptrs, m_i, l_i, acc, qk_scale, offs_m, offs_n, start_n, S, MASKED: tl.constexpr):
    """Fold one block of keys and values into the running softmax and the accumulator."""
    if MASKED:
        keys = start_n + offs_n
        k = tl.load(k_ptrs, mask=keys[None, :] < S, other=0.0)
        scores = tl.dot(q, k) * qk_scale
        keep = (offs_m[:, None] >= keys[None, :]) & (keys[None, :] < S)
        scores = tl.where(keep, scores, float("-inf"))
    else:
        k = tl.load(k_ptrs)
        scores = tl.dot(q, k) * qk_scale
    m_new = tl.maximum(m_i, tl.max(scores, 1))
    p = tl.math.exp2(scores - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    if MASKED:
        v = tl.load(v_ptrs, mask=(start_n + offs_n)[:, None] < S, other=0.0)
    else:
        v = tl.load(v_ptrs)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return m_new, l_i, acc


@triton.jit
def attention_fwd(
    Q, K, V, Out, scale, S,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    base = head * S * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    k_ptrs = K + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None]  # kᵀ: (HEAD_DIM, BLOCK_N)
    v_ptrs = V + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    qk_scale = scale * 1.4426950408889634  # exp(x) = exp2(x · log2 e)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    below = start_m * BLOCK_M  # keys before the query block: all exist, none masked
    for start_n in range(0, below, BLOCK_N):
        m_i, l_i, acc = _fold(
            q, k_ptrs + start_n * HEAD_DIM, v_ptrs + start_n * HEAD_DIM,
            m_i, l_i, acc, qk_scale, offs_m, offs_n, start_n, S, MASKED=False,
        )  # fmt: skip
    for start_n in range(below, tl.minimum(below + BLOCK_M, S), BLOCK_N):
        m_i, l_i, acc = _fold(
            q, k_ptrs + start_n * HEAD_DIM, v_ptrs + start_n * HEAD_DIM,
            m_i, l_i, acc, qk_scale, offs_m, offs_n, start_n, S, MASKED=True,
        )  # fmt: skip
    out = acc / l_i[:, None]
    o_ptrs = Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=offs_m[:, None] < S)


attention_tuned = triton.autotune(
    configs=CONFIGS[64] + CONFIGS[128], key=["S", "HEAD_DIM"], prune_configs_by={"early_config_prune": _configs_for}
)(attention_fwd)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, scale: float) -> None:
    batch, heads, S, D = q.shape
    if not q.is_cuda:  # the Triton interpreter on a CPU: one small block size
        attention_fwd[(triton.cdiv(S, 32), batch * heads)](q, k, v, out, scale, S, HEAD_DIM=D, BLOCK_M=32, BLOCK_N=16)
        return

    def grid(meta):
        return (triton.cdiv(S, meta["BLOCK_M"]), batch * heads)

    if S < TUNE_FROM:  # short sequences: one sound block size, no time spent tuning
        attention_fwd[grid](q, k, v, out, scale, S, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=32, num_stages=2, num_warps=4)
    else:
        attention_tuned[grid](q, k, v, out, scale, S, HEAD_DIM=D)
