"""LayerNorm backward in Triton: x and dy read once, dx written once, the column sums in two stages.

Stage 1: each program owns a contiguous group of rows. For each row it loads x
and dy into registers, reduces g = dy · weight and g · x̂ along the row, writes
dx from the same registers, and adds dy · x̂ and dy into two column vectors it
keeps in registers for its whole group. At the end it stores them as one row
of a (programs, cols) scratch buffer: a few MB against the hundreds of MB of x,
dy and dx.
Stage 2: one program per strip of columns sums the scratch rows: dweight and
dbias. No atomics, so the sums come out the same on every run.
Rows longer than WHOLE_ROW_MAX stream in chunks; the program then keeps its
partial sums in its own row of the scratch buffer (no other program writes it).
"""

import functools

import torch
import triton
import triton.language as tl

WHOLE_ROW_MAX = 8192
STREAM_BLOCK = 2048
PROGRAMS_PER_SM = 4  # row groups per multiprocessor: enough waves to balance, few scratch rows to sum
SUM_STRIP = 64
SUM_ROWS = 32


@triton.jit
def rows_whole(
    dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, part_w_ptr, part_b_ptr,
    n_rows, n_cols, stride, rows_per_program, BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    acc_w = tl.zeros([BLOCK], tl.float32)
    acc_b = tl.zeros([BLOCK], tl.float32)
    first = pid.to(tl.int64) * rows_per_program  # int64 rows: row * stride can pass 2³¹
    last = tl.minimum(first + rows_per_program, n_rows)
    for row in range(first, last):
        offset = row * stride
        x = tl.load(x_ptr + offset + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + offset + cols, mask=mask, other=0.0)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dy * w
        mean_g = tl.sum(g, axis=0) / n_cols
        mean_gx = tl.sum(g * xhat, axis=0) / n_cols
        tl.store(dx_ptr + offset + cols, rstd * (g - mean_g - xhat * mean_gx), mask=mask)
        acc_w += dy * xhat
        acc_b += dy
    tl.store(part_w_ptr + pid * n_cols + cols, acc_w, mask=mask)
    tl.store(part_b_ptr + pid * n_cols + cols, acc_b, mask=mask)


@triton.jit
def rows_streamed(
    dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, part_w_ptr, part_b_ptr,
    n_rows, n_cols, stride, rows_per_program, BLOCK: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    part = pid.to(tl.int64) * n_cols
    for start in range(0, n_cols, BLOCK):  # this program's scratch row starts at zero
        cols = start + offsets
        zero = tl.zeros([BLOCK], tl.float32)
        tl.store(part_w_ptr + part + cols, zero, mask=cols < n_cols)
        tl.store(part_b_ptr + part + cols, zero, mask=cols < n_cols)
    first = pid.to(tl.int64) * rows_per_program  # int64 rows: row * stride can pass 2³¹
    last = tl.minimum(first + rows_per_program, n_rows)
    for row in range(first, last):
        offset = row * stride
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        sum_g = tl.zeros([BLOCK], tl.float32)
        sum_gx = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + offsets
            mask = cols < n_cols
            x = tl.load(x_ptr + offset + cols, mask=mask, other=0.0)
            dy = tl.load(dy_ptr + offset + cols, mask=mask, other=0.0)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            g = dy * w
            sum_g += g
            sum_gx += g * tl.where(mask, (x - mean) * rstd, 0.0)
        mean_g = tl.sum(sum_g, axis=0) / n_cols
        mean_gx = tl.sum(sum_gx, axis=0) / n_cols
        for start in range(0, n_cols, BLOCK):  # the second read of the row mostly hits L2
            cols = start + offsets
            mask = cols < n_cols
            x = tl.load(x_ptr + offset + cols, mask=mask, other=0.0)
            dy = tl.load(dy_ptr + offset + cols, mask=mask, other=0.0)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0)
            xhat = (x - mean) * rstd
            tl.store(dx_ptr + offset + cols, rstd * (dy * w - mean_g - xhat * mean_gx), mask=mask)
            # the same thread wrote these scratch elements for the previous row: program order keeps them
            acc_w = tl.load(part_w_ptr + part + cols, mask=mask, other=0.0)
            acc_b = tl.load(part_b_ptr + part + cols, mask=mask, other=0.0)
            tl.store(part_w_ptr + part + cols, acc_w + dy * xhat, mask=mask)
            tl.store(part_b_ptr + part + cols, acc_b + dy, mask=mask)


@triton.jit
def sum_partials(part_w_ptr, part_b_ptr, dw_ptr, db_ptr, n_parts, n_cols, STRIP: tl.constexpr, ROWS: tl.constexpr):
    cols = tl.program_id(0) * STRIP + tl.arange(0, STRIP)
    rows = tl.arange(0, ROWS)
    acc_w = tl.zeros([ROWS, STRIP], tl.float32)
    acc_b = tl.zeros([ROWS, STRIP], tl.float32)
    for start in range(0, n_parts, ROWS):
        r = start + rows
        mask = (r[:, None] < n_parts) & (cols[None, :] < n_cols)
        where = r[:, None].to(tl.int64) * n_cols + cols[None, :]
        acc_w += tl.load(part_w_ptr + where, mask=mask, other=0.0)
        acc_b += tl.load(part_b_ptr + where, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc_w, axis=0), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(acc_b, axis=0), mask=cols < n_cols)


@functools.cache
def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4  # the Triton interpreter on a CPU


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
    rows_per_program = triton.cdiv(rows, PROGRAMS_PER_SM * sm_count(x.device))
    programs = triton.cdiv(rows, rows_per_program)
    part_w = torch.empty((programs, cols), device=x.device, dtype=torch.float32)
    part_b = torch.empty((programs, cols), device=x.device, dtype=torch.float32)
    args = (dy, x, weight, mean, rstd, dx, part_w, part_b, rows, cols, x.stride(0), rows_per_program)
    if cols <= WHOLE_ROW_MAX:
        block = triton.next_power_of_2(cols)
        # five row-long vectors live per program (x, dy, weight and the two sums): 16 floats each a thread at 4096
        warps = max(4, min(16, block // 512))
        rows_whole[(programs,)](*args, BLOCK=block, num_warps=warps)
    else:
        rows_streamed[(programs,)](*args, BLOCK=STREAM_BLOCK, num_warps=8)
    strips = triton.cdiv(cols, SUM_STRIP)
    sum_partials[(strips,)](part_w, part_b, dweight, dbias, programs, cols, STRIP=SUM_STRIP, ROWS=SUM_ROWS)
