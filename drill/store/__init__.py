"""Storage: SQLModel tables over one SQLite file, and the Store that owns every statement.

- `store`: the Store, the one place that reads and writes; `mocks`: its mock-interview rows.
- `tables`, `migrations`: the latest schema, and the steps that bring an older file to it.
- `records`: the plain records handed to the domain.
- `fast`, `progress`: read-only looks with the stdlib sqlite3 (the first paint, the progress figures).
- `card_log`: the browser's read-only looks at the review log (a card's reviews, the cards of a day).
- `search`: the browser's full-text index, an FTS5 table in memory ranked by bm25.
- `errors`: the one error raised, in words the learner can act on.
"""
