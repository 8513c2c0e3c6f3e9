"""`drill calc`: JSON keys and values, the table, and exit status 2 with one line on bad input."""

from __future__ import annotations

import argparse
import functools
import json

import pytest

from drill.cli import build_parser
from drill.cli import calc as cli


@functools.cache  # built once for the module, not per call (3 ms each): parsing leaves the parser as it was
def parser() -> argparse.ArgumentParser:
    top, _ = build_parser(["calc"])
    return top


def calc(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.run(parser().parse_args(["calc", *argv]))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def calc_json(capsys, *argv: str) -> dict:
    code, out, err = calc(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(["params", "--model", "llama-3-8b"], {"params": 8_030_261_248}, id="HF-llama-3-8b"),
        pytest.param(["params", "--model", "llama-3-70b"], {"params": 70_553_706_496}, id="HF-llama-3-70b"),
        pytest.param(
            ["zero", "--params", "7.5e9", "--gpus", "64", "--stage", "0"],
            {"bytes_per_gpu": 120e9, "weights": 15e9, "grads": 15e9, "optimizer": 90e9},
            id="ZeRO-Fig1-baseline",
        ),
        pytest.param(
            ["zero", "--params", "7.5B", "--gpus", "64", "--stage", "1"],
            {"bytes_per_gpu": 31.40625e9},
            id="ZeRO-Fig1-Pos",
        ),
        pytest.param(
            ["zero", "--params", "7.5e9", "--gpus", "64", "--stage", "3", "--k", "12"],
            {"bytes_per_gpu": 1.875e9},
            id="ZeRO-Fig1-Pos+g+p",
        ),
        pytest.param(
            ["kv", "--model", "opt-13b", "--tokens", "2048"],
            {"bytes_per_token": 819_200, "bytes": 819_200 * 2048},
            id="vLLM-OPT-13B",
        ),
        pytest.param(
            ["kv", "--model", "llama-3-8b", "--tokens", "1k", "--batch", "4", "--dtype", "fp8"],
            {"bytes_per_token": 65_536, "bytes": 65_536 * 1000 * 4},
            id="formula-llama-3-8b-fp8",
        ),
        pytest.param(
            ["allreduce", "--gpus", "8", "--bytes", "1GiB"], {"bytes_per_rank": 1.75 * 2**30}, id="nccl-tests-allreduce"
        ),
        pytest.param(
            ["allreduce", "--gpus", "8", "--bytes", "2^30"], {"bytes_per_rank": 1.75 * 2**30}, id="size-as-a-power"
        ),
        pytest.param(
            ["allreduce", "--gpus", "4", "--bytes", "2.5e9", "--op", "all-gather"],
            {"bytes_per_rank": 0.75 * 2.5e9},
            id="nccl-tests-allgather",
        ),
        pytest.param(
            ["activations", "--seq", "2048", "--batch", "1", "--hidden", "12288", "--heads", "96"],
            {"bytes_per_layer": 2_868_903_936},
            id="Korthikanti-GPT3-no-parallelism",
        ),
        pytest.param(
            [
                "activations",
                "--seq",
                "2048",
                "--batch",
                "1",
                "--hidden",
                "12288",
                "--heads",
                "96",
                "--tp",
                "8",
                "--sp",
                "--recompute",
                "selective",
            ],
            {"bytes_per_layer": 2048 * 12288 * 34 / 8},
            id="Korthikanti-GPT3-tp8-sp-selective",
        ),
        pytest.param(
            ["bubble", "--stages", "4", "--microbatches", "8"],
            {"fraction_of_ideal": 3 / 8, "fraction_of_total": 3 / 11},
            id="Narayanan2021-1F1B",
        ),
        pytest.param(
            ["bubble", "--stages", "4", "--microbatches", "8", "--chunks", "2"],
            {"fraction_of_ideal": 3 / 16},
            id="Narayanan2021-interleaved",
        ),
        pytest.param(
            ["roofline", "--gpu", "h100-sxm", "--dtype", "bf16"],
            {"ridge_flops_per_byte": 989 / 3.35},
            id="FACTS-H100-ridge-295",
        ),
        pytest.param(
            ["roofline", "--gpu", "a100-80gb", "--dtype", "bf16", "--flops", "312e12", "--bytes", "1GB"],
            {"time_s": 1.0, "bound": "compute"},
            id="A100-one-second-of-compute",
        ),
        pytest.param(
            ["roofline", "--gpu", "h200", "--flops", "1e9", "--bytes", "4.8e12"],
            {"time_s": 1.0, "bound": "memory"},
            id="H200-one-second-of-hbm",
        ),
        pytest.param(
            ["ledger", "--model", "llama-3-8b"],
            {
                "weights": 2 * 8_030_261_248,
                "gradients": 2 * 8_030_261_248,
                "optimizer": 12 * 8_030_261_248,
                "activations": 0,
                "total": 16 * 8_030_261_248,
            },
            id="ZeRO-16-bytes-per-param",
        ),
        pytest.param(
            ["ledger", "--model", "gpt-3-175b", "--gpus", "64", "--zero", "3", "--seq", "2048", "--batch", "1"],
            {"activations": 96 * 2_868_903_936},
            id="Korthikanti-GPT3-96-layers",
        ),
    ],
)
def test_json_output(capsys, argv, expected):
    result = calc_json(capsys, *argv)
    for key, value in expected.items():
        assert result[key] == (value if isinstance(value, str) else pytest.approx(value)), key


@pytest.mark.parametrize(
    ("argv", "keys"),
    [
        (["params", "--model", "opt-13b"], {"params"}),
        (
            ["zero", "--params", "1e9", "--gpus", "8", "--stage", "2"],
            {"bytes_per_gpu", "weights", "grads", "optimizer"},
        ),
        (["kv", "--model", "llama-2-7b", "--tokens", "10"], {"bytes", "bytes_per_token"}),
        (["allreduce", "--gpus", "2", "--bytes", "1e6"], {"bytes_per_rank"}),
        (["activations", "--seq", "8", "--batch", "1", "--hidden", "64", "--heads", "4"], {"bytes_per_layer"}),
        (["bubble", "--stages", "2", "--microbatches", "2"], {"fraction_of_ideal", "fraction_of_total"}),
        (
            ["roofline", "--gpu", "h100-sxm", "--flops", "1", "--bytes", "1"],
            {"ridge_flops_per_byte", "time_s", "bound"},
        ),
        (
            ["ledger", "--model", "llama-2-7b", "--seq", "8", "--batch", "1"],
            {"weights", "gradients", "optimizer", "activations", "total"},
        ),
    ],
)
def test_json_keys(capsys, argv, keys):
    assert keys <= set(calc_json(capsys, *argv))


def test_json_flag_before_the_calculator(capsys):
    code, out, _ = calc(capsys, "--json", "params", "--model", "llama-2-7b")
    assert code == 0 and json.loads(out)["params"] == 6_738_415_616


def test_table_shows_gb_and_gib(capsys):
    code, out, _ = calc(capsys, "zero", "--params", "7.5e9", "--gpus", "64", "--stage", "1")
    assert code == 0
    line = next(row for row in out.splitlines() if "bytes_per_gpu" in row)
    assert "31,406,250,000 B" in line and "31.406 GB" in line and "29.249 GiB" in line


def test_table_shows_small_sizes_in_kb_and_kib(capsys):
    _, out, _ = calc(capsys, "kv", "--model", "opt-13b", "--tokens", "1")
    line = next(row for row in out.splitlines() if "bytes_per_token" in row)
    assert "819.200 KB" in line and "800.000 KiB" in line


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        pytest.param(["zero", "--params", "7.5e9", "--gpus", "64", "--stage", "4"], "--stage", id="stage-4"),
        pytest.param(["zero", "--params=-7.5e9", "--gpus", "64", "--stage", "1"], "negative", id="negative-params"),
        pytest.param(["zero", "--params", "7.5e9", "--gpus", "0", "--stage", "1"], "gpus", id="zero-gpus"),
        pytest.param(["kv", "--model", "llama-9", "--tokens", "5"], "llama-3-8b", id="unknown-model-lists-known"),
        pytest.param(["kv", "--model", "opt-13b", "--tokens", "5", "--dtype", "fp7"], "fp7", id="unknown-dtype"),
        pytest.param(["kv", "--model", "opt-13b", "--tokens", "2.5"], "whole", id="fractional-tokens"),
        pytest.param(["kv", "--model", "opt-13b", "--tokens", "1e30"], "beyond any real", id="absurd-tokens"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "1e25GB"], "beyond any real", id="absurd-bytes"),
        pytest.param(["zero", "--params", "1e19", "--gpus", "8", "--stage", "1"], "limit is 1e18", id="absurd-params"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes=-1GB"], "negative", id="negative-bytes"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "1 parsec"], "unit", id="bad-unit"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "3ms"], "a time, not bytes", id="time-for-bytes"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "1G"], "GiB (2^30 bytes)", id="ambiguous-G"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "1,5GB"], "point for decimals", id="decimal-comma"),
        pytest.param(
            ["zero", "--params", "7GiB", "--gpus", "64", "--stage", "1"], "bytes, not a count", id="size-for-count"
        ),
        pytest.param(["kv", "--model", "opt-13b", "--tokens", "1m"], "M for million", id="ambiguous-m"),
        pytest.param(["allreduce", "--gpus", "8", "--bytes", "1GB", "--algo", "tree"], "--algo", id="unknown-algo"),
        pytest.param(
            ["activations", "--seq", "0", "--batch", "1", "--hidden", "8", "--heads", "1"], "seq", id="zero-seq"
        ),
        pytest.param(["bubble", "--stages", "4", "--microbatches", "0"], "microbatches", id="zero-microbatches"),
        pytest.param(["roofline", "--gpu", "b300"], "h100-sxm", id="unknown-gpu-lists-known"),
        pytest.param(["roofline", "--gpu", "a100-80gb", "--dtype", "fp8"], "fp8", id="a100-has-no-fp8"),
        pytest.param(["roofline", "--gpu", "h100-sxm", "--flops", "1e9"], "--bytes", id="flops-without-bytes"),
        pytest.param(["ledger", "--model", "llama-3-8b", "--seq", "2048"], "batch", id="seq-without-batch"),
        pytest.param(["ledger", "--model", "llama-3-8b", "--optimizer", "lion"], "--optimizer", id="unknown-optimizer"),
        pytest.param(["params", "--model", "llama-3-8b", "--modle", "x"], "--modle", id="misspelt-flag"),
        pytest.param(["params"], "--model", id="missing-flag"),
        pytest.param([], "calculator", id="no-calculator"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = calc(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err


def test_a_negative_count_after_its_flag_is_named_as_negative(capsys):
    from drill.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["calc", "zero", "--params", "-7B", "--gpus", "64", "--stage", "1"])
    assert stop.value.code == 2
    assert "--params: must not be negative: -7B" in capsys.readouterr().err


def test_gemm_takes_its_dimensions_spelled_out_after_the_global_flags(capsys):
    # --n once failed as an abbreviation of the review app's --new-per-day / --new-order
    from drill.cli import main

    assert main(["calc", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--json"]) == 0
    spelled = json.loads(capsys.readouterr().out)
    assert calc_json(capsys, "gemm", "-m", "4096", "-n", "4096", "-k", "4096") == spelled


def test_no_option_is_read_from_a_prefix_of_its_name(capsys):
    from drill.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["calc", "kv", "--model", "opt-13b", "--tok", "10"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["--new", "3", "check"])  # not taken for --new-per-day
    assert exc.value.code == 2
    capsys.readouterr()


def test_model_options_list_the_model_names(capsys):
    for argv, shown, hidden in (
        (["calc", "kv", "--help"], "llama-3-8b", None),
        (["calc", "moe-params", "--help"], "deepseek-v3", "llama-3-8b"),
    ):
        with pytest.raises(SystemExit):
            build_parser(argv)[0].parse_args(argv)
        out = " ".join(capsys.readouterr().out.split())
        assert shown in out
        if hidden:
            assert hidden not in out  # only the mixture-of-experts models


def test_tokens_are_read_in_si_and_echoed_as_read(capsys):
    code, out, _ = calc(capsys, "kv", "--model", "llama-3-8b", "--tokens", "8k")
    assert code == 0 and "1 x 8,000 tokens" in out
    assert calc_json(capsys, "kv", "--model", "llama-3-8b", "--tokens", "8192")["bytes"] == 8192 * 131_072
