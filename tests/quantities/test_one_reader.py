"""One reader of quantities: `drill calc` and card checks read the same text as the same value.

Before there was one reader, the calculators and the card checks each had
their own, and they disagreed on the texts in DECIDED below. Each row is the
decision now shared by both: the value, or the part of the message that
explains the refusal.
"""

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drill.calc.sizes import parse_quantity as calc_quantity
from drill.cards.number_check import check_number
from drill.quantities import QuantityError, format_quantity, parse_quantity

GiB = 2**30
REFUSED = object()

# text, what is expected ("bytes" for sizes, "count" for counts), value or the words of the refusal, why
DECIDED = [
    # Commas group thousands only; a misplaced comma is most likely a decimal comma, so it is refused.
    ("1,5", "bytes", "use a point for decimals", "calc read 15"),
    ("1,02", "count", "use a point for decimals", "calc read 102"),
    ("10,00,000", "count", "commas only between thousands", "calc read 1e6"),
    ("1,0000", "bytes", "commas only between thousands", "calc read 10000"),
    ("10,", "count", "commas only between thousands", "calc read 10"),
    # Underscores may separate digits, as in Python, and nowhere else.
    ("1_000", "bytes", 1000, "cards refused"),
    ("1_024", "count", 1024, "cards refused"),
    ("1_000.5", "bytes", 1000.5, "cards refused"),
    ("1__000", "count", "underscore goes only between two digits", "calc read 1000"),
    ("1_", "bytes", "underscore goes only between two digits", "calc read 1"),
    # A lone m, G or g is ambiguous (milli, minutes or million; GB or GiB): refused with the choices.
    ("1m", "count", "write M for million, ms for milliseconds or min for minutes", "calc read 1e6"),
    ("5m", "bytes", "write M for million", "calc read 5e6"),
    ("1G", "bytes", "write GB (10^9 bytes), GiB (2^30 bytes)", "calc read 1e9"),
    ("1g", "count", "write GB (10^9 bytes), GiB (2^30 bytes)", "calc read 1e9"),
    # t is trillion, like T (k/K and b/B already went both ways).
    ("1t", "count", 1e12, "cards refused"),
    ("2t", "bytes", 2e12, "cards refused"),
    ("15t tokens", "count", 15e12, "both refused; T tokens was read by cards"),
    # Hexadecimal is refused, not read as the product 0 x 10.
    ("0x10", "count", "hexadecimal", "cards read 0"),
    ("0x10", "bytes", "hexadecimal", "cards read 0"),
    # A size where a count is expected is refused, as in a card check.
    ("1GiB", "count", "is bytes, not a count", "calc read 2^30"),
    ("2.68 GB", "count", "is bytes, not a count", "calc read 2.68e9"),
    ("800 KB", "count", "is bytes, not a count", "calc read 8e5"),
    ("-1GB", "count", "is bytes, not a count", "calc read -1e9"),
    # Units and words calc did not know, now read by both.
    ("1 PB", "bytes", 1e15, "calc refused"),
    ("1 PiB", "bytes", 2**50, "calc refused"),
    ("1 EB", "bytes", 1e18, "calc refused"),
    ("3 gibibytes", "bytes", 3 * GiB, "calc refused"),
    ("512 bytes", "bytes", 512, "calc refused"),
    ("6.74 billion", "count", 6.74e9, "calc refused"),
    ("2 thousand", "count", 2000, "calc refused"),
    ("7B params", "count", 7e9, "calc refused"),
    ("15T tokens", "count", 15e12, "calc refused"),
    # Powers and products, the typographic minus, a space after the sign.
    ("2^30", "bytes", GiB, "calc refused"),
    ("2**30", "count", GiB, "calc refused"),
    ("2**30 B", "bytes", GiB, "calc refused"),
    ("2**30 B", "count", GiB * 1e9, "calc refused"),
    ("2.5 x 10^9", "bytes", 2.5e9, "calc refused"),
    ("2.5×10^9 B", "bytes", 2.5e9, "calc refused"),
    ("4 * 1024", "count", 4096, "calc refused"),
    ("- 5", "count", -5, "calc refused"),
    ("−5", "bytes", -5, "calc refused"),
    # Other dimensions: both refuse, and both now say which dimension was typed.
    ("3.35 TB/s", "bytes", "is bandwidth (bytes per second), not bytes", "calc: unknown unit"),
    ("12 ms", "bytes", "is a time, not bytes", "calc: unknown unit"),
    ("50%", "count", "is a fraction, not a count", "calc: unknown unit"),
    ("989 TFLOP/s", "count", "is throughput (FLOP per second), not a count", "calc: unknown unit"),
]


def _card_reading(text, expect):
    """What a card check makes of `text`: the value, or REFUSED if unreadable or of another dimension."""
    try:
        q = parse_quantity(text, expect=expect)
    except QuantityError:
        return REFUSED
    return q.value if q.dimension in (None, expect) else REFUSED


@pytest.mark.parametrize("text, expect, decided, before", DECIDED, ids=[f"{t}->{e}" for t, e, *_ in DECIDED])
def test_calc_and_cards_read_former_disagreements_alike(text, expect, decided, before):
    count = expect == "count"
    if isinstance(decided, str):
        with pytest.raises(ValueError, match=decided.replace("(", r"\(").replace(")", r"\)").replace("^", r"\^")):
            calc_quantity(text, count=count)
        assert _card_reading(text, expect) is REFUSED
    else:
        assert calc_quantity(text, count=count) == pytest.approx(decided, rel=1e-12)
        assert _card_reading(text, expect) == pytest.approx(decided, rel=1e-12)


@pytest.mark.parametrize(
    "text, says",
    [
        ("1m", "write M for million"),
        ("1G", "GiB (2^30 bytes)"),
        ("0x10", "hexadecimal"),
        ("1,5", "use a point for decimals"),
        ("1__000", "underscore"),
    ],
)
def test_a_card_check_explains_a_refused_text(text, says):
    verdict = check_number(text, 1e6, "count")
    assert verdict.ok is False and says in verdict.message


def test_a_gb_gib_mix_up_is_still_named():
    verdict = check_number("2.5 GB", 2.5 * GiB, "bytes")
    assert "you wrote GB (1e9) but the value matches GiB (2^30)" in verdict.message
    assert calc_quantity("2.5 GB") == 2.5e9 and calc_quantity("2.5 GiB") == 2.5 * GiB


_PIECES = st.sampled_from(
    [
        "1",
        "2.5",
        ",",
        ".",
        "_",
        "e",
        "9",
        "^",
        "**",
        "x",
        "*",
        " ",
        "-",
        "%",
        "/",
        "s",
        "ms",
        "GiB",
        "GB",
        "B",
        "KiB",
        "k",
        "K",
        "m",
        "M",
        "G",
        "t",
        "T",
        "bn",
        "0x",
        "params",
        "billion",
        "1e308",
        "10^",
        "0",
        "TB/s",
    ]
)


@settings(max_examples=200, deadline=None)
@given(text=st.lists(_PIECES, max_size=8).map("".join), count=st.booleans())
def test_calc_and_cards_agree_on_any_text(text, count):
    expect = "count" if count else "bytes"
    try:
        value = calc_quantity(text, count=count)
    except ValueError:
        value = REFUSED
    card = _card_reading(text, expect)
    if value is REFUSED or card is REFUSED:
        assert value is card
    else:
        assert math.isfinite(value) and value == card


@pytest.mark.parametrize("value", [0, 7, 2.5e9, 1024.0])
def test_calc_takes_numbers_as_they_are(value):
    assert calc_quantity(value) == value


@pytest.mark.parametrize("value", [True, math.inf, math.nan])
def test_calc_refuses_flags_and_infinities(value):
    with pytest.raises(ValueError):
        calc_quantity(value)


def _drill_modules_after(import_line):
    code = f"import sys; {import_line}; print(' '.join(m for m in sys.modules if m.startswith('drill.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_reader_of_quantities_stands_alone():
    assert _drill_modules_after("import drill.quantities") <= {
        f"drill.quantities.{name}" for name in ("core", "numbers", "unit_names", "parsing", "formatting")
    } | {"drill.quantities"}


def test_the_calculators_import_nothing_from_cards():
    loaded = _drill_modules_after("import drill.cli.calc, drill.calc.expressions, drill.calc.checks")
    assert not {m for m in loaded if m.startswith("drill.cards")}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2300 tokens/s", 2300),
        ("2300 tok/s", 2300),
        ("2300 tokens per second", 2300),
        ("1.2k requests", 1200),
        ("64 sequences", 64),
        ("8 GPUs", 8),
    ],
)
def test_a_count_may_name_what_it_counts(text, value):
    q = parse_quantity(text, expect="count")
    assert q.value == value and q.dimension in (None, "count")


def test_a_counted_noun_is_no_unit_of_another_dimension():
    with pytest.raises(QuantityError):
        parse_quantity("2300 tokens/s", expect="bytes")
    with pytest.raises(QuantityError):
        parse_quantity("5 parsecs", expect="count")


def test_a_multiple_reads_as_the_fraction_it_is():
    assert parse_quantity("2.81x", expect="fraction").value == pytest.approx(2.81)
    assert parse_quantity("2.81 ×", expect="fraction").value == pytest.approx(2.81)
    assert parse_quantity("281%", expect="fraction").value == pytest.approx(2.81)
    with pytest.raises(QuantityError):
        parse_quantity("2.81 xx", expect="fraction")


@pytest.mark.parametrize(
    "value, shown",
    [
        (0.25, "25.0%"),
        (0.998, "99.8%"),
        (1.0, "100%"),  # the whole: still a share
        (2 * 511 / 512, "2.00×"),  # the ring all-reduce factor over 512 ranks, once printed as 200%
        (2.81, "2.81×"),
        (150.0, "150×"),
        (1234.5, "1230×"),  # no exponent
    ],
)
def test_a_share_prints_as_a_percentage_and_a_ratio_above_one_as_a_multiple(value, shown):
    assert format_quantity(value, "fraction") == shown
    assert parse_quantity(shown, expect="fraction").value == pytest.approx(value, rel=5e-3)  # read back as shown
