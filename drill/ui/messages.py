"""Messages the screens post, named for what happened."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # only an annotation here: these messages load without the kernel judge's modules
    from drill.kernel.verdict import Verdict
    from drill.kernel_shared.protocol import JudgeEvent


@dataclass
class StoreOpened(Message):
    """The database is open (in a worker, after the first paint); some cards changed since last seen."""

    changed_cards: int


@dataclass
class JudgeReported(Message):
    """The judge streamed an event (compiled, a case, a timing...)."""

    event: JudgeEvent


@dataclass
class KernelFinished(Message):
    """A kernel run ended with this verdict for this source."""

    verdict: Verdict
    source: str


@dataclass
class MockAsked(Message):
    """The learner asked for a mock interview (its setup screen)."""


@dataclass
class StatsAsked(Message):
    """The learner asked for the stats screen."""


@dataclass
class BrowserAsked(Message):
    """The learner asked for the card browser."""


@dataclass
class PracticeAsked(Message):
    """The learner asked to practise some topics now (all when empty), on schedule or as cram; or one card
    (`card_id`)."""

    topics: tuple[str, ...] = ()
    weak: int | None = None
    cram: bool = False
    card_id: str | None = None


@dataclass
class UnsuspendAsked(Message):
    """The learner asked to put a suspended card back into the queues."""

    card_id: str
