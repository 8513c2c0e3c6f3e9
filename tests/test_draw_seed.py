"""Each showing of a card draws its own numbers; an undo or a restart shows the same draw again."""

from __future__ import annotations

import datetime as dt

from drill.workspace import Workspace

DAY = dt.date(2026, 5, 10)
NOW = dt.datetime(2026, 5, 10, 12)


def first_ledger(workspace: Workspace) -> str:
    return next(card.id for card in workspace.cards.values() if card.kind == "memory_ledger")


def test_a_same_day_repeat_draws_anew_and_an_undo_or_restart_keeps_the_draw(tmp_path):
    workspace = Workspace(tmp_path / "data")
    card_id = first_ledger(workspace)
    session = workspace.review_session(DAY, card_id=card_id)
    store = workspace.store()
    first = session.seed_for(card_id)
    session.grade(store, 3, now=NOW)  # below 4: a same-day repeat, the card's state unchanged
    second = session.seed_for(card_id)
    assert second != first
    session.grade(store, 2, now=NOW + dt.timedelta(minutes=1))  # the repeat graded low: still unchanged
    third = session.seed_for(card_id)
    assert third not in (first, second)
    session.undo(store)
    assert session.seed_for(card_id) == second
    restarted = workspace.review_session(DAY, card_id=card_id)
    assert restarted.seed_for(card_id) == second
    workspace.close()


def test_each_cram_showing_draws_anew(tmp_path):
    workspace = Workspace(tmp_path / "data")
    card_id = first_ledger(workspace)
    store = workspace.store()
    seeds = set()
    for minute in range(3):
        session = workspace.review_session(DAY, card_id=card_id, cram=True)
        seeds.add(session.seed_for(card_id))
        session.grade(store, 5, now=NOW + dt.timedelta(minutes=minute))
    assert len(seeds) == 3
    workspace.close()
