"""The start: `drill`'s arguments become typed options, and the options a decided start (session, focus, plan,
problems) before any app exists; no argparse Namespace reaches the app."""

import ast
import dataclasses
import datetime as dt
import inspect
from pathlib import Path

import pytest

import drill
from drill import paths
from drill.cli import build_parser
from drill.cli.app import app_options
from drill.config.settings import Settings
from drill.start import AppOptions, AppStart, app_start
from drill.store.store import Store
from drill.study.choice import MockOnlyCard, UnknownCard, UnknownTopic, known_topic_names, with_weakest
from drill.study.records import CardState
from drill.study.sm2 import SM2State
from tests.conftest import FixedClock

NOW = dt.datetime(2026, 5, 10, 12, 0)

TWO_TOPICS = """\
deck: Two topics
cards:
  - id: arch-1
    kind: concept
    topic: gpu-arch
    prompt: "Arch one?"
    answer: "A."
    rubric: ["a"]
    sources: ["FACTS.md"]
  - id: arch-2
    kind: concept
    topic: gpu-arch
    prompt: "Arch two?"
    answer: "B."
    rubric: ["b"]
    sources: ["FACTS.md"]
  - id: serve-1
    kind: concept
    topic: serving
    prompt: "Serve one?"
    answer: "C."
    rubric: ["c"]
    sources: ["FACTS.md"]
"""


def options(tmp_path: Path, deck: Path, **given: object) -> AppOptions:
    return AppOptions(tmp_path / "data", [deck], clock=FixedClock(NOW), **given)  # type: ignore[arg-type]


def test_the_command_line_gives_typed_options(tmp_path):
    argv = ["--data-dir", str(tmp_path), "--topic", "serving", "--topic", "gpu-arch", "--focus-new", "2", "--cram"]
    argv += ["--new-per-day", "7", "--today", "2026-05-12", "--decks", str(tmp_path / "mine.yaml")]
    made = app_options(build_parser(argv)[0].parse_args(argv))
    assert isinstance(made, AppOptions)
    assert made.data_dir == tmp_path
    assert list(made.deck_roots or ()) == [paths.cards_dir(), tmp_path / "mine.yaml"]
    assert made.topics == ("serving", "gpu-arch")
    assert (made.focus_new, made.cram, made.new_per_day) == (2, True, 7)
    assert made.chosen_day == dt.date(2026, 5, 12)
    assert (made.card_id, made.weak, made.mock) == (None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.cram = False  # type: ignore[misc]


def test_a_start_is_decided_without_an_app(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    start = app_start(options(tmp_path, deck, topics=("SERVING",), new_order="deck", new_per_day=5))
    assert isinstance(start, AppStart)
    assert start.focus_topics == ("serving",)  # the decks' spelling
    assert start.session.topics == ("serving",)
    assert start.session.queue == ["serve-1"]
    assert start.today == NOW.date()
    assert start.study.new_per_day == 5 and start.study.new_order == "deck"
    assert dict(start.settings_to_save) == {"new_per_day": "5", "new_order": "deck"}  # flags are saved
    assert start.deck_problems == []


def test_the_day_queue_without_a_focus(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    start = app_start(options(tmp_path, deck, new_order="deck"))
    assert start.focus_topics == ()
    assert sorted(start.session.queue) == ["arch-1", "arch-2", "serve-1"]
    assert start.settings_to_save == {"new_order": "deck"}


def test_today_moves_the_clock_to_that_study_day(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    start = app_start(options(tmp_path, deck, chosen_day=dt.date(2026, 6, 1)))
    assert start.today == dt.date(2026, 6, 1) == start.session.today
    assert start.clock().date() == dt.date(2026, 6, 1)


def test_a_flag_wins_over_the_settings_file_which_wins_over_the_saved_setting(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    data = tmp_path / "data"
    store = Store(data)
    store.set_setting("new_per_day", "3")
    store.close()
    assert app_start(options(tmp_path, deck)).study.new_per_day == 3
    from_file = Settings(new_per_day=4, in_file=frozenset({"new_per_day"}))
    assert app_start(options(tmp_path, deck, settings=from_file)).study.new_per_day == 4
    assert app_start(options(tmp_path, deck, settings=from_file, new_per_day=9)).study.new_per_day == 9


def test_weak_adds_the_weakest_topics_after_those_named(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    data = tmp_path / "data"
    yesterday = NOW.date() - dt.timedelta(days=1)
    store = Store(data)
    for card_id, grade in (("arch-1", 1), ("arch-2", 1), ("serve-1", 5)):
        after = CardState(card_id, sm2=SM2State(1, 2.5 if grade >= 4 else 1.7, 1), due=NOW.date())
        after.introduced_on = after.last_review_day = yesterday
        at = dt.datetime.combine(yesterday, dt.time(10))
        store.record_review(CardState(card_id), after, grade=grade, at=at, day=yesterday, duration_ms=1, mode="review")
    store.close()
    start = app_start(options(tmp_path, deck, weak=1))
    assert start.focus_topics == ("gpu-arch",)  # every grade of gpu-arch failed
    named = app_start(options(tmp_path, deck, topics=("gpu-arch",), weak=1))
    assert named.focus_topics == ("gpu-arch", "serving")  # the weakest topic not named already


def test_the_weakest_topics_come_after_those_named_once_each():
    from drill.study.standing import TopicFigures

    def figures(topic: str, weakness: float) -> TopicFigures:
        return TopicFigures(topic=topic, title=topic, cards=3, practised=True, weakness=weakness)

    ranked = [figures("moe", 0.9), figures("ddp", 0.5), figures("gemm", 0.1)]
    assert with_weakest([], ranked, 2) == ["moe", "ddp"]
    assert with_weakest(["ddp"], ranked, 2) == ["ddp", "moe", "gemm"]
    assert with_weakest(["ddp"], ranked, 0) == ["ddp"]


def test_options_that_name_nothing_are_refused_before_any_app(tmp_path, write_deck):
    deck = write_deck(TWO_TOPICS)
    with pytest.raises(UnknownCard, match=r"did you mean arch-2, arch-1"):
        app_start(options(tmp_path, deck, card_id="arch-l"))
    with pytest.raises(UnknownTopic, match=r"did you mean serving"):
        app_start(options(tmp_path, deck, topics=("servng",)))
    assert known_topic_names(["GPU-ARCH", "gpu-arch"], app_start(options(tmp_path, deck)).workspace.cards) == [
        "gpu-arch"
    ]


def test_a_scenario_card_is_refused_on_its_own(tmp_path):
    scenario = next(c for c in _bundled_cards() if c.kind == "scenario")
    with pytest.raises(MockOnlyCard, match="mock round"):
        app_start(AppOptions(tmp_path / "data", [paths.cards_dir()], clock=FixedClock(NOW), card_id=scenario.id))


def _bundled_cards():
    from tests.conftest import bundled_cards

    return bundled_cards().values()


# -- no Namespace reaches the app ---------------------------------------------------------------
APP_SIDE = [Path(drill.__file__).parent / "ui", Path(drill.__file__).parent / "start.py"]


def _app_side_modules() -> list[Path]:
    files: list[Path] = []
    for place in APP_SIDE:
        files += sorted(place.rglob("*.py")) if place.is_dir() else [place]
    return files


def test_the_ui_and_the_start_never_import_argparse():
    importers = []
    for path in _app_side_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name == "argparse" or name.startswith("argparse.") for name in names):
                importers.append(path.name)
    assert len(_app_side_modules()) > 10  # the scan sees the UI's modules
    assert importers == []


def test_the_app_factory_and_the_start_take_typed_records():
    import drill.start
    import drill.ui.app

    def annotation(function: object, name: str) -> object:
        return inspect.signature(function).parameters[name].annotation  # type: ignore[arg-type]

    assert annotation(drill.ui.app.make_app, "options") == "AppOptions"
    assert annotation(drill.ui.app.run_app, "options") == "AppOptions"
    assert annotation(drill.ui.app.DrillApp.__init__, "start") == "AppStart"
    assert annotation(drill.start.app_start, "options") == "AppOptions"
    for field in dataclasses.fields(AppOptions):
        assert "Namespace" not in str(field.type)
