"""The workspace's one Store: an app that quits at once closes it only after the review's preparation is done."""

from __future__ import annotations

import datetime as dt
import threading
import time

from drill.store.store import Store
from drill.workspace import Workspace


def test_a_close_waits_for_the_store_being_prepared(tmp_path, monkeypatch):
    workspace = Workspace(tmp_path / "data", [])
    real_sync = Store.sync_hashes
    inside = threading.Event()
    events: list[str] = []

    def slow_sync(self, hashes):
        inside.set()
        time.sleep(0.3)  # the background opener, mid-way through its writes
        events.append("prepared")
        return real_sync(self, hashes)

    monkeypatch.setattr(Store, "sync_hashes", slow_sync)
    opening = workspace.open_writes({"new_per_day": "5"}, {"c": "h"}, dt.datetime.now())  # its own thread
    assert inside.wait(5)
    workspace.close()  # the app quitting at once, from its own thread
    events.append("closed")
    assert opening.done()
    assert events == ["prepared", "closed"]
    assert workspace._store is None
