"""The sandbox in which card templates and expressions run.

Jinja2's immutable sandbox with no loader and no default globals, where an
attribute is readable only if it is plain data (never a method) and only the
functions a card is given may be called (`CALLABLE_NOW`, set for each run).
Every arithmetic operator is checked before it runs: no `10**10**10`, no
`'x' * 10**10`, no printf widths in the millions.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable
from typing import cast

from jinja2 import StrictUndefined
from jinja2.exceptions import SecurityError
from jinja2.filters import FILTERS as JINJA_FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.tests import TESTS as JINJA_TESTS

from drill.quantities import DIMENSIONS, format_quantity

MAX_RENDERED_CHARS = 50_000
MAX_STRING_PRODUCT = 10_000  # longest string that `*` may build
MAX_INT_BITS = 4_096  # about 1,200 decimal digits

# The functions a card may call in the run under way.
CALLABLE_NOW: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar("callable_now", default=())
_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[a-zA-Z%]")


def _printf_safe(fmt: str) -> None:
    for m in _PRINTF.finditer(fmt):
        for part in (m[1], m[2]):
            if part == "*" or (part and int(part) > 60):
                raise SecurityError(f"format width or precision {part!r} is too large")


def _check_int(value: object) -> object:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise SecurityError("number too large")
    if isinstance(value, complex):
        raise SecurityError("result is not a real number")
    return value


class CardSandbox(ImmutableSandboxedEnvironment):
    """The sandbox in which card templates and expressions run."""

    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def is_safe_attribute(self, obj: object, attr: str, value: object) -> bool:
        # Data only: a method is never handed to a template, so nothing reachable can run.
        if attr.startswith("_") or callable(value):
            return False
        return super().is_safe_attribute(obj, attr, value)

    def is_safe_callable(self, obj: object) -> bool:
        return any(obj is allowed for allowed in CALLABLE_NOW.get())

    def wrap_str_format(self, value: object) -> None:
        return None  # str.format is a method like any other: not reachable

    def call_binop(self, context: object, operator: str, left: object, right: object) -> object:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (list, tuple)):
                    raise SecurityError("repeating a list with * is not allowed")
                if isinstance(seq, str) and isinstance(n, int) and len(seq) * n > MAX_STRING_PRODUCT:
                    raise SecurityError(f"string longer than {MAX_STRING_PRODUCT} characters")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_INT_BITS:
                raise SecurityError("number too large")
        elif operator == "%" and isinstance(left, str):
            _printf_safe(left)
        elif (
            operator == "+"
            and isinstance(left, (str, list, tuple))
            and isinstance(right, type(left))
            and len(left) + len(right) > MAX_RENDERED_CHARS
        ):
            raise SecurityError("value too long")
        return _check_int(self.binop_table[operator](left, right))


def _format_filter(fmt: object, *args: object, **kwargs: object) -> str:
    """printf-style formatting ("%.1f"|format(x)) with small widths only."""
    fmt = str(fmt)
    _printf_safe(fmt)
    if args and kwargs:
        raise SecurityError("format takes positional or keyword arguments, not both")
    return str(fmt % (kwargs or args))


def _qty_filter(value: float | str, unit: str, digits: int = 3) -> str:
    """A quantity for reading: {{ x|qty('bytes') }} -> 2.68 GB (2.50 GiB)."""
    if unit not in DIMENSIONS:
        raise ValueError(f"unknown unit {unit!r}")
    return format_quantity(float(value), unit, digits=max(1, min(int(digits), 12)))


def _thousands_filter(value: object) -> str:
    """Digit grouping: {{ 8192|thousands }} -> 8,192."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}"


_SAFE_FILTERS = (
    "abs",
    "capitalize",
    "d",
    "default",
    "first",
    "float",
    "int",
    "join",
    "last",
    "length",
    "count",
    "lower",
    "max",
    "min",
    "round",
    "string",
    "sum",
    "title",
    "trim",
    "upper",
    "filesizeformat",
)
_SAFE_TESTS = (
    "defined",
    "undefined",
    "none",
    "number",
    "integer",
    "float",
    "string",
    "boolean",
    "divisibleby",
    "even",
    "odd",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "in",
    "true",
    "false",
)
FILTERS: dict[str, Callable[..., object]] = {name: JINJA_FILTERS[name] for name in _SAFE_FILTERS}
FILTERS.update({"format": _format_filter, "qty": _qty_filter, "thousands": _thousands_filter})
TESTS: dict[str, Callable[..., object]] = {name: cast(Callable[..., object], JINJA_TESTS[name]) for name in _SAFE_TESTS}


def _make_environment() -> CardSandbox:
    env = CardSandbox(
        loader=None,
        undefined=StrictUndefined,
        autoescape=False,
        optimized=False,
        keep_trailing_newline=True,
        cache_size=0,
    )
    env.globals.clear()  # no range, dict, lipsum, cycler, joiner or namespace
    env.filters = dict(FILTERS)
    env.tests = dict(TESTS)
    return env


ENV = _make_environment()
