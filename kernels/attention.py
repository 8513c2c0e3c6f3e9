"""Causal attention forward in Triton.

The judge calls `attention(q, k, v, out, scale)`: q, k, v and out are
(batch, heads, seq, head_dim), contiguous, bfloat16 on a GPU (float16 under
the interpreter), head_dim 64 or 128. Row i of out is
softmax(scale · q_i · k_jᵀ for j ≤ i) · v. Fill out in place.

This starter is correct and slow. Each program takes 32 queries of one head
and walks ALL the keys in blocks of 32, masking the future ones: half of the
score blocks it computes are thrown away. It already keeps a running softmax
(a row maximum m and a sum l, rescaled when m grows), so the scores never go
to memory. Make it reach the speed of PyTorch's scaled_dot_product_attention.
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 32


@triton.jit
def attention_fwd(Q, K, V, Out, scale, S, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    base = head * S * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start_n in range(0, S, BLOCK_N):
        keys = start_n + offs_n
        k = tl.load(K + base + keys[None, :] * HEAD_DIM + offs_d[:, None], mask=keys[None, :] < S, other=0.0)
        scores = tl.dot(q, k) * scale
        keep = (offs_m[:, None] >= keys[None, :]) & (keys[None, :] < S)
        scores = tl.where(keep, scores, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(scores, 1))
        # a row with no key yet keeps m = -inf; use 0 there so exp(-inf - 0) = 0 instead of NaN
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.exp(scores - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * HEAD_DIM + offs_d[None, :], mask=keys[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(
        Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
        out.to(Out.dtype.element_ty),
        mask=offs_m[:, None] < S,
    )


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor, scale: float) -> None:
    batch, heads, S, D = q.shape
    grid = (triton.cdiv(S, BLOCK_M), batch * heads)
    attention_fwd[grid](q, k, v, out, scale, S, HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
