"""FP8 block-scaled GEMM in Triton: FP8 tensor cores on 128-wide K steps, each step's product scaled as it is added.

Each program owns a BLOCK_M × BLOCK_N tile of C and walks K in steps of 128,
the scale block, so one step of A has one scale per row and one step of B one
scale per 128 columns of C. `tl.dot` takes the two FP8 slabs as they are
(both K-major, the layout Hopper's FP8 tensor cores require: b is (N, K), so
its slab is transposed by the compiler's choice of layout, never copied) and
returns the step's product in float32; the step's scales multiply it as it
is added to the float32 accumulator. Adding every 128 products in float32 on
the CUDA cores is also what keeps the sum exact enough: Hopper's FP8 tensor
cores keep only about 14 bits while they accumulate, and DeepSeek-V3 promotes
to float32 at exactly this interval.

Programs run in groups of GROUP_M tile-rows so that tiles running together
share A's rows and B's columns in L2; `num_stages` keeps the next slabs
loading while the current one is multiplied. Rows and columns past the edges
are wrapped back into the matrix (every load in bounds, unmasked); K's last
step is masked with zeros; the store is masked.
"""

import torch
import triton
import triton.language as tl

SCALE_BLOCK = 128  # the scales' block along K (and along N for b): fixed by the format
# measured on an H200 (bench/probe_gemm_cards.py): best of ten tiles at all three timed shapes, 5-25 % ahead of
# 128 x 128 and 64 x 256; more stages, or two scale blocks a step, were slower
TILES = {"BLOCK_M": 64, "BLOCK_N": 128, "GROUP_M": 8, "num_stages": 4, "num_warps": 4}
INTERPRETED = {"BLOCK_M": 16, "BLOCK_N": 32, "GROUP_M": 4}


@triton.jit
def fp8_block_matmul_kernel(
    a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, c_ptr, M, N, K, k_blocks,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr, SCALE_BLOCK: tl.constexpr,
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
    rk = tl.arange(0, SCALE_BLOCK)
    a_ptrs = a_ptr + rm[:, None].to(tl.int64) * K + rk[None, :]
    b_ptrs = b_ptr + rn[:, None].to(tl.int64) * K + rk[None, :]
    a_scale_ptrs = a_scale_ptr + rm * k_blocks
    b_scale_ptrs = b_scale_ptr + (rn // SCALE_BLOCK) * k_blocks

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, k_blocks):
        left = K - kb * SCALE_BLOCK
        a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[None, :] < left, other=0.0)
        a_s = tl.load(a_scale_ptrs + kb)
        b_s = tl.load(b_scale_ptrs + kb)
        # the step's product, exact in float32, scaled and added on the CUDA cores
        acc += tl.dot(a, tl.trans(b)) * a_s[:, None] * b_s[None, :]
        a_ptrs += SCALE_BLOCK
        b_ptrs += SCALE_BLOCK

    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + cm[:, None].to(tl.int64) * N + cn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


def fp8_block_matmul(
    a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor, c: torch.Tensor
) -> None:
    M, K = a.shape
    N = b.shape[0]
    k_blocks = triton.cdiv(K, SCALE_BLOCK)
    config = TILES if a.is_cuda else INTERPRETED  # the Triton interpreter on a CPU: one small tile

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    fp8_block_matmul_kernel[grid](a, b, a_scale, b_scale, c, M, N, K, k_blocks, SCALE_BLOCK=SCALE_BLOCK, **config)
