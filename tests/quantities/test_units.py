"""Reading typed quantities, checking them against expected answers, and showing them."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.cards.number_check import check_number
from drill.quantities import DIMENSIONS as CARD_UNITS
from drill.quantities import QuantityError, format_quantity, parse_quantity

GiB = 2**30
KiB = 2**10

# text, expected unit (None: no expectation), value in base units, dimension (None: a bare number)
PARSE_TABLE = [
    ("2.5 GiB", "bytes", 2.5 * GiB, "bytes"),
    ("2.68 GB", "bytes", 2.68e9, "bytes"),
    ("2684354560", "bytes", 2684354560, None),
    ("2.7e9", "bytes", 2.7e9, None),
    ("2.7E+9", "bytes", 2.7e9, None),
    ("320 KiB", "bytes", 320 * KiB, "bytes"),
    ("1,024", "count", 1024, None),
    ("1,234,567.5", "count", 1234567.5, None),
    ("800 KB", "bytes", 800e3, "bytes"),
    ("800 kB", "bytes", 800e3, "bytes"),
    ("1.6GB", "bytes", 1.6e9, "bytes"),
    ("1.6 gb", "bytes", 1.6e9, "bytes"),
    ("3 gigabytes", "bytes", 3e9, "bytes"),
    ("3 gibibytes", "bytes", 3 * GiB, "bytes"),
    ("512 bytes", "bytes", 512, "bytes"),
    ("7B", "bytes", 7, "bytes"),  # a trailing B is bytes when bytes are expected...
    ("7B", "count", 7e9, None),  # ...and billions when a count is expected
    ("7B params", "count", 7e9, "count"),
    ("6.74 billion", "count", 6.74e9, None),
    ("1.2 T", "count", 1.2e12, None),
    ("405b", "count", 405e9, None),
    ("32k", "count", 32e3, None),
    ("12 ms", "seconds", 0.012, "seconds"),
    ("3.5 µs", "seconds", 3.5e-6, "seconds"),
    ("3.5 μs", "seconds", 3.5e-6, "seconds"),  # Greek mu, not the micro sign
    ("3.5us", "seconds", 3.5e-6, "seconds"),
    ("40 ns", "seconds", 40e-9, "seconds"),
    ("2 min", "seconds", 120, "seconds"),
    ("0.5", "fraction", 0.5, None),
    ("50%", "fraction", 0.5, "fraction"),
    ("12.5 %", "fraction", 0.125, "fraction"),
    ("295 FLOP/B", "flop_per_byte", 295, "flop_per_byte"),
    ("295 flops/byte", "flop_per_byte", 295, "flop_per_byte"),
    ("295 FLOP per byte", "flop_per_byte", 295, "flop_per_byte"),
    ("3.35 TB/s", "bytes_per_second", 3.35e12, "bytes_per_second"),
    ("3350 GB/s", "bytes_per_second", 3.35e12, "bytes_per_second"),
    ("900 GiB/s", "bytes_per_second", 900 * GiB, "bytes_per_second"),
    ("989 TFLOP/s", "flop_per_second", 989e12, "flop_per_second"),
    ("989 TFLOPS", "flop_per_second", 989e12, "flop_per_second"),  # TFLOPS read as a rate when a rate is expected
    ("1.2e15 FLOPs", "flops", 1.2e15, "flops"),
    ("1.2 PFLOP", "flops", 1.2e15, "flops"),
    ("6.35 YFLOP", "flops", 6.35e24, "flops"),
    ("3.1 ZFLOPs", "flops", 3.1e21, "flops"),
    ("2 zettaflops", "flops", 2e21, "flops"),
    ("1.5 ZB", "bytes", 1.5e21, "bytes"),
    ("2 YiB", "bytes", 2 * 2.0**80, "bytes"),
    ("1.20e27 FLOP", "flops", 1.2e27, "flops"),
    ("2^30", "bytes", GiB, None),
    ("2**30 B", "bytes", GiB, "bytes"),
    ("2.5 x 10^9", "bytes", 2.5e9, None),
    ("2.5×10^9 B", "bytes", 2.5e9, "bytes"),
    ("4 * 1024", "count", 4096, None),
    ("-3 ms", "seconds", -0.003, "seconds"),
    ("−3 ms", "seconds", -0.003, "seconds"),  # the typographic minus sign
    (".5", "fraction", 0.5, None),
    ("  2.5   GiB  ", "bytes", 2.5 * GiB, "bytes"),
    ("2.5 GiB", None, 2.5 * GiB, "bytes"),
    ("7B", None, 7, "bytes"),
]


@pytest.mark.parametrize("text, expect, value, dimension", PARSE_TABLE, ids=[f"{t}->{e}" for t, e, *_ in PARSE_TABLE])
def test_parse_quantity(text, expect, value, dimension):
    q = parse_quantity(text, expect=expect)
    assert q.value == pytest.approx(value, rel=1e-12)
    assert q.dimension == dimension


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "no number"),
        ("   ", "no number"),
        ("abc", "cannot read"),
        ("GiB", "cannot read"),
        ("2.5 GiBs", "unknown unit"),
        ("3 furlongs", "unknown unit 'furlongs'"),
        ("1,5", "use a point for decimals"),
        ("1 024", "commas only between thousands"),
        ("1e999", "too large"),
        ("10^500", "too large"),
        ("2.5 GiB/furlong", "unknown unit"),
        ("9" * 300, "longer than"),
    ],
)
def test_unreadable_text_says_why(text, says):
    with pytest.raises(QuantityError, match=says):
        parse_quantity(text, expect="bytes")


# text, expected value, unit, tolerance, ok, part of the message
CHECK_TABLE = [
    pytest.param("2.5 GiB", 2.5 * GiB, "bytes", 0.02, True, "right", id="gib-right"),
    pytest.param("2.68 GB", 2.5 * GiB, "bytes", 0.02, True, "right", id="same-bytes-in-gb"),
    pytest.param("2684354560", 2.5 * GiB, "bytes", 0.02, True, "bare number is read as bytes", id="bare-bytes"),
    pytest.param(
        "2.5 GB",
        2.5 * GiB,
        "bytes",
        0.02,
        False,
        "you wrote GB (1e9) but the value matches GiB (2^30)",
        id="trap-gb-for-gib",
    ),
    pytest.param(
        "2.5 GiB",
        2.5e9,
        "bytes",
        0.02,
        False,
        "you wrote GiB (2^30) but the value matches GB (1e9)",
        id="trap-gib-for-gb",
    ),
    pytest.param(
        "320 KB",
        320 * KiB,
        "bytes",
        0.02,
        False,
        "you wrote KB (1000) but the value matches KiB (2^10)",
        id="trap-kb-for-kib",
    ),
    pytest.param(
        "3.35 TiB/s",
        3.35e12,
        "bytes_per_second",
        0.02,
        False,
        "you wrote TiB/s (2^40) but the value matches TB/s (1e12)",
        id="trap-bandwidth",
    ),
    pytest.param(
        "2.5",
        2.5 * GiB,
        "bytes",
        0.02,
        False,
        "a bare number is read as bytes; it matches 2.5 GiB",
        id="bare-missing-unit",
    ),
    pytest.param("12 s", 2.5 * GiB, "bytes", 0.02, False, "s is a time, but the answer is bytes", id="wrong-dimension"),
    pytest.param("2 GB", 0.012, "seconds", 0.02, False, "GB is bytes, but the answer is a time", id="bytes-for-time"),
    pytest.param("12 ms", 0.012, "seconds", 0.02, True, "right", id="ms"),
    pytest.param("12", 0.012, "seconds", 0.02, False, "it matches 12 ms", id="bare-seconds-hint"),
    pytest.param("50%", 0.5, "fraction", 0.02, True, "right", id="percent"),
    pytest.param("50", 0.5, "fraction", 0.02, False, "write 0.5 or 50%", id="percent-without-sign"),
    pytest.param("3.35 GB/s", 3.35e12, "bytes_per_second", 0.02, False, "1,000 times too small", id="prefix-off"),
    pytest.param("2.5 MiB", 2.5 * GiB, "bytes", 0.02, False, "1,024 times too small", id="binary-prefix-off"),
    pytest.param("2.6 GiB", 2.5 * GiB, "bytes", 0.02, False, "4.0% above the answer", id="just-outside"),
    pytest.param("2.54 GiB", 2.5 * GiB, "bytes", 0.02, True, "right", id="just-inside"),
    pytest.param("7B", 7e9, "count", 0.02, True, "right", id="count-b-suffix"),
    pytest.param("32", 32, "count", 0, True, "right", id="exact"),
    pytest.param("33", 32, "count", 0, False, "above", id="exact-miss"),
    pytest.param("0", 0, "count", 0, True, "right", id="zero"),
    pytest.param("1", 0, "count", 0, False, "not 0", id="zero-miss"),
    pytest.param("banana", 1.0, "bytes", 0.02, False, "cannot read 'banana'", id="unreadable"),
    # published figures, each with its source
    # OPT-13B: 2 x 40 layers x 5120 x 2 bytes = 819,200 bytes per token, i.e. 800 KiB; the paper
    # writes "800 KB" and, for 2,048 tokens (1.68e9 bytes), rounds down to "1.6 GB".
    pytest.param(
        "800 KiB",
        2 * 40 * 5120 * 2,
        "bytes",
        0.001,
        True,
        "right",
        id="opt-13b-kv-per-token-800KiB[vLLM arXiv:2309.06180]",
    ),
    pytest.param(
        "800 KB",
        2 * 40 * 5120 * 2,
        "bytes",
        0.02,
        False,
        "you wrote KB (1000) but the value matches KiB (2^10)",
        id="opt-13b-kv-per-token-not-800e3[vLLM arXiv:2309.06180]",
    ),
    pytest.param(
        "1.6 GB",
        2 * 40 * 5120 * 2 * 2048,
        "bytes",
        0.05,
        True,
        "right",
        id="opt-13b-kv-2048-tokens-1.6GB[vLLM arXiv:2309.06180]",
    ),
    pytest.param(
        "295 FLOP/B",
        989e12 / 3.35e12,
        "flop_per_byte",
        0.01,
        True,
        "right",
        id="h100-bf16-ridge-295[stas00 ml-engineering accelerator]",
    ),
    pytest.param(
        "3.35 TB/s",
        3.35e12,
        "bytes_per_second",
        0.001,
        True,
        "right",
        id="h100-sxm-hbm-3.35TB/s[stas00 ml-engineering accelerator]",
    ),
    pytest.param(
        "3.35 TiB/s",
        3.35e12,
        "bytes_per_second",
        0.02,
        False,
        "matches TB/s",
        id="h100-sxm-hbm-not-TiB[stas00 ml-engineering accelerator]",
    ),
]


@pytest.mark.parametrize("text, expected, unit, tolerance, ok, says", CHECK_TABLE)
def test_check_number(text, expected, unit, tolerance, ok, says):
    verdict = check_number(text, expected, unit, tolerance)
    assert verdict.ok is ok
    assert says in verdict.message


def test_check_number_reports_the_parsed_value():
    assert check_number("2.5 GB", 2.5 * GiB, "bytes").parsed_value == 2.5e9
    assert check_number("nonsense", 1.0, "bytes").parsed_value is None


@pytest.mark.parametrize("tolerance", [-0.1, math.nan, math.inf])
def test_check_number_rejects_a_bad_tolerance(tolerance):
    with pytest.raises(ValueError):
        check_number("1", 1.0, "count", tolerance)


FORMAT_TABLE = [
    (2.5 * GiB, "bytes", "2.68 GB (2.50 GiB)"),
    (512, "bytes", "512 B"),
    (1024, "bytes", "1.02 KB (1.00 KiB)"),
    (80e9, "bytes", "80.0 GB (74.5 GiB)"),
    (3.35e12, "bytes_per_second", "3.35 TB/s"),
    (1.2e15, "flops", "1.20 PFLOP"),
    (989e12, "flop_per_second", "989 TFLOP/s"),
    (295.2, "flop_per_byte", "295 FLOP/B"),
    (0.5, "fraction", "50.0%"),
    (0.0125, "seconds", "12.5 ms"),
    (3.5e-6, "seconds", "3.50 µs"),
    (4e-8, "seconds", "40.0 ns"),
    (125, "seconds", "125 s"),
    (6.74e9, "count", "6.74 billion"),
    (1024, "count", "1,024"),
    (999_999_999, "count", "1.00 billion"),
    # a count with a fraction keeps every digit of its integer part (never "3970" for 3,971.9)
    (3971.9, "count", "3,972"),
    (248.2, "count", "248"),
    (12.345, "count", "12.3"),
    (0.125, "count", "0.125"),
    # FLOPs and bytes through yotta, then a power of ten (not "6350000 EFLOP")
    (6.35e24, "flops", "6.35 YFLOP"),
    (3.1e21, "flops", "3.10 ZFLOP"),
    (1.2e27, "flops", "1.20e27 FLOP"),
    (9.9996e26, "flops", "1.00e27 FLOP"),
    (2e28, "flop_per_second", "2.00e28 FLOP/s"),
    (1.5e21, "bytes", "1.50 ZB (1.27 ZiB)"),
    (3e30, "bytes", "3.00e30 B"),
    (0, "bytes", "0 B"),
]


@pytest.mark.parametrize("value, unit, shown", FORMAT_TABLE, ids=[s for *_, s in FORMAT_TABLE])
def test_format_quantity(value, unit, shown):
    assert format_quantity(value, unit) == shown


def test_format_quantity_without_the_binary_form():
    assert format_quantity(2.5 * GiB, "bytes", alternate=False) == "2.68 GB"


@settings(max_examples=150, deadline=None)
@given(
    value=st.one_of(
        st.floats(min_value=1e-9, max_value=1e30),
        st.floats(min_value=-1e30, max_value=-1e-9),
        st.integers(min_value=0, max_value=10**15).map(float),
    ),
    unit=st.sampled_from(CARD_UNITS),
)
def test_a_formatted_value_reads_back(value, unit):
    shown = format_quantity(value, unit, digits=15, alternate=False)
    q = parse_quantity(shown, expect=unit)
    assert q.value == pytest.approx(value, rel=1e-12, abs=1e-300)
    assert q.dimension in (unit, None)


_PIECES = st.sampled_from(
    [
        "1",
        "2.5",
        ",",
        ".",
        "e",
        "E",
        "9",
        "^",
        "**",
        "x",
        "*",
        " ",
        "-",
        "+",
        "%",
        "/",
        "s",
        "GiB",
        "GB",
        "B",
        "KiB",
        "FLOP",
        "per",
        "µ",
        "T",
        "k",
        "bn",
        "(",
        ")",
        "1e308",
        "10^",
        "0",
        "byte",
        "flops",
        "TB/s",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(st.text(max_size=40), st.lists(_PIECES, max_size=12).map("".join)), unit=st.sampled_from(CARD_UNITS)
)
def test_any_text_gives_a_quantity_or_a_quantity_error(text, unit):
    try:
        q = parse_quantity(text, expect=unit)
    except QuantityError as e:
        assert str(e)
    else:
        assert math.isfinite(q.value)
    verdict = check_number(text, 1.5e9, unit, 0.02)
    assert isinstance(verdict.ok, bool) and verdict.message


@pytest.mark.parametrize("text, unit", [("1e307", "fraction"), ("1e307 GB", "bytes"), ("-1e308", "count")])
def test_huge_answers_are_judged_without_error(text, unit):
    verdict = check_number(text, 0.5, unit, 0.02)
    assert verdict.ok is False and verdict.message
