import datetime as dt
import json

from drill.cli import main
from drill.sm2 import SM2State
from drill.store.records import CardState
from drill.store.store import Store


def test_stats_json_counts(tmp_path, concept_deck, capsys):
    deck = concept_deck(4)
    data = tmp_path / "data"
    store = Store(data)
    today = dt.date.today() - dt.timedelta(days=1)
    for cid, grade in (("c00", 5), ("c01", 1), ("c01", 4)):
        after = CardState(cid, sm2=SM2State(1, 2.5, 1, today), introduced_on=today - dt.timedelta(3))
        store.record_review(CardState(cid), after, grade=grade, at=dt.datetime.now(), day=today, duration_ms=1, mode="review")
    store.close()
    assert main(["stats", "--json", "--data-dir", str(data), "--decks", str(deck)]) == 0
    report = json.loads(capsys.readouterr().out)
    bundled = report["cards"] - 4
    assert bundled >= 0
    assert report["reviews"] == 3
    assert report["due_today"] == 2
    topic = next(t for t in report["topics"] if t["topic"] == "gpu-arch")
    assert topic["reviews"] == 3 and abs(topic["retention"] - 2 / 3) < 1e-9
    assert report["weak_topics"] == ["gpu-arch"]


def test_stats_text(tmp_path, concept_deck, capsys):
    assert main(["stats", "--data-dir", str(tmp_path), "--decks", str(concept_deck(2))]) == 0
    out = capsys.readouterr().out
    assert "due today: 0" in out and "gpu-arch" in out
