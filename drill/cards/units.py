"""Numbers in card answers: the units a card may declare, reading and showing quantities, and checking them.

Reading and showing live in drill.quantities, the one reader of quantities
that `drill calc` uses too; checking an answer with its hints lives in
drill.cards.number_check. This module gathers what card code imports.
"""

from __future__ import annotations

from drill.cards.number_check import NumberVerdict, check_number
from drill.quantities import DIMENSIONS, MAX_INPUT, Quantity, QuantityError, format_quantity, parse_quantity

# The units a card answer may declare (see docs/cards.md): every dimension of a quantity.
CARD_UNITS: tuple[str, ...] = DIMENSIONS

__all__ = [
    "CARD_UNITS",
    "MAX_INPUT",
    "NumberVerdict",
    "Quantity",
    "QuantityError",
    "check_number",
    "format_quantity",
    "parse_quantity",
]
