"""The `// drill:` launch declaration: parsing and grid rules."""

import pytest

from drill.kernel_shared.launch import (
    LaunchError,
    block_dims,
    grid_size,
    parse_dims,
    parse_launch,
    smem_bytes,
    validate,
)


@pytest.mark.parametrize(
    "source, values, line",
    [
        ("// drill: block=256 grid=auto\n__global__ void k() {}", {"block": "256", "grid": "auto"}, 1),
        ("int a;\n\n   //drill: block=32x8 tile=32x32\n", {"block": "32x8", "tile": "32x32"}, 3),
        ("// drill: grid=1024,1", {"grid": "1024,1"}, 1),
        ("// no declaration here\n// drill launch line (prose)\n", {}, 0),
        ("// drill:", {}, 1),
    ],
)
def test_parse_launch(source, values, line):
    decl = parse_launch(source)
    assert decl.values == values
    assert decl.line == line


@pytest.mark.parametrize(
    "source, allowed, line, words",
    [
        ("x\n// drill: block=256 grdi=auto", ("block", "grid"), 2, "unknown launch key `grdi`"),
        ("// drill: block 256", None, 1, "is not key=value"),
        ("// drill: block=1\n// drill: block=2", None, 2, "a second `// drill:` line (the first is line 1)"),
        ("// drill: block=1 block=2", None, 1, "`block` given twice"),
    ],
)
def test_parse_launch_errors_name_the_line(source, allowed, line, words):
    with pytest.raises(LaunchError) as err:
        parse_launch(source, allowed)
    assert err.value.line == line
    assert words in str(err.value)


@pytest.mark.parametrize(
    "text, dims",
    [("256", (256,)), ("32x8", (32, 8)), ("8X8x4", (8, 8, 4))],
)
def test_parse_dims(text, dims):
    assert parse_dims(text) == dims


@pytest.mark.parametrize("text", ["", "0", "32x0", "a", "1x2x3x4", "32*8", "-4"])
def test_parse_dims_rejects(text):
    with pytest.raises(LaunchError):
        parse_dims(text)


@pytest.mark.parametrize(
    "text, dims",
    [("256", (256, 1, 1)), ("32x8", (32, 8, 1)), ("1024", (1024, 1, 1)), ("4x4x64", (4, 4, 64))],
)
def test_block_dims_pads_to_three(text, dims):
    assert block_dims(text) == dims


@pytest.mark.parametrize(
    "text, words", [("2048", "at most 1024"), ("64x32", "2048 threads"), ("1x1x128", "z dimension")]
)
def test_block_dims_limits(text, words):
    with pytest.raises(LaunchError, match=words):
        block_dims(text)


@pytest.mark.parametrize(
    "rule, work, threads, sms, blocks",
    [
        ("auto", 1, 256, 132, 1),
        ("auto", 257, 256, 132, 2),
        ("auto", 1_000_003, 256, 132, 3907),
        ("auto/4", 1_000_003, 256, 132, 977),
        ("4*sm", 10, 256, 132, 528),
        ("sm*2", 10, 256, 108, 216),
        ("sm", 10, 256, 132, 132),
        ("1024", 5, 256, 132, 1024),
        ("auto", 0, 256, 132, 1),  # an empty pass still launches one block
    ],
)
def test_grid_size(rule, work, threads, sms, blocks):
    assert grid_size(rule, work, threads, sms) == blocks


@pytest.mark.parametrize("rule", ["fast", "auto/0", "2*sm*3", "1.5", "auto/"])
def test_grid_size_rejects(rule):
    with pytest.raises(LaunchError):
        grid_size(rule, 100, 256, 132, line=7)


@pytest.mark.parametrize("text, value", [("0", 0), ("4096", 4096), ("16k", 16384), ("227K", 227 * 1024)])
def test_smem_bytes(text, value):
    assert smem_bytes(text) == value


@pytest.mark.parametrize("text", ["228k", "1M", "lots"])
def test_smem_bytes_rejects(text):
    with pytest.raises(LaunchError):
        smem_bytes(text)


def test_per_pass_lists_and_empty_entries():
    decl = parse_launch("// drill: block=256,1024 grid=4*sm,1")
    assert decl.per_pass("block", "1") == ["256", "1024"]
    assert decl.per_pass("smem", "0") == ["0"]
    with pytest.raises(LaunchError, match="empty entry"):
        parse_launch("// drill: grid=1024,").per_pass("grid", "auto")


@pytest.mark.parametrize(
    "line, words",
    [
        ("// drill: block=256,2048 grid=auto", "2048 threads"),
        ("// drill: grid=auto,quick", "grid=quick"),
        ("// drill: tile=32x", "tile=32x"),
        ("// drill: smem=300k", "smem=300k"),
    ],
)
def test_validate_checks_every_pass_without_a_gpu(line, words):
    with pytest.raises(LaunchError, match=words) as err:
        validate(parse_launch("\n" + line))
    assert err.value.line == 2


def test_validate_accepts_the_bundled_style():
    validate(parse_launch("// drill: block=512,1024 grid=4*sm,1 smem=0 tile=32x32"))
