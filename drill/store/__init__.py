"""Storage: SQLModel tables over one SQLite file, and the Store that owns every statement.

- `store`: the Store, the one place that reads and writes; `mocks`: its mock-interview rows.
- `tables`, `migrations`: the latest schema, and the steps that bring an older file to it.
- `records`: the plain records handed to the domain.
- `fast`, `progress`: read-only looks with the stdlib sqlite3 (the first paint, the progress figures).
- `errors`: the one error raised, in words the learner can act on.
"""
