"""Grouped GEMM for mixture-of-experts in Triton: one launch, a flat list of (expert, row-tile) work items.

Every program computes one BLOCK_M × BLOCK_N tile of out for one expert. The
schedule is worked out on the device, inside each program, from the offsets:
each expert needs ⌈rows / BLOCK_M⌉ row tiles; a prefix sum over the experts
(`tl.cumsum`, 64 of them fit one vector) numbers all the row tiles of all the
experts one after another, and a program finds which expert its tile belongs
to by counting the prefix sums at or below its number. An empty expert has no
tiles, so no program is spent on it; a large one has many, spread over the
whole GPU like any other tiles. The grid is sized for the most tiles any split
of T rows can need (⌈T / BLOCK_M⌉ + E); programs past the real count return
at once. Nothing is read back to the host.

Inside a tile it is an ordinary GEMM: K in steps of BLOCK_K with `tl.dot` into
a float32 accumulator, `num_stages` loads in flight, N's edge wrapped, K's tail
masked with zeros. The rows of a group's last, partial tile repeat its last
row (every load is in bounds and unmasked) and the store leaves them out, so
a tile never writes into the next expert's rows.

The programs are numbered tile-row by tile-row, all of a row's column tiles
together: the ones running at once share the same rows of x and one expert's
weight in L2.
"""

import torch
import triton
import triton.language as tl

# measured on an H200 (bench/probe_gemm_cards.py): best of nine tiles at both timed shapes; 128 x 128 was 20 %
# slower at 64 experts, 64-row tiles (less waste in a small group's last tile) 25 % slower
TILES = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_stages": 4, "num_warps": 8}
INTERPRETED = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}


@triton.jit
def grouped_tiles(
    x_ptr, w_ptr, offsets_ptr, out_ptr, N, K, E,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_E: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tile = pid // tiles_n
    pid_n = pid % tiles_n

    # the schedule: row tiles of every expert, numbered one expert after another
    e = tl.arange(0, BLOCK_E)
    ends = tl.load(offsets_ptr + e, mask=e < E, other=0)
    starts = tl.load(offsets_ptr + e - 1, mask=(e > 0) & (e < E), other=0)
    tiles = tl.where(e < E, tl.cdiv(ends - starts, BLOCK_M), 0)
    through = tl.cumsum(tiles, 0)  # row tiles of experts 0..e
    if tile >= tl.sum(tiles, 0):
        return
    expert = tl.sum((through <= tile).to(tl.int32), 0)
    mine = e == expert
    first_tile = tl.sum(tl.where(mine, through - tiles, 0), 0)
    start = tl.sum(tl.where(mine, starts, 0), 0)
    end = tl.sum(tl.where(mine, ends, 0), 0)

    rm = start + (tile - first_tile) * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.minimum(rm, end - 1).to(tl.int64)  # a partial tile repeats its last row; the store leaves them out
    rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rows[:, None] * K + rk[None, :]
    w_ptrs = w_ptr + expert.to(tl.int64) * N * K + rn[None, :].to(tl.int64) * K + rk[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=rk[None, :] < left, other=0.0)
        w = tl.load(w_ptrs, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    out_ptrs = out_ptr + rm[:, None].to(tl.int64) * N + cn[None, :]
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=(rm[:, None] < end) & (cn[None, :] < N))


def grouped_matmul(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor, out: torch.Tensor) -> None:
    experts, N, K = w.shape
    rows = x.shape[0]
    config = TILES if x.is_cuda else INTERPRETED  # the Triton interpreter on a CPU: one small tile
    most_tiles = triton.cdiv(rows, config["BLOCK_M"]) + experts
    grid = (most_tiles * triton.cdiv(N, config["BLOCK_N"]),)
    block_e = triton.next_power_of_2(experts)
    grouped_tiles[grid](x, w, offsets, out, N, K, experts, BLOCK_E=block_e, **config)
