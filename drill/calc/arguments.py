"""What `drill calc` sub-commands share: argument types, the row format, and how a command is added.

A calculator module may offer sub-commands with a function
`commands(command: Command) -> None` that calls `command(name, handler, help)`
and adds arguments to the parser it returns; `drill.cli.calc` calls it. A
handler takes the parsed arguments and returns (rows, title): rows map an
output key to (value, how to show it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from drill.calc.dtypes import dtype_name
from drill.calc.sizes import parse_quantity

# How each output key is shown in the table.
BYTES = "bytes"
COUNT = "count"
FRACTION = "fraction"
SECONDS = "seconds"
RATIO = "ratio"
TEXT = "text"


class OneLineParser(argparse.ArgumentParser):
    """A parser whose usage errors are one line on stderr and exit status 2, and whose options are written out
    in full (no prefix of an option stands for it, as in every drill parser)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        # Report stray arguments here, in one line, rather than leave them to the top-level parser.
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


# Counts are read in SI: 8k is 8,000. A context window called "8k" holds 8,192 tokens: write 8192 for it.
TOKENS_HELP = "token count: 8192, or 8k for 8,000 (an '8k context' window is 8192 tokens)"

# Above any real model, batch, token count or memory (an exabyte; 10^18 tokens): a slip of the exponent.
LARGEST = 1e18


def _in_range(value: float, text: str) -> None:
    if value != value or value > LARGEST:  # NaN, inf, or out of this world
        raise argparse.ArgumentTypeError(f"{text} is beyond any real model, batch or memory (the limit is 1e18)")


def _non_negative(text: str, *, count: bool) -> float:
    """A quantity (count=False: sizes such as 1GiB) or a count (7.5B), 0 or more, as argparse wants it."""
    try:
        value = parse_quantity(text, count=count)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    _in_range(value, text)
    return value


def quantity(text: str) -> float:
    return _non_negative(text, count=False)


def _typed_as(text: str, expect: str, what: str, also: tuple[str, ...] = ()) -> float:
    """`text` read as a quantity of dimension `expect` (or one of `also`, or a bare number), as argparse wants."""
    from drill import quantities

    try:
        q = quantities.parse_quantity(text, expect=expect)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if q.dimension is not None and q.dimension not in (expect, *also):
        raise argparse.ArgumentTypeError(f"{text.strip()!r} is {quantities.DIMENSION_WORDS[q.dimension]}, not {what}")
    return q.value


def bandwidth(text: str) -> float:
    """Bytes per second, typed as a rate ("2TB/s", "2 TB/s") or as the bytes moved each second ("2TB")."""
    value = _typed_as(text, "bytes_per_second", "a bandwidth", also=("bytes",))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    _in_range(value, text)
    return value


def share(text: str) -> float:
    """A fraction from 0 to 1, typed as 0.8 or as 80%."""
    value = _typed_as(text, "fraction", "a fraction")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a fraction from 0 to 1 (0.8 or 80%), got {text}")
    return value


def params_count(text: str) -> float:
    return _non_negative(text, count=True)


def whole(text: str) -> int:
    try:
        value = parse_quantity(text, count=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    _in_range(value, text)
    if not value.is_integer() or value < 0:
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text}")
    return int(value)


def dtype(text: str) -> str:
    try:
        return dtype_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# rows map key -> (value, how to show it)
Rows = dict[str, tuple[float | str, str]]
Handler = Callable[[argparse.Namespace], tuple[Rows, str]]
Command = Callable[[str, Handler, str], argparse.ArgumentParser]


def add_model(
    parser: argparse.ArgumentParser, *, required: bool = True, experts: bool = False, reads: str = ""
) -> None:
    """--model, with the names it takes listed in its help (`experts`: only the mixture-of-experts models)."""
    from drill.calc.data import load_models

    names = [name for name, entry in load_models().items() if not experts or "experts" in entry]
    what = f" ({reads})" if reads else ""
    parser.add_argument(
        "--model",
        required=required,
        metavar="NAME",
        help=f"a model in cards/data/models.yaml{what}: {', '.join(names)}",
    )
