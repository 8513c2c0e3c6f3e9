"""Calculators behind the numeric cards: parameter counts, memory ledgers, traffic and time bounds."""
