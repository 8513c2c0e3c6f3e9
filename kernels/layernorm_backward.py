"""LayerNorm backward in Triton: dx, dweight and dbias from dy and what the forward saved.

With x̂ = (x - mean) · rstd and g = dy · weight:
    dx[i, :]   = rstd[i] · (g - mean(g) - x̂ · mean(g · x̂))     (a reduction along each row)
    dweight[j] = Σ_i dy[i, j] · x̂[i, j]                         (a reduction down each column)
    dbias[j]   = Σ_i dy[i, j]

This starter is correct and slow. The row kernel is fine; the column kernel
reads x and dy a second time, and gives each program a strip of 64 columns to
sum over every row by itself: at 4096 columns that is 64 programs for the
whole GPU, each walking thousands of rows one after the other. Make the row
kernel produce the column sums too, and reduce them in two stages.

The judge calls `layernorm_backward(dy, x, weight, mean, rstd, dx, dweight, dbias)`:
x, dy, dx are (rows, cols) float32 contiguous; weight, dweight, dbias have
`cols` elements; mean and rstd have `rows`. Kernels, grids, block sizes and
scratch buffers are yours to choose in this file.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024
COLUMN_STRIP = 64


@triton.jit
def dx_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    sum_g = tl.zeros([BLOCK], tl.float32)
    sum_gx = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dy * w
        sum_g += g
        sum_gx += g * xhat
    mean_g = tl.sum(sum_g, axis=0) / n_cols
    mean_gx = tl.sum(sum_gx, axis=0) / n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + offsets
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        xhat = (x - mean) * rstd
        dx = rstd * (dy * w - mean_g - xhat * mean_gx)
        tl.store(dx_ptr + row * stride + cols, dx, mask=mask)


@triton.jit
def column_sums_kernel(dy_ptr, x_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr, n_rows, n_cols, stride, STRIP: tl.constexpr):
    cols = tl.program_id(0) * STRIP + tl.arange(0, STRIP)
    mask = cols < n_cols
    dw = tl.zeros([STRIP], tl.float32)
    db = tl.zeros([STRIP], tl.float32)
    for row in range(0, n_rows):
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
        dw += dy * (x - mean) * rstd
        db += dy
    tl.store(dw_ptr + cols, dw, mask=mask)
    tl.store(db_ptr + cols, db, mask=mask)


def layernorm_backward(
    dy: torch.Tensor,
    x: torch.Tensor,
    weight: torch.Tensor,
    mean: torch.Tensor,
    rstd: torch.Tensor,
    dx: torch.Tensor,
    dweight: torch.Tensor,
    dbias: torch.Tensor,
) -> None:
    rows, cols = x.shape
    dx_kernel[(rows,)](dy, x, weight, mean, rstd, dx, cols, x.stride(0), BLOCK=BLOCK)
    strips = triton.cdiv(cols, COLUMN_STRIP)
    column_sums_kernel[(strips,)](dy, x, mean, rstd, dweight, dbias, rows, cols, x.stride(0), STRIP=COLUMN_STRIP)
