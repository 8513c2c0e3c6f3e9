"""Calculators behind the numeric cards: parameter counts, memory ledgers, traffic and time bounds.

Each module is one calculator with its published source (`params`, `ledger`, `zero`, `activations`, `kv`,
`flops`, `gemm`, `roofline`, `inference`, `collectives`, `pipeline`, `context`, `moe`, `capacity`,
`reliability`); `data` holds the model and GPU figures, `units` and `checks` what they share,
`expressions` what card templates may call, and `cli`, `moe_commands`, `arguments` make up `drill calc`.
"""
