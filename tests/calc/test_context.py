"""Context-parallel calculators against published figures; each case names its source in the test id.

Sources:
- Liu, Zaharia, Abbeel 2023, Ring Attention, arXiv:2310.01889: section 3
  ("Arithmetic Intensity Between Hosts": 4dc² FLOPs and 4cd bytes per block,
  c >= F/B), Table 2 (minimal block size and sequence length s = 6c), Algorithm
  1 (N_h - 1 sends per layer), appendix D / Figure 5 (per-dataset FLOPs ratio).
- Jacobs et al. 2023, DeepSpeed-Ulysses, arXiv:2309.14509, communication analysis
  (also the DeepSpeed Ulysses blog, microsoft/DeepSpeed blogs/deepspeed-ulysses): 3Nh of
  Q, K, V and Nh of output per layer; M/P per link, so 4Nh/P.
- Hugging Face Transformers docs, "Ulysses sequence parallelism": heads must be
  divisible by sp_size; 32 heads allow 1, 2, 4, 8, 16 or 32.
- Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, flops():
  4·B·S²·H·Dh, halved when causal; bwd 2.5x, fwd+bwd 3.5x.
Cases marked "hand-derived" check an identity worked out by hand, not a
published number.
"""

from __future__ import annotations

import json

import pytest

from drill.calc import context
from drill.calc.expressions import FUNCTIONS
from drill.cli import main

# --- Ring Attention: the overlap condition and Table 2


@pytest.mark.parametrize(
    ("flops", "link", "block_k", "seq_k"),
    [
        pytest.param(312e12, 300e9, 1.0, 6.2, id="RingAttn-Table2-A100-NVLink"),
        pytest.param(123e12, 112e9, 1.1, 6.6, id="RingAttn-Table2-TPUv3"),
        pytest.param(275e12, 268e9, 1.0, 6.2, id="RingAttn-Table2-TPUv4"),
        pytest.param(196e12, 186e9, 1.1, 6.3, id="RingAttn-Table2-TPUv5e"),
    ],
)
def test_min_block_reproduces_ring_attention_table_2(flops, link, block_k, seq_k):
    # The paper's setting: MHA (K and V as wide as the model), bf16. Table 2 prints
    # thousands of tokens to one decimal; the minimal sequence is six blocks.
    c = context.ring_min_block_tokens(flops, link)
    assert round(c / 1e3, 1) == block_k
    assert round(6 * c / 1e3, 1) == seq_k


def test_min_block_a100_infiniband_matches_table_2_sequence_length():
    # Table 2, A100 over InfiniBand (312 TFLOP/s, 12.5 GB/s): the paper prints a
    # block of 24.5e3 but a sequence of 149.5e3 = 6 x 24.9e3; 312e12 / 12.5e9 is 24,960.
    c = context.ring_min_block_tokens(312e12, 12.5e9)
    assert c == pytest.approx(24_960)
    assert 6 * c == pytest.approx(149.5e3, rel=0.005)


def test_ring_block_matches_the_papers_4dc2_flops_and_4cd_bytes():
    # Section 3: a c-token block of hidden size d costs 4·d·c² FLOPs and its K and V
    # blocks 4·c·d bytes in bf16. Llama 2 7B: d = 32 heads x 128 = 4096, MHA.
    c, d = 4096, 4096
    seq, cp = 8 * c, 8
    assert context.attention_flops(c, 32, 128) == 4 * d * c * c
    assert context.ring_bytes_per_step(seq, cp, 32, 128) == 4 * c * d
    # At c = F/B the compute of a block exactly equals the transfer of its K/V.
    flops, link = 312e12, 312e12 / c
    assert context.ring_overlap_ratio(seq, cp, 32, 32, 128, flops, link) == pytest.approx(1.0)
    assert context.ring_min_block_tokens(flops, link, 32, 32) == pytest.approx(c)


def test_ring_sends_cp_minus_one_blocks_per_layer():
    # Algorithm 1: for count = 1 to N_h - 1, send K and V to the next host.
    per_step = context.ring_bytes_per_step(131072, 16, 8, 128)
    assert per_step == 2 * 8192 * 8 * 128 * 2  # hand-derived: Llama 3 8B, 8 KV heads, bf16
    assert context.ring_bytes_per_rank(131072, 16, 8, 128) == 15 * per_step


def test_gqa_and_causal_move_the_minimum_block_hand_derived():
    # c >= F·Hkv·bytes / (2·H·B): GQA with 8 of 64 heads needs an 8x smaller block;
    # a causal (half-work) block needs twice the tokens; fp8 K/V halve it again.
    mha = context.ring_min_block_tokens(989e12, 450e9, 64, 64)
    assert context.ring_min_block_tokens(989e12, 450e9, 64, 8) == pytest.approx(mha / 8)
    assert context.ring_min_block_tokens(989e12, 450e9, 64, 64, causal=True) == pytest.approx(2 * mha)
    assert context.ring_min_block_tokens(989e12, 450e9, 64, 64, dtype="fp8") == pytest.approx(mha / 2)


def test_block_times_hand_derived():
    # Llama 2 7B, 65,536 tokens over 16 ranks: c = 4096, K+V = 64 MiB per step.
    # Causal half of 4·4096²·4096 FLOPs at 400 TFLOP/s; 64 MiB at 50 GB/s.
    compute = context.ring_block_compute_time(65536, 16, 32, 128, 400e12, causal=True)
    transfer = context.ring_block_transfer_time(65536, 16, 32, 128, 50e9)
    assert compute == pytest.approx(2 * 4096**3 / 400e12)
    assert transfer == pytest.approx(2**26 / 50e9)


# --- attention FLOPs


@pytest.mark.parametrize(
    ("hidden", "seq", "published"),
    [
        pytest.param(4096, 2**20, 37.4, id="RingAttn-Fig5-7B-1M"),
        pytest.param(5140, 131072, 4.6, id="RingAttn-Fig5-13B-128K"),
        pytest.param(12288, 3072 * 4096, 162.6, id="RingAttn-Fig5-175B-10M"),
        pytest.param(36864, 32768 * 4096, 596.8, id="RingAttn-Fig5-1TB-100M"),
    ],
)
def test_per_token_flops_ratio_reproduces_figure_5(hidden, seq, published):
    assert round(context.per_token_flops_ratio(hidden, seq, 4096), 1) == published


def test_attention_flops_rebuild_figure_5_with_the_linear_layers():
    # Figure 5 from its own per-sequence formula (24·s·h² + 4·s²·h)·n, with the
    # attention term taken from attention_flops: LLaMA-7B, 1M over 4K tokens.
    def per_token(seq: int) -> float:
        return (24 * seq * 4096**2 + context.attention_flops(seq, 32, 128)) / seq

    assert round(per_token(2**20) / per_token(4096), 1) == 37.4


@pytest.mark.parametrize(
    ("causal", "mode", "expected"),
    [
        pytest.param(False, "fwd", 4 * 2 * 8192**2 * 16 * 128, id="flash-attn-benchmark-fwd"),
        pytest.param(True, "fwd", 2 * 2 * 8192**2 * 16 * 128, id="flash-attn-benchmark-causal-half"),
        pytest.param(False, "bwd", 2.5 * 4 * 2 * 8192**2 * 16 * 128, id="flash-attn-benchmark-bwd-2.5x"),
        pytest.param(True, "fwd_bwd", 3.5 * 2 * 2 * 8192**2 * 16 * 128, id="flash-attn-benchmark-fwd_bwd-3.5x"),
    ],
)
def test_attention_flops_follow_the_flashattention_benchmark(causal, mode, expected):
    # benchmark_flash_attention.py: batch 2, seqlen 8192, 16 heads of 128 (dim 2048).
    assert context.attention_flops(8192, 16, 128, batch=2, causal=causal, mode=mode) == expected


def test_attention_equals_the_linear_layers_at_six_h_hand_derived():
    # Appendix D's per-layer terms 24·s·h² and 4·s²·h meet at s = 6h; for h = 4096
    # (32 heads of 128) that is 24,576 tokens.
    h = 4096
    assert context.attention_flops(6 * h, 32, 128) == 24 * (6 * h) * h * h


def test_attention_flops_grow_with_the_square_of_seq():
    short = context.attention_flops(4096, 32, 128)
    assert context.attention_flops(131072, 32, 128) == 32**2 * short


# --- DeepSpeed-Ulysses


@pytest.mark.parametrize("p", [2, 4, 8, 16, 32, 64])
def test_ulysses_volume_is_the_papers_4nh_over_p(p):
    # Communication analysis: 3Nh (Q, K, V) + Nh (output) per layer, M/P per link: 4Nh/P.
    # A rank keeps 1/P of its share, so it sends (P - 1)/P of that figure.
    n, heads, head_dim = 262144, 64, 128
    h = heads * head_dim
    sent = context.ulysses_bytes_per_rank(n, p, heads, heads, head_dim, dtype="bf16")
    assert sent * p / (p - 1) == pytest.approx(4 * n * h / p * 2)


def test_ulysses_volume_constant_when_n_and_p_grow_together():
    # Communication analysis: the volume per link stays constant when N and P grow in proportion.
    a = context.ulysses_bytes_per_rank(65536, 8, 64, 64, 128) * 8 / 7
    b = context.ulysses_bytes_per_rank(131072, 16, 64, 64, 128) * 16 / 15
    assert a == pytest.approx(b)


def test_ulysses_gqa_moves_fewer_kv_heads_hand_derived():
    # Llama 3 8B: 32 query heads, 8 KV heads. With sp = 8 each rank gets one KV head;
    # with sp = 16 each KV head is repeated twice, so 16 KV heads are moved.
    s = 131072
    assert context.ulysses_bytes_per_rank(s, 8, 32, 8, 128) == pytest.approx(7 / 8 * (s / 8) * (64 + 16) * 128 * 2)
    assert context.ulysses_kv_heads(8, 16) == 16
    assert context.ulysses_bytes_per_rank(s, 16, 32, 8, 128) == pytest.approx(15 / 16 * (s / 16) * (64 + 32) * 128 * 2)


@pytest.mark.parametrize("sp", [1, 2, 4, 8, 16, 32])
def test_ulysses_accepts_every_degree_that_divides_32_heads(sp):
    # HF Transformers docs: a model with 32 heads supports sp_size 1, 2, 4, 8, 16 or 32.
    assert context.ulysses_bytes_per_rank(4096, sp, 32, 32, 128) >= 0


@pytest.mark.parametrize("sp", [3, 64])
def test_ulysses_refuses_degrees_that_do_not_divide_the_heads(sp):
    with pytest.raises(ValueError, match="heads"):
        context.ulysses_bytes_per_rank(64 * 3 * 128, sp, 32, 32, 128)


def test_card_functions_are_exposed():
    for name, function in context.CARD_FUNCTIONS.items():
        assert FUNCTIONS[name] is function


# --- bad arguments


@pytest.mark.parametrize(
    ("call", "word"),
    [
        pytest.param(lambda: context.ring_bytes_per_step(1000, 16, 8, 128), "divisible", id="seq-not-divisible"),
        pytest.param(lambda: context.ring_bytes_per_step(4096, 0, 8, 128), "cp", id="cp-zero"),
        pytest.param(lambda: context.ring_bytes_per_rank(4096, 4, 0, 128), "kv_heads", id="kv-heads-zero"),
        pytest.param(lambda: context.ring_bytes_per_step(4096, 4, 8, 128, dtype="fp7"), "dtype", id="dtype"),
        pytest.param(lambda: context.attention_flops(4096, 32, 128, mode="both"), "mode", id="mode"),
        pytest.param(lambda: context.attention_flops(4096, 32, 128, causal="yes"), "causal", id="causal-text"),
        pytest.param(lambda: context.attention_flops(-1, 32, 128), "seq", id="seq-negative"),
        pytest.param(lambda: context.attention_flops(4096.5, 32, 128), "seq", id="seq-fraction"),
        pytest.param(lambda: context.ring_block_compute_time(4096, 4, 32, 128, 0), "flops_per_s", id="flops-zero"),
        pytest.param(
            lambda: context.ring_block_transfer_time(4096, 4, 8, 128, -1e9), "link_bytes_per_s", id="link-negative"
        ),
        pytest.param(lambda: context.ring_min_block_tokens(989e12, 0), "link_bytes_per_s", id="min-block-link"),
        pytest.param(lambda: context.ulysses_kv_heads(3, 4), "kv_heads", id="kv-heads-vs-sp"),
        pytest.param(lambda: context.per_token_flops_ratio(4096, 0, 4096), "seq", id="ratio-seq-zero"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# --- drill calc


def test_cli_cp_comm_json(capsys):
    code = main(["calc", "cp-comm", "--seq", "131072", "--ranks", "16", "--model", "llama-3-8b", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["block_tokens"] == 8192
    assert out["ring_bytes_per_step"] == 2 * 8192 * 8 * 128 * 2
    assert out["ring_bytes_per_layer"] == 15 * out["ring_bytes_per_step"]
    assert out["ulysses_kv_heads_moved"] == 16


def test_cli_ring_overlap_reproduces_table_2(capsys):
    # Table 2's A100 NVLink row as an MHA model of 32 heads: c = F/B = 1,040 tokens.
    argv = ["calc", "ring-overlap", "--seq", "8320", "--cp", "8", "--heads", "32", "--head-dim", "128"]
    code = main([*argv, "--flops", "312e12", "--link", "300e9", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["min_block_tokens"] == 1040
    assert out["compute_over_transfer"] == pytest.approx(1.0)


def test_cli_attention_flops_and_errors(capsys):
    code = main(["calc", "attention-flops", "--seq", "8192", "--heads", "16", "--head-dim", "128", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["flops_per_layer"] == 4 * 8192**2 * 16 * 128
    assert main(["calc", "cp-comm", "--seq", "1000", "--ranks", "16", "--model", "llama-3-8b"]) == 2
    assert "divisible" in capsys.readouterr().err
    assert main(["calc", "attention-flops", "--seq", "4096"]) == 2
    assert "--model" in capsys.readouterr().err
