"""Cards and review history out of drill and back: Anki packages, CSV files, the review log.

`cli` is the command (`drill export`, `drill import reviews`); `flat` turns a card of any kind into front and
back; `anki` and `csvio` write and read the files.
"""
