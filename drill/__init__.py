"""drill: spaced-repetition practice for AI-infrastructure interviews."""

__version__ = "0.1.0"
