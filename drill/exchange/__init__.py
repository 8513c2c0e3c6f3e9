"""Cards and review history out of drill and back: Anki packages, CSV files, the review log."""
