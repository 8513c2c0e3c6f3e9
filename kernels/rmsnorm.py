"""RMSNorm in Triton: out[i, :] = x[i, :] / sqrt(mean(x[i, :]^2) + eps) * weight.

This starter is correct and does twice the memory traffic it needs: one
kernel reads every row to compute 1/rms and stores it, and a second kernel
reads x again (and 1/rms) to write the output. Fuse them.

The judge calls `rmsnorm(x, weight, out, eps)`: x and out are (rows, cols)
float32 and contiguous, weight has `cols` elements. Kernels, block size, grid
and num_warps are yours to choose in this file.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def inv_rms_kernel(x_ptr, inv_rms_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    mean_sq = tl.sum(acc, axis=0) / n_cols
    tl.store(inv_rms_ptr + row, 1.0 / tl.sqrt(mean_sq + eps))


@triton.jit
def scale_kernel(x_ptr, w_ptr, inv_rms_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    inv_rms = tl.load(inv_rms_ptr + row)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask)
        w = tl.load(w_ptr + cols, mask=mask)
        tl.store(out_ptr + row * stride + cols, x * inv_rms * w, mask=mask)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float) -> None:
    rows, cols = x.shape
    inv_rms = torch.empty(rows, device=x.device, dtype=torch.float32)
    inv_rms_kernel[(rows,)](x, inv_rms, cols, x.stride(0), eps, BLOCK=BLOCK)
    scale_kernel[(rows,)](x, weight, inv_rms, out, cols, x.stride(0), BLOCK=BLOCK)
