"""SQLModel tables: the latest schema. Older files are brought here by `migrations`."""

from __future__ import annotations

from typing import Optional

from sqlmodel import Field, SQLModel


class Meta(SQLModel, table=True):
    __tablename__ = "meta"
    key: str = Field(primary_key=True)
    value: str


class CardRow(SQLModel, table=True):
    __tablename__ = "card_state"
    card_id: str = Field(primary_key=True)
    content_hash: str = ""
    changed: bool = False
    repetitions: int = 0
    ef: float = 2.5
    interval: int = 0
    due: Optional[str] = Field(default=None, index=True)
    lapses: int = 0
    suspended: bool = False
    buried_until: Optional[str] = None
    leech: bool = False
    last_review_day: Optional[str] = None
    repeat_pending: bool = False
    introduced_on: Optional[str] = None
    reviews: int = 0
    # FSRS's memory of the card, set while FSRS is the active scheduler (see drill.study.scheduling)
    fsrs_stability: Optional[float] = None
    fsrs_difficulty: Optional[float] = None
    fsrs_state: Optional[int] = None
    fsrs_last_review: Optional[str] = None


class ReviewRow(SQLModel, table=True):
    __tablename__ = "review_log"
    id: Optional[int] = Field(default=None, primary_key=True)
    card_id: str = Field(index=True)
    reviewed_at: str
    day: str
    grade: int
    duration_ms: int = 0
    mode: str = "review"
    state_before: str = "{}"
    state_after: str = "{}"
    answer: Optional[str] = None
    topic: Optional[str] = None


class KernelAttemptRow(SQLModel, table=True):
    __tablename__ = "kernel_attempt"
    id: Optional[int] = Field(default=None, primary_key=True)
    card_id: str = Field(index=True)
    at: str
    source: str
    result: str


class SessionRow(SQLModel, table=True):
    __tablename__ = "session"
    id: Optional[int] = Field(default=None, primary_key=True)
    mode: str
    started_at: str
    ended_at: Optional[str] = None
    summary: Optional[str] = None


class SettingRow(SQLModel, table=True):
    __tablename__ = "setting"
    key: str = Field(primary_key=True)
    value: str


class MockRow(SQLModel, table=True):
    __tablename__ = "mock"
    id: Optional[int] = Field(default=None, primary_key=True)
    started_at: str
    ended_at: Optional[str] = None
    minutes: int
    status: str = "running"  # running | finished | time_up | quit | abandoned (no question answered)
    plan: str  # JSON: the planned questions
    score: Optional[float] = None
    report: Optional[str] = None  # JSON: the report as it was when the mock ended


class MockAnswerRow(SQLModel, table=True):
    __tablename__ = "mock_answer"
    id: Optional[int] = Field(default=None, primary_key=True)
    mock_id: int = Field(foreign_key="mock.id")
    position: int
    card_id: str
    topic: str
    kind: str
    budget_s: float
    spent_s: float = 0.0
    status: str  # answered | skipped | unanswered
    score: Optional[float] = None
    answer: Optional[str] = None  # JSON
    missed: Optional[str] = None  # JSON list of rubric points
    follow_up_of: Optional[str] = None
