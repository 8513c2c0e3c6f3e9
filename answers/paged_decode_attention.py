"""Paged decode attention in Triton: each K and V row read once per step, for all the query heads that share it.

Stage 1, one program per (sequence, KV head, split): the group's query heads
are loaded together (padded to 16 rows, the smallest `tl.dot`), and the
program walks its share of the sequence's tokens in blocks of BLOCK_N. Each
token index becomes (page, row) through the block table; the K block is
gathered row by row from its pages, scores and the weighted sum of V go
through `tl.dot`, and an online softmax keeps a running max and sum in
float32. It writes its max, its sum and its unnormalised output to scratch.
Stage 2, one program per (sequence, query head): merges the splits with
weights exp(m_split − m_max) and divides once.
Splits (flash-decoding) only when batch × KV heads is too few programs to fill
the GPU; a serving batch uses one or two.
"""

import functools

import torch
import triton
import triton.language as tl

BLOCK_N = 64  # tokens per step: 16 KB of K and 16 KB of V at head_dim 128 in bf16
PROGRAMS_PER_SM = 4
MIN_SPLIT_TOKENS = 512  # a split shorter than this costs more in its scratch and merge than it gains
MAX_SPLITS = 64  # the merge holds every split's output row in registers: 64 × head_dim floats


@triton.jit
def decode_split(
    q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, scale,
    q_heads, group, splits, table_stride, page_stride, row_stride,
    PAGE: tl.constexpr, D: tl.constexpr, GROUP_PAD: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0)
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    heads = kv_head * group + tl.arange(0, GROUP_PAD)  # this group's query heads
    head_ok = tl.arange(0, GROUP_PAD) < group
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + (b * q_heads + heads[:, None]) * D + dims[None, :], mask=head_ok[:, None], other=0.0)
    seq_len = tl.load(lens_ptr + b)
    chunk = tl.cdiv(tl.cdiv(seq_len, splits), BLOCK_N) * BLOCK_N
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)
    m = tl.full([GROUP_PAD], float("-inf"), tl.float32)
    denom = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, D], tl.float32)
    tokens = tl.arange(0, BLOCK_N)
    qk_scale = scale * 1.4426950408889634  # exp2 with log2(e) folded in
    for first in range(start, end, BLOCK_N):
        t = first + tokens
        valid = t < end
        page = tl.load(table_ptr + b * table_stride + t // PAGE, mask=valid, other=0).to(tl.int64)
        rows = page * page_stride + (t % PAGE) * row_stride + kv_head * D
        k = tl.load(k_ptr + rows[:, None] + dims[None, :], mask=valid[:, None], other=0.0)
        v = tl.load(v_ptr + rows[:, None] + dims[None, :], mask=valid[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        denom = denom * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    slot = (b * q_heads + heads) * splits + split
    tl.store(part_m_ptr + slot, m, mask=head_ok)
    tl.store(part_l_ptr + slot, denom, mask=head_ok)
    tl.store(part_acc_ptr + slot[:, None] * D + dims[None, :], acc, mask=head_ok[:, None])


@triton.jit
def merge_splits(part_acc_ptr, part_m_ptr, part_l_ptr, out_ptr, splits, D: tl.constexpr, SPLITS_PAD: tl.constexpr):
    row = tl.program_id(0)  # b * q_heads + h
    s = tl.arange(0, SPLITS_PAD)
    used = s < splits
    dims = tl.arange(0, D)
    m = tl.load(part_m_ptr + row * splits + s, mask=used, other=float("-inf"))
    denom = tl.load(part_l_ptr + row * splits + s, mask=used, other=0.0)
    acc = tl.load(part_acc_ptr + (row * splits + s[:, None]) * D + dims[None, :], mask=used[:, None], other=0.0)
    m_max = tl.max(m, axis=0)  # split 0 always holds a token, so this is finite
    w = tl.where(used & (m > float("-inf")), tl.exp2(m - m_max), 0.0)
    total = tl.sum(w[:, None] * acc, axis=0) / tl.sum(w * denom, axis=0)
    tl.store(out_ptr + row * D + dims, total.to(out_ptr.dtype.element_ty))


@functools.cache
def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4  # the Triton interpreter on a CPU


def paged_decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    out: torch.Tensor,
    scale: float,
) -> None:
    batch, q_heads, d = q.shape
    page_size = k_cache.shape[1]
    kv_heads = k_cache.shape[2]
    group = q_heads // kv_heads
    longest = block_table.shape[1] * page_size  # an upper bound known on the host: no read of seq_lens
    wanted = triton.cdiv(PROGRAMS_PER_SM * sm_count(q.device), batch * kv_heads)
    splits = max(1, min(wanted, triton.cdiv(longest, MIN_SPLIT_TOKENS), MAX_SPLITS))
    part_acc = torch.empty((batch, q_heads, splits, d), device=q.device, dtype=torch.float32)
    part_m = torch.empty((batch, q_heads, splits), device=q.device, dtype=torch.float32)
    part_l = torch.empty((batch, q_heads, splits), device=q.device, dtype=torch.float32)
    decode_split[(batch, kv_heads, splits)](
        q, k_cache, v_cache, block_table, seq_lens, part_acc, part_m, part_l, scale,
        q_heads, group, splits, block_table.stride(0), k_cache.stride(0), k_cache.stride(1),
        PAGE=page_size, D=d, GROUP_PAD=max(16, triton.next_power_of_2(group)), BLOCK_N=BLOCK_N,
        num_warps=4, num_stages=3,
    )  # fmt: skip
    merge_splits[(batch * q_heads,)](
        part_acc, part_m, part_l, out, splits, D=d, SPLITS_PAD=max(2, triton.next_power_of_2(splits))
    )
