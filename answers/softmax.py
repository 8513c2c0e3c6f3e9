"""Row-wise softmax in Triton with one read of x and one write of out.

Rows up to WHOLE_ROW_MAX columns: one program per row holds the whole row in
registers, so max, exp, sum and divide all happen on-chip between a single
load and a single store. Longer rows do not fit in registers; for them one
program streams its row twice: the first sweep keeps a running maximum and a
running sum rescaled whenever the maximum grows (the online-softmax recurrence),
the second sweep writes exp(x - max) / sum. The second read usually comes back
from L2, because each row in flight is only a few hundred KB.
"""

import torch
import triton
import triton.language as tl

WHOLE_ROW_MAX = 32768
STREAM_BLOCK = 4096


@triton.jit
def softmax_whole_row(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def softmax_streamed(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    x_row = x_ptr + row * x_stride
    # a very negative finite start keeps exp(m_old - m_new) defined before any real value arrives
    m = tl.full([BLOCK], -3.0e38, tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    out_row = out_ptr + row * out_stride
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        tl.store(out_row + cols, tl.exp(x - row_max) / total, mask=mask)


def _warps(block: int) -> int:
    # about 32 floats of the row per thread, between 4 and 32 warps
    return max(4, min(32, block // 1024))


def softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    rows, cols = x.shape
    if cols <= WHOLE_ROW_MAX:
        block = triton.next_power_of_2(cols)
        softmax_whole_row[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block, num_warps=_warps(block))
    else:
        softmax_streamed[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=STREAM_BLOCK, num_warps=8)
