"""Storage: one SQLite file; rows converted to the domain's records (drill.study.records), never the reverse.

- `reader`: every read that writes nothing, with the stdlib sqlite3 (the first paint, the progress
  figures, the mock commands' and the browser's looks); no SQLModel to import.
- `store`: the Store (SQLModel), the one place that writes; `mocks`: its mock-interview rows.
- `writes`: the one path the app writes through (the workspace hands it out), which keeps the data
  derived from the log current; `replay_cache`: that derived data, the log's replay and its digest.
- `rows`: card_state and review_log rows to records and back, for the reader and the Store alike.
- `tables`, `migrations`: the latest schema, and the steps that bring an older file to it.
- `search`: the browser's full-text index, an FTS5 table in memory ranked by bm25.
- `errors`: the one error raised, in words the learner can act on.
"""
