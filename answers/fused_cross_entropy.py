"""Fused cross-entropy in Triton: two reads of the logits and one write of the gradient over them, nothing stored.

One program per row. The first pass streams the row once, keeping a running
maximum and a running sum of exponentials rescaled whenever the maximum grows
(the online log-sum-exp of Milakov and Gimelshein's online softmax), one
lane per column of the block, merged at the end. The second pass streams the
row again, computes each probability exp(x - lse) as it goes and writes the
gradient (p - onehot) / rows over the logits. The loss is lse - x[target].
No buffer the size of the logits is ever allocated; at a 128k vocabulary a
row is 256 KB in bfloat16, more than a multiprocessor holds, so the second
read comes from L2 only when the row is still there, mostly from memory.
"""

import torch
import triton
import triton.language as tl

BLOCK = 4096  # columns per step: 8 KB of bfloat16 a step, 16 values a thread at 8 warps


@triton.jit
def cross_entropy_row(x_ptr, targets_ptr, loss_ptr, vocab, inv_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    x_row = x_ptr + row * vocab
    m = tl.full([BLOCK], float("-inf"), tl.float32)  # per lane: the largest logit it has seen
    s = tl.zeros([BLOCK], tl.float32)  # per lane: Σ exp(x - m), rescaled when m grows
    for start in range(0, vocab, BLOCK):
        cols = start + offsets
        x = tl.load(x_row + cols, mask=cols < vocab, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # a lane that has seen only -inf padding keeps s = 0 (and must not compute -inf - -inf)
        s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    lse = row_max + tl.log(total)
    target = tl.load(targets_ptr + row)
    picked = tl.load(x_row + target).to(tl.float32)
    tl.store(loss_ptr + row, lse - picked)
    for start in range(0, vocab, BLOCK):
        cols = start + offsets
        mask = cols < vocab
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        g = (tl.exp(x - lse) - tl.where(cols == target, 1.0, 0.0)) * inv_rows
        tl.store(x_row + cols, g.to(x_ptr.dtype.element_ty), mask=mask)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor) -> None:
    rows, vocab = logits.shape
    block = min(BLOCK, triton.next_power_of_2(vocab))
    cross_entropy_row[(rows,)](logits, targets, loss, vocab, 1.0 / rows, BLOCK=block, num_warps=8)
