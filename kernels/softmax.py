"""Row-wise softmax of a float32 matrix, in Triton: out[i, :] = exp(x[i, :] - max) / sum.

This starter is correct and slow. It runs three kernels, and each one goes
back to device memory: the first reads x for the row maxima, the second reads
x again and writes exp(x - max) into `out`, the third reads `out` back and
writes it once more. That is five passes over the matrix where two would do
(read x once, write out once).

The judge calls `softmax(x, out)`: x is (rows, cols) float32 and contiguous,
`out` has the same shape. Everything about the launch (kernels, block size,
grid, num_warps) is up to you inside this file.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def row_max_kernel(x_ptr, max_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
        best = tl.maximum(best, x)
    tl.store(max_ptr + row, tl.max(best, axis=0))


@triton.jit
def exp_kernel(x_ptr, out_ptr, max_ptr, sum_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    row_max = tl.load(max_ptr + row)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
        e = tl.exp(x - row_max)
        tl.store(out_ptr + row * stride + cols, e, mask=mask)
        total += tl.where(mask, e, 0.0)
    tl.store(sum_ptr + row, tl.sum(total, axis=0))


@triton.jit
def divide_kernel(out_ptr, sum_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    total = tl.load(sum_ptr + row)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        e = tl.load(out_ptr + row * stride + cols, mask=mask)
        tl.store(out_ptr + row * stride + cols, e / total, mask=mask)


def softmax(x: torch.Tensor, out: torch.Tensor) -> None:
    rows, cols = x.shape
    row_max = torch.empty(rows, device=x.device, dtype=torch.float32)
    row_sum = torch.empty(rows, device=x.device, dtype=torch.float32)
    grid = (rows,)
    row_max_kernel[grid](x, row_max, cols, x.stride(0), BLOCK=BLOCK)
    exp_kernel[grid](x, out, row_max, row_sum, cols, x.stride(0), BLOCK=BLOCK)
    divide_kernel[grid](out, row_sum, cols, out.stride(0), BLOCK=BLOCK)
