"""Calculators behind the numeric cards: parameter counts, memory ledgers, traffic and time bounds.

Each module is one calculator with its published source (`parameter_count`, `ledger`, `zero`, `activations`, `kv`,
`flops`, `gemm`, `roofline`, `inference`, `collectives`, `pipeline`, `context`, `moe`, `capacity`,
`reliability`); `data` holds the model and GPU figures, `dtypes`, `sizes` and `checks` what they share,
`expressions` what card templates may call, and `arguments` what a calculator needs to offer a `drill calc`
command (the command itself is drill.cli.calc).
"""
