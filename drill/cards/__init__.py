"""Cards: the schema of each kind, the YAML loader and answer checking.

- `loader`, `salvage`, `yaml_guards`, `model`: decks into validated cards with `path:line` on each problem,
  a broken card costing only itself, and guards against hostile YAML.
- `kinds`: each kind's keys and deeper check.
- `templating` with `param_specs`, `rendering`, `template_records`, `evaluation`, `allowlist`, `sandbox`: parameterised
  cards, from drawing parameters to running their templates in the sandbox.
- `ledger_check`: the deck check of a memory ledger card.
- `checking` with `shape_reading`, `shapes`, `shape_check`, `choices`, `number_check`, `units`: checking what
  the learner typed against each kind's answer.
- `grading`: the suggested grade.
"""
