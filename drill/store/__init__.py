"""Storage: SQLModel tables over one SQLite file, and the Store that owns every statement."""
