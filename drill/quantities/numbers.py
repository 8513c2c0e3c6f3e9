"""Reading the number at the start of a quantity: 2.5, 1,024.5, 32_768, 2.7e9, 2^30, 2.5 x 10^9, -3."""

from __future__ import annotations

import math
import re

from drill.quantities.core import QuantityError

# Digits with commas between groups of three, or with underscores between digits.
_DIGITS = r"\d{1,3}(?:,\d{3})+|\d+(?:_\d+)*"
_DECIMAL = rf"(?:{_DIGITS})(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
_TERM = rf"(?:{_DECIMAL})(?:\s*(?:\^|\*\*)\s*[-+]?\d+)?"
_NUMBER = re.compile(rf"\s*(?P<sign>[-+])?\s*(?P<num>{_TERM}(?:\s*[x*]\s*{_TERM})*)")
_TERM_RE = re.compile(rf"(?P<base>{_DECIMAL})(?:\s*(?:\^|\*\*)\s*(?P<exp>[-+]?\d+))?")
_HEX = re.compile(r"[-+]?\s*0[xX][0-9a-fA-F]")
_MAX_EXPONENT = 400

# Typographic characters that people paste, mapped to what the reader expects.
_TRANSLATE = str.maketrans(
    {
        "\u00b5": "u",  # micro sign
        "\u03bc": "u",  # Greek mu
        "\u00d7": "x",  # multiplication sign
        "\u22c5": "*",  # dot operator
        "\u00b7": "*",  # middle dot
        "\u2212": "-",  # minus sign
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
    }
)

EXAMPLES = "e.g. 2.5 GiB, 2.7e9, 320 KiB, 50%"


def clean(text: str) -> str:
    """`text` with typographic signs made plain, `**` written `^`, and the ends trimmed."""
    return text.translate(_TRANSLATE).replace("**", "^").strip()


def _term_value(term: str, num: str) -> float:
    m = _TERM_RE.fullmatch(term.strip())
    if not m:
        raise QuantityError(f"cannot read the number {num!r}")
    base = float(m["base"].replace(",", "").replace("_", ""))
    if m["exp"] is None:
        return base
    exp = int(m["exp"])
    if abs(exp) > _MAX_EXPONENT:
        raise QuantityError(f"the number {num!r} is too large")
    try:
        return base**exp
    except (OverflowError, ZeroDivisionError) as e:
        raise QuantityError(f"cannot read the number {num!r}: {e}") from None


def _product_value(num: str) -> float:
    value = 1.0
    for term in re.split(r"\s*[x*]\s*(?=[\d.])", num):
        value *= _term_value(term, num)
    if not math.isfinite(value):
        raise QuantityError(f"the number {num!r} is too large")
    return value


def read_number(cleaned: str, original: str) -> tuple[float, str]:
    """The signed number at the start of `cleaned` and the text after it (the unit).

    `original` is the text as typed, for messages. Raises QuantityError.
    """
    shown = original.strip()
    if _HEX.match(cleaned):
        raise QuantityError(f"cannot read {shown!r}: hexadecimal is not read; write the number in decimal")
    m = _NUMBER.match(cleaned)
    if not m or not m["num"]:
        raise QuantityError(f"cannot read {shown!r} as a number ({EXAMPLES})")
    rest = cleaned[m.end() :]
    if re.match(r"[\d,.]", rest.lstrip()):
        raise QuantityError(
            f"cannot read {shown!r}: use a point for decimals and commas only between thousands (1,024.5)"
        )
    if rest.startswith("_"):
        raise QuantityError(f"cannot read {shown!r}: an underscore goes only between two digits (32_768)")
    number = _product_value(m["num"])
    return (-number if m["sign"] == "-" else number), rest.strip()
