"""C = A @ B in Triton: tensor-core tiles, grouped launch order, pipelined loads, float32 accumulation.

Each program owns one BLOCK_M × BLOCK_N tile of C and walks K in steps of
BLOCK_K: it loads a BLOCK_M × BLOCK_K slab of A and a BLOCK_K × BLOCK_N slab
of B, multiplies them on the tensor cores (`tl.dot`) and adds into a float32
accumulator that stays in registers until the single store. `num_stages`
keeps the next slabs loading while the current one is multiplied.

Programs are numbered so that GROUP_M tile-rows are swept together: the
tiles running at the same time share rows of A and columns of B, which then
come from L2 instead of memory.

M and N: tile rows and columns past the edge are wrapped back into the
matrix (`% M`, `% N`) so every load is in bounds and unmasked; the store is
masked. K: the last step loads with a mask that puts zeros past K, so the
tail adds nothing instead of garbage.

Which tile is fastest depends on the shape and the GPU. The tiles here were
measured on an H100 and an H200 (bench/probe_tune.py --cards matmul), and each
shape class gets the winner, fixed: `triton.autotune` picks among close tiles
by timing each once, so its choice, and the figure, moved between processes.
A large product gets 128 x 256 tiles, K steps of 64, 3 stages, 8 warps. A
skinny M (decode: 64 rows or fewer) is memory-bound on B and gets 16 rows, 32
columns and steps of 256 along K, so many programs stream B at once (it beat
the other skinny tiles tried by 12 % or more at 16 x 4096 x 4096). Small
products use one modest tile. On another GPU, try a few with `triton.autotune`.
"""

import torch
import triton
import triton.language as tl

WIDE = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "num_stages": 3, "num_warps": 8}
SKINNY = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 256, "GROUP_M": 1, "num_stages": 4, "num_warps": 4}
SMALL = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_stages": 3, "num_warps": 4}
LARGE_FROM = 1 << 22  # B with at least this many elements (4096 x 1024) gets the large tiles


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # grouped order: GROUP_M tile-rows at a time, column by column within the group
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here

    rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    M, K = a.shape
    N = b.shape[1]
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    if not a.is_cuda:  # the Triton interpreter on a CPU: one small tile
        matmul_kernel[(triton.cdiv(M, 16) * triton.cdiv(N, 16),)](*args, BLOCK_M=16, BLOCK_N=16, BLOCK_K=32, GROUP_M=4)
        return

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    if N * K < LARGE_FROM:  # small: a modest tile
        matmul_kernel[grid](*args, **SMALL)
    elif M <= 64:  # skinny (decode): a tile that streams B
        matmul_kernel[grid](*args, **SKINNY)
    else:
        matmul_kernel[grid](*args, **WIDE)
