"""The job the judge receives for a kernel card: its files, and the hashes the learner trusted for its deck."""

from __future__ import annotations

import os

from drill.cards.model import Card
from drill.kernel.cards import kernel_files
from drill.kernel.trust import pins
from drill.kernel_shared.protocol import Job


def kernel_job(card: Card, data_dir: str | os.PathLike[str] | None = None) -> Job:
    """What the judge child needs to run this card (plain JSON).

    Raises CardFileError for a card whose files lead outside their folders: the
    judge is never given such a path. Whether the learner has trusted a deck's
    harness is asked separately (drill.kernel.trust.locked_reason); the job
    carries the hashes trusted in `data_dir`, and the judge runs a deck's Python
    only when what it reads matches them (drill.kernel.trust.pins).
    """
    files = kernel_files(card)
    language = card.fields.get("language")
    target_pct = card.fields.get("target_pct")
    job: Job = {
        "card": card.id,
        "language": language if isinstance(language, str) else None,
        "harness": str(files.harness),
        "filename": files.starter.name,
        "target_pct": target_pct if isinstance(target_pct, (int, float)) else None,
    }
    pinned = pins(card, data_dir)
    if "deck_folder" in pinned:
        job["deck_folder"] = pinned["deck_folder"]
    if "trusted" in pinned:
        job["trusted"] = pinned["trusted"]
    return job
